"""The ``rationale_gradient`` stage's model, once per model file in a process (a run, or a
campaign's cells of one model): the first instance whose ŷ is known loads it
(:class:`~haf_tui.methods.rationales.suite.attribution_model.GgufAttributor`); a model that
cannot be loaded (too large for the free memory, an architecture transformers' loader does
not know) is one warning line, once, and the stage is skipped for the run, nothing else lost.
The word scores of a (text, label) are kept for the plan that replays the answers at the
instance's end, so the passes run once an instance. torch is not imported until a run asks
for the stage."""

from __future__ import annotations

import atexit
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final, Protocol, runtime_checkable

from haf_tui.config import RunConfig
from haf_tui.defaults import embedded_model_path
from haf_tui.methods.rationales.core.attribution import GRADIENT_METHODS
from haf_tui.methods.rationales.settings import attributions_of, rationale_settings
from haf_tui.vocabulary import HafError

GRADIENT = "rationale_gradient"
"""The stage's name (its timings, its table ``rationales_gradient``)."""
KEPT_RESULTS: Final = 1024
"""Word scores kept in memory for the instance's end (the plan replayed by ``finish``)."""

EXIT_WAIT_SECONDS: Final = 30.0
"""How long the interpreter's exit waits for a pass in flight before closing the model."""

log = logging.getLogger("haf_tui.rationales")


class Gradients:
    """One instance's attribution: each method's word scores, torch's log-probability of the
    label's first spelling (T) and the classification prompt's token ids the pass read."""

    __slots__ = ("prompt_ids", "scores", "seconds", "torch_logprob")

    def __init__(
        self,
        scores: dict[str, list[float]],
        torch_logprob: float,
        seconds: float,
        prompt_ids: Sequence[int] = (),
    ):
        self.scores = scores
        self.torch_logprob = torch_logprob
        self.seconds = seconds
        self.prompt_ids = tuple(prompt_ids)


@runtime_checkable
class Attributor(Protocol):
    """What the stage asks of the loaded model
    (:class:`~haf_tui.methods.rationales.suite.attribution_model.GgufAttributor`)."""

    def attribute(
        self, text: str, words: Sequence[str], spelling: str, methods: Sequence[str]
    ) -> WordScores: ...


class WordScores(Protocol):
    """Each method's word scores, T and the prompt's token ids."""

    @property
    def scores(self) -> dict[str, list[float]]: ...

    @property
    def torch_logprob(self) -> float: ...

    @property
    def prompt_ids(self) -> tuple[int, ...]: ...


Attribute = Callable[[str, Sequence[str], str], "Gradients | None"]
"""(text, its word tokens, ŷ's first spelling) → the instance's attribution (None: skipped)."""

_lock = threading.Lock()
_loaded: dict[tuple[str, str | None], object] = {}
"""The model file (and chat format) → its attributor, or the error that refused it."""
_results: OrderedDict[tuple[str, str | None, str, str, tuple[str, ...]], Gradients | None] = (
    OrderedDict()
)
"""The passes made (None: a text skipped, its line given once), for the instance's replay."""
load_seconds: dict[str, float] = {}
"""Seconds each model took to load (``make bench``)."""
_exiting = False
"""The interpreter is exiting: no model is loaded any more (a pass's thread still going)."""


def model_file(config: RunConfig) -> Path:
    """The GGUF the run reads (``--model``'s, also on ``--server``; the embedded one without)."""
    return Path(config.model.path).expanduser() if config.model.path else embedded_model_path()


def _attributor(key: tuple[str, str | None]) -> object:
    """The loaded attributor of ``key``, loading it the first time (or the error)."""
    import time

    from haf_tui.methods.rationales.suite.attribution_model import GgufAttributor

    if key not in _loaded and _exiting:  # (loaded now, it would be freed after the bindings)
        return HafError("attributions skipped: the process is exiting")
    if key not in _loaded:
        _drop_loaded()  # (one model at a time: a campaign goes model by model)
        started = time.perf_counter()
        try:
            _loaded[key] = GgufAttributor(key[0], key[1])
            load_seconds[key[0]] = time.perf_counter() - started
        except HafError as exc:
            _loaded[key] = exc
            log.warning("%s", exc)
        except Exception as exc:  # (a third-party loader: whatever it raises skips the stage)
            refused = HafError(
                f"attributions skipped: {Path(key[0]).name} could not be opened in torch: "
                f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
            )
            _loaded[key] = refused
            log.warning("%s", refused)
    return _loaded[key]


def run_attribute(config: RunConfig) -> Attribute | None:
    """The run's attribution function (None: the run computes no gradient method)."""
    methods = tuple(m for m in attributions_of(rationale_settings(config)) if m in GRADIENT_METHODS)
    if not methods:
        return None
    key = (str(model_file(config)), config.model.chat_format)

    def attribute(text: str, words: Sequence[str], spelling: str) -> Gradients | None:
        import time

        found_key = (*key, text, spelling, tuple(words))
        with _lock:
            if found_key in _results:
                _results.move_to_end(found_key)
                return _results[found_key]
            attributor = _attributor(key)
            if isinstance(attributor, BaseException):
                return None
            assert isinstance(attributor, Attributor)
            started = time.perf_counter()
            try:
                found = attributor.attribute(text, words, spelling, methods)
            except (ValueError, RuntimeError) as exc:  # (that instance only: a text its
                # tokens do not spell, a prompt too long for the free memory, a pass torch
                # could not make, out of memory included; the replay asks again: kept)
                log.warning("attributions skipped for one text: %s", exc)
                result = None
            else:
                seconds = time.perf_counter() - started
                result = Gradients(found.scores, found.torch_logprob, seconds, found.prompt_ids)
            _results[found_key] = result
            while len(_results) > KEPT_RESULTS:
                _results.popitem(last=False)
            return result

    return attribute


def _drop_loaded() -> None:
    """Close the loaded attributor (its llama.cpp vocabulary freed now) and forget it."""
    for loaded in _loaded.values():
        close = getattr(loaded, "close", None)
        if callable(close):
            close()
    _loaded.clear()


def release() -> None:
    """Close and drop the loaded model, and the kept scores (tests; a long-lived process)."""
    with _lock:
        _drop_loaded()
        _results.clear()


@atexit.register
def _release_at_exit() -> None:
    """Close the loaded model before the interpreter's exit tears its bindings down (freed
    after them, llama.cpp's model said "Exception ignored in: Llama.__del__"); a pass still
    running in another thread past the wait leaves it to the exit; one that asks for a model
    after this loads none."""
    global _exiting
    _exiting = True
    if _lock.acquire(timeout=EXIT_WAIT_SECONDS):
        try:
            _drop_loaded()
        finally:
            _lock.release()
