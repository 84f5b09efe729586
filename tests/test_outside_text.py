"""Text from outside reaches the terminal as text (issue 42 §6): a server's error with escape
codes (``{"error": "\\x1b[31mred\\x1b[0m"}``) is printed with its control characters as visible
escapes, never as the codes themselves, and a name like ``[/]`` is printed as it is, never
read as Rich markup; the one place the CLI prints an error, and a listing of stored
datasets, each shown so."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from haf_tui.inference.server import ServerError
from haf_tui.vocabulary import first_line, shown_text
from tests.test_server_hostile import MESSAGES, MODEL, SETTINGS

HOSTILE = '{"error": "\x1b[31mred\x1b[0m [/] \x9b2J\x07"}'


def test_control_characters_are_shown_as_escapes() -> None:
    assert shown_text("a\x1b[31mb\x00\x7f\x9b\u200bé") == "a\\x1b[31mb\\x00\\x7f\\x9b\u200bé"
    assert shown_text("one\ntwo\tthree") == "one\\x0atwo\\x09three"
    assert shown_text("one\ntwo\tthree", keep_lines=True) == "one\ntwo\tthree"
    assert first_line(ServerError("\x1b[2Jcleared\nsecond")) == "\\x1b[2Jcleared"


class _Refusing(BaseHTTPRequestHandler):
    """Names its model, then refuses every completion with :data:`HOSTILE` (HTTP 400)."""

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send(200, json.dumps({"data": [{"id": MODEL, "owned_by": "stand-in"}]}).encode())

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self._send(400, HOSTILE.encode())


def test_a_server_s_error_text_is_one_line_without_its_escape_codes() -> None:
    from haf_tui.defaults import embedded_model_path
    from haf_tui.inference.server import Endpoint
    from haf_tui.inference.server_backend import ServerBackend

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        backend = ServerBackend(embedded_model_path(), [Endpoint(url, 1)], n_ctx=2048, check=False)
        with pytest.raises(ServerError) as raised:
            backend.generate(MESSAGES, SETTINGS)
        backend.close()
    finally:
        server.shutdown()
        server.server_close()
    line = str(raised.value)
    assert f"{url} refused a request: HTTP 400" in line, line
    assert "\\x1b[31mred\\x1b[0m [/] \\x9b2J\\x07" in line
    assert not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in line), line


def test_the_cli_prints_an_error_as_escaped_text_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import haf_tui.cli as cli

    def refused(*args: object) -> int:
        raise ServerError(f"http://127.0.0.1:1 refused a request: HTTP 400 {HOSTILE}")

    monkeypatch.setattr(cli, "_dispatch", refused)
    assert cli.main(["runs"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1, error
    assert "\x1b" not in error and "\x9b" not in error and "\x07" not in error
    assert error.startswith("error: http://127.0.0.1:1 refused a request: HTTP 400")
    assert '{"error": "\\x1b[31mred\\x1b[0m [/] \\x9b2J\\x07"}' in error


def test_a_dataset_named_like_markup_is_listed_and_shown_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from haf_tui.cli import main

    csv = tmp_path / "posts.csv"
    csv.write_text("id,text\n1,\x1b[2Jyou are kind\n2,a second text\n")
    db = str(tmp_path / "haf.duckdb")
    assert main(["--db", db, "datasets", "import", str(csv), "--name", "[/]"]) == 0
    for argv in (["datasets", "list"], ["datasets", "show", "[/]"]):
        capsys.readouterr()
        assert main(["--db", db, *argv]) == 0
        out = capsys.readouterr().out
        assert "[/]" in out and "\x1b" not in out, out
    assert "\\x1b[2Jyou are kind" in out


async def test_the_workbench_shows_a_worker_s_error_as_escaped_text(tmp_path: Path) -> None:
    """The one place the workbench shows an error (a notification): ``[/]`` as text, not
    markup (a MarkupError ended the app), ESC as ``\\x1b``."""
    from haf_tui.tui import create_app
    from haf_tui.tui.messages import WorkFailed

    app = create_app(tmp_path / "absent.duckdb")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.post_message(WorkFailed("dataset [/] refused: \x1b[31mred\x1b[0m"))
        for _ in range(5):  # (the toast is drawn after the message is handled)
            await pilot.pause(0.05)
        messages = [n.message for n in app._notifications]
        assert "dataset [/] refused: \\x1b[31mred\\x1b[0m" in messages, messages
        shown = [n for n in app._notifications if "[/]" in n.message]
        assert shown and not any(n.markup for n in shown)  # (a toast reads it as text)
        assert app.is_running
