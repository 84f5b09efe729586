"""Which server ``haf serve --engine`` starts (``cli/serve_command.py``), without starting
one: ``llama-cpp-python`` is that server even where llama-server is found, ``auto`` is
llama-server when found, else llama-cpp-python's, and ``llama-server`` asked for and not
found is one line (never a silent fall back to the other server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from haf_tui.cli import main
from haf_tui.cli.serve_command import _llama_server
from haf_tui.inference import serve_llama_server

FOUND = Path("/opt/llama/llama-server")


def test_the_engine_asked_for_is_the_one_served_with(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serve_llama_server, "find_llama_server", lambda: FOUND)
    assert _llama_server("llama-cpp-python") is None
    assert _llama_server("auto") == _llama_server("llama-server") == FOUND
    monkeypatch.setattr(serve_llama_server, "find_llama_server", lambda: None)
    assert _llama_server("auto") is None


def test_llama_server_asked_for_and_not_found_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(serve_llama_server, "find_llama_server", lambda: None)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    assert main(["serve", "--model", str(model), "--engine", "llama-server", "--port", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --engine llama-server: no llama-server found")
    assert len(err.splitlines()) == 1
