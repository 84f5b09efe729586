"""The rationale_gradient stage's model and its kept word scores (``gradient_stage``), with a
stand-in for the torch model: one model in memory at a time, the scores kept per (text,
words, label) so that the plan replaying an instance's answers never runs the passes again,
and the oldest kept scores dropped first when the cap is reached."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest

from haf_tui.config import ModelSettings, RunConfig
from haf_tui.methods.rationales.suite import attribution_model, gradient_stage

REPO = Path(__file__).resolve().parents[1]
REAL_ATTRIBUTOR = gradient_stage._attributor
"""The stage's own loader (conftest.py stands in for it in every test; these test it)."""


class FakeAttributor:
    """Scores that say which label they were computed for; every model made and every pass
    asked are counted."""

    made: ClassVar[list[str]] = []
    passes: ClassVar[list[tuple[str, str]]] = []
    closed: ClassVar[list[str]] = []

    def __init__(self, path: str, chat_format: str | None = None) -> None:
        FakeAttributor.made.append(path)
        self.path = path

    def close(self) -> None:
        FakeAttributor.closed.append(self.path)

    def attribute(
        self, text: str, words: Sequence[str], spelling: str, methods: Sequence[str]
    ) -> Any:
        FakeAttributor.passes.append((text, spelling))
        mark = 1.0 if spelling == "toxic" else 2.0
        scores = {m: [mark] * len(words) for m in methods}
        return SimpleNamespace(scores=scores, torch_logprob=-mark, prompt_ids=(1, 2))


@pytest.fixture(autouse=True)
def fake_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(gradient_stage, "_attributor", REAL_ATTRIBUTOR)
    monkeypatch.setattr(attribution_model, "GgufAttributor", FakeAttributor)
    monkeypatch.setattr(gradient_stage, "_exiting", False)  # (a test calls the exit hook)
    FakeAttributor.made, FakeAttributor.passes, FakeAttributor.closed = [], [], []
    gradient_stage.release()
    yield
    gradient_stage.release()


def attribute_of(model: str) -> Any:
    config = RunConfig(model=ModelSettings(path=model)).with_settings(
        "rationales", attributions=("saliency",)
    )
    attribute = gradient_stage.run_attribute(config)
    assert attribute is not None
    return attribute


def test_the_kept_scores_are_those_of_the_label_asked() -> None:
    attribute = attribute_of("/models/a.gguf")
    toxic = attribute("you idiot", ["you", "idiot"], "toxic")
    other = attribute("you idiot", ["you", "idiot"], "non-toxic")
    assert toxic.scores == {"saliency": [1.0, 1.0]} and toxic.torch_logprob == -1.0
    assert other.scores == {"saliency": [2.0, 2.0]} and other.torch_logprob == -2.0
    again = attribute("you idiot", ["you", "idiot"], "toxic")  # (the plan's replay)
    assert again is toxic
    assert FakeAttributor.passes == [("you idiot", "toxic"), ("you idiot", "non-toxic")]


def test_one_model_in_memory_at_a_time() -> None:
    first, second = attribute_of("/models/a.gguf"), attribute_of("/models/b.gguf")
    first("t", ["t"], "toxic")
    second("t", ["t"], "toxic")
    assert list(gradient_stage._loaded) == [("/models/b.gguf", None)]  # (a's was dropped)
    first("u", ["u"], "toxic")  # (a campaign's lane back on a: loaded again)
    assert FakeAttributor.made == ["/models/a.gguf", "/models/b.gguf", "/models/a.gguf"]


def test_the_least_recently_used_scores_are_dropped_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(gradient_stage, "KEPT_RESULTS", 2)
    attribute = attribute_of("/models/a.gguf")
    for text in ("one", "two", "one", "three"):  # (one used again: two is the oldest)
        attribute(text, [text], "toxic")
    assert len(FakeAttributor.passes) == 3
    attribute("one", ["one"], "toxic")
    attribute("three", ["three"], "toxic")
    assert len(FakeAttributor.passes) == 3  # (both kept)
    attribute("two", ["two"], "toxic")
    assert [text for text, _ in FakeAttributor.passes] == ["one", "two", "three", "two"]


def test_a_model_dropped_released_or_left_at_exit_is_closed() -> None:
    """Its llama.cpp vocabulary freed when dropped, not when garbage-collected: one left to
    the interpreter's exit was freed after llama-cpp-python's bindings ("Exception ignored in:
    Llama.__del__ ... TypeError")."""
    first, second = attribute_of("/models/a.gguf"), attribute_of("/models/b.gguf")
    first("t", ["t"], "toxic")
    assert FakeAttributor.closed == []
    second("t", ["t"], "toxic")  # (a's dropped for b's)
    assert FakeAttributor.closed == ["/models/a.gguf"]
    gradient_stage.release()
    assert FakeAttributor.closed == ["/models/a.gguf", "/models/b.gguf"]
    first("u", ["u"], "toxic")
    gradient_stage._release_at_exit()
    assert FakeAttributor.closed == ["/models/a.gguf", "/models/b.gguf", "/models/a.gguf"]
    assert gradient_stage._loaded == {}
    made = len(FakeAttributor.made)
    assert second("v", ["v"], "toxic") is None  # (a pass's thread still going: none loaded)
    assert len(FakeAttributor.made) == made and gradient_stage._loaded == {}


def test_the_model_still_loaded_when_the_process_exits_is_closed_before_the_exit(
    tmp_path: Path,
) -> None:
    """A real interpreter exiting with a model in the stage (``haf run``'s end): closed by the
    exit hook, while llama-cpp-python's bindings are still whole."""
    said = tmp_path / "closed"
    script = (
        "from haf_tui.methods.rationales.suite import gradient_stage\n"
        "class Loaded:\n"
        "    def close(self):\n"
        f"        open({str(said)!r}, 'w').write('closed')\n"
        "gradient_stage._loaded[('m.gguf', None)] = Loaded()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=120)
    assert said.read_text() == "closed"
