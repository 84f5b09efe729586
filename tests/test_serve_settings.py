"""``haf serve``'s settings checked before anything loads (issue 42 §5, §6): a context larger
than the model's is one line, as in ``haf run`` (llama-cpp-python's server allocated 12 GiB
for ``--n-ctx 65536`` and died with a traceback), at the largest allowed size and one past
it; and the ready line's URL is one a client can use, IPv6 addresses in brackets."""

from __future__ import annotations

from dataclasses import replace

import pytest

from haf_tui.cli import main
from haf_tui.defaults import embedded_model_path
from haf_tui.inference.base import InferenceError
from haf_tui.inference.context_size import largest_context
from haf_tui.inference.gguf import read_gguf_info
from haf_tui.inference.serve import ServeSettings, check_serve_settings, ready_url


def test_serve_refuses_a_context_larger_than_the_model_s_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from haf_tui.inference import serve

    def loaded(*args: object) -> None:
        raise AssertionError("the model was loaded (for 12 GiB of logits)")

    monkeypatch.setattr(serve, "create_serve_app", loaded)
    argv = ["serve", "--model", "embedded", "--n-ctx", "65536", "--port", "0"]
    assert main([*argv, "--engine", "llama-cpp-python"]) == 2
    said = capsys.readouterr()
    error = said.err.strip().splitlines()
    assert len(error) == 1 and said.out == "", said
    assert error[0].startswith("error: --n-ctx 65,536 is too large:"), error
    assert "give at most" in error[0]


def test_the_largest_context_passes_and_one_more_token_is_refused() -> None:
    largest = largest_context(read_gguf_info(embedded_model_path()))
    settings = ServeSettings(embedded_model_path(), 0, 1, largest, 1)
    check_serve_settings(settings, check_offload=False)
    with pytest.raises(InferenceError, match=f"--n-ctx {largest + 1:,} is too large"):
        check_serve_settings(replace(settings, n_ctx=largest + 1), check_offload=False)


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1", "http://127.0.0.1:8080"),
        ("0.0.0.0", "http://127.0.0.1:8080"),
        ("", "http://127.0.0.1:8080"),
        ("localhost", "http://localhost:8080"),
        ("::1", "http://[::1]:8080"),
        ("::", "http://[::1]:8080"),
        ("[::1]", "http://[::1]:8080"),
        ("fd00::5", "http://[fd00::5]:8080"),
    ],
)
def test_the_ready_line_s_url_is_one_a_client_can_use(host: str, url: str) -> None:
    import httpx

    assert ready_url(host, 8080) == url
    assert httpx.URL(url).port == 8080  # (a URL httpx reads, with its port)


@pytest.mark.parametrize("layers", [-1, 1])
def test_gpu_layers_without_gpu_offload_are_one_line(
    monkeypatch: pytest.MonkeyPatch, layers: int
) -> None:
    from haf_tui.inference import serve

    monkeypatch.setattr(serve, "gpu_offload_supported", lambda: False)
    settings = ServeSettings(embedded_model_path(), layers, 1, 512, 1)
    with pytest.raises(InferenceError, match=rf"^--n-gpu-layers {layers}: this llama.cpp build"):
        check_serve_settings(settings)
    check_serve_settings(replace(settings, n_gpu_layers=0))
