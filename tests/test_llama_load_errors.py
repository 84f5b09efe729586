"""A GGUF llama.cpp refuses is named by llama.cpp's error line: its log collector keeps ggml's
warning and error levels (3 and 4; info is 2), so the line is not lost behind the loader's
info lines ("llama.cpp could not load …: print_info: file size = 92.10 MiB" before)."""

from __future__ import annotations

from pathlib import Path

import pytest

from haf_tui.defaults import embedded_model_path
from haf_tui.inference.base import InferenceError
from haf_tui.inference.llama_model import LlamaModel


@pytest.mark.real_model
def test_a_gguf_of_an_unknown_architecture_is_named_by_llama_cpp_s_error(tmp_path: Path) -> None:
    whole = embedded_model_path().read_bytes()
    key = whole.index(b"general.architecture")
    value = whole.index(b"llama", key + len(b"general.architecture"))
    renamed = tmp_path / "renamed.gguf"  # (the same length: every offset stays)
    renamed.write_bytes(whole[:value] + b"llamz" + whole[value + 5 :])
    with pytest.raises(InferenceError) as raised:
        LlamaModel(renamed, n_ctx=256, n_gpu_layers=0)
    assert str(raised.value) == (
        f"llama.cpp could not load {renamed}: llama_model_load: error loading model: "
        "unknown model architecture: 'llamz'"
    )
