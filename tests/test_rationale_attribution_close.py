"""A rationales attributor that fails to load after llama.cpp opened its vocabulary frees it
then (tests/test_rationale_attributions.py has the attributor's numbers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.tiny_gguf import write_tiny_llama


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_llama(tmp_path_factory.mktemp("tiny") / "tiny-llama.gguf")


def test_a_torch_load_that_fails_closes_the_vocabulary_it_opened_first(
    tiny_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """llama.cpp's vocabulary is opened before the weights go to torch: a torch load that
    fails (the stage's one warning line) frees it then, not at the interpreter's exit."""
    from haf_tui.inference.llama import LlamaCppBackend
    from haf_tui.methods.rationales.suite import attribution_model

    vocabularies: list[LlamaCppBackend] = []

    class Recorded(LlamaCppBackend):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            vocabularies.append(self)

    def refused(path: Path, device: str, dtype: Any) -> Any:
        raise RuntimeError("torch could not open it")

    monkeypatch.setattr(attribution_model, "LlamaCppBackend", Recorded)
    monkeypatch.setattr(attribution_model, "load_torch_model", refused)
    with pytest.raises(RuntimeError, match="torch could not open it"):
        attribution_model.GgufAttributor(tiny_gguf)
    (vocabulary,) = vocabularies
    assert vocabulary.llm._model.model is None  # (llama.cpp's model freed)


def test_a_warm_up_pass_that_fails_closes_the_vocabulary(
    tiny_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warm-up pass follows the load: one torch could not make (the stage's one warning
    line) frees llama.cpp's vocabulary then too."""
    from haf_tui.inference.llama import LlamaCppBackend
    from haf_tui.methods.rationales.suite import attribution_model

    vocabularies: list[LlamaCppBackend] = []

    class Recorded(LlamaCppBackend):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            vocabularies.append(self)

    def refused(*_: Any) -> Any:
        raise RuntimeError("the warm-up pass failed")

    monkeypatch.setattr(attribution_model, "LlamaCppBackend", Recorded)
    monkeypatch.setattr(attribution_model, "load_torch_model", lambda *_: object())
    monkeypatch.setattr(attribution_model, "prompt_tokens", refused)
    with pytest.raises(RuntimeError, match="the warm-up pass failed"):
        attribution_model.GgufAttributor(tiny_gguf)
    (vocabulary,) = vocabularies
    assert vocabulary.llm._model.model is None  # (llama.cpp's model freed)
