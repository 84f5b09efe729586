"""The run's GGUF opened in torch for the ``rationale_gradient`` stage
(``docs/methods/rationales.md``, attribution): transformers' GGUF loader dequantises its
weights into an ordinary causal LM (eager attention, so the weights come back), on the GPU
when torch sees one, else the CPU; llama.cpp's own tokenizer and chat template (the same
file, vocabulary only) give the prompt's token ids and where each lies in the text, so torch
sees exactly the ids llama.cpp scored. torch, transformers and gguf are imported only here,
only when a run asks for the stage.

Before loading, the memory the weights need (parameters × bytes of the dtype) is checked
against what is free on the device; a model that cannot fit, or an architecture the loader
does not know, is an :class:`AttributionUnavailableError` with one line saying which and what to
change: the run goes on without the stage.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from haf_tui.inference.base import InferenceError
from haf_tui.inference.gguf import read_gguf_info
from haf_tui.inference.llama import LlamaCppBackend
from haf_tui.methods.classify.core.labels import classify_messages
from haf_tui.methods.rationales.core.attribution import (
    GRADIENT_METHODS,
    Span,
    word_scores,
    word_spans,
)
from haf_tui.methods.rationales.suite.gradients import (
    TokenAttributions,
    pass_bytes,
    token_attributions,
)
from haf_tui.vocabulary import HafError

WARM_UP_TEXT = "a short text to warm the model up"
"""The text of the pass :class:`GgufAttributor` makes right after its load (its
classification prompt, as the stage's passes have it)."""
SKIP_HINT = "leave attention, saliency and input_x_gradient out of --rationale-attributions"


class AttributionUnavailableError(HafError):
    """The stage cannot run on this model: one line saying why and what to change."""


class PromptTooLongError(HafError, ValueError):
    """One text's pass would not fit in the free memory: that text is skipped (one line)."""


@dataclass(frozen=True)
class PromptTokens:
    """The classification prompt's token ids as llama.cpp tokenizes them, and each token's
    character span in the text under test (None: a token outside it)."""

    ids: tuple[int, ...]
    spans: tuple[Span | None, ...]


@dataclass(frozen=True)
class WordAttributions:
    """Each method's normalised word scores, T, torch's log-probability of the label's
    spelling after the prompt, and the prompt's token ids torch was given (llama.cpp's)."""

    scores: dict[str, list[float]]
    torch_logprob: float
    prompt_ids: tuple[int, ...]


def _piece_spans(pieces: Sequence[bytes], segment: str) -> list[Span] | None:
    """Character spans of tokens in ``segment`` from their byte pieces (a tokenizer that
    prefixes a space, SentencePiece's, is allowed for); None when they do not spell it."""
    encoded = segment.encode("utf-8")
    joined = b"".join(pieces)
    shift = 0
    if joined != encoded:
        if joined == b" " + encoded:
            shift = 1
        else:
            return None
    spans: list[Span] = []
    position = 0
    for piece in pieces:
        start, end = max(position - shift, 0), max(position + len(piece) - shift, 0)
        position += len(piece)
        spans.append(
            (
                len(encoded[:start].decode("utf-8", errors="ignore")),
                len(encoded[:end].decode("utf-8", errors="ignore")),
            )
        )
    return spans


def prompt_tokens(vocab: LlamaCppBackend, text: str) -> PromptTokens:
    """The classification prompt of ``text`` rendered and tokenized as llama.cpp does, with
    each token's span in ``text`` (the text inside the prompt's triple backticks)."""
    rendered = vocab.render(classify_messages(text))
    ids = vocab.tokenize_prompt(rendered)
    spans: list[Span | None] = []
    consumed = 0
    found = False
    for segment in rendered.segments:
        seg_ids = vocab.llm.tokenize(
            segment.text.encode("utf-8"), add_bos=False, special=not segment.plain
        )
        marker = f"```{text}```"
        where = segment.text.find(marker) if segment.plain and not found else -1
        if where < 0:
            spans += [None] * len(seg_ids)
        else:
            found = True
            pieces = [vocab.token_piece(i) for i in seg_ids]
            located = _piece_spans(pieces, segment.text)
            if located is None:
                raise ValueError("the prompt's tokens do not spell it: no attribution")
            start, end = where + 3, where + 3 + len(text)
            spans += [
                (max(a, start) - start, min(b, end) - start) if a < end and start < b else None
                for a, b in located
            ]
        consumed += len(seg_ids)
    lead: list[Span | None] = [None] * (len(ids) - consumed)  # (a BOS llama.cpp adds)
    spans = lead + spans
    if not found or len(spans) != len(ids):
        raise ValueError("the text is not where the prompt should hold it: no attribution")
    return PromptTokens(tuple(ids), tuple(spans))


def free_bytes(device: str) -> int:
    """Memory free on ``device`` (``cuda``: the GPU's, else the machine's available memory)."""
    if device == "cuda":
        import torch

        free, _ = torch.cuda.mem_get_info()
        return int(free)
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))


def parameter_count(path: Path) -> int:
    """The parameters of a GGUF's tensors."""
    from gguf import GGUFReader

    return sum(int(tensor.n_elements) for tensor in GGUFReader(path).tensors)


def supported_architectures() -> list[str]:
    """The architectures transformers' GGUF loader opens."""
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES

    return list(GGUF_SUPPORTED_ARCHITECTURES)


class GgufAttributor:
    """The run's GGUF in torch and llama.cpp's tokenizer of it.

    ``warm_up``: one pass over :data:`WARM_UP_TEXT` right after the load (its
    ``warm_up_seconds``), so the first instance's pass does not pay torch's first-call costs
    (its kernels picked and allocated, lazy imports): a run's first post took 23 s where the
    others took 0.75 s (issue 44). The pass changes nothing a later one reads: its gradient is
    taken of the input embeddings alone (no parameter's ``.grad``), its hooks and
    checkpointing are undone on the way out."""

    def __init__(self, path: str | Path, chat_format: str | None = None, *, warm_up: bool = True):
        path = Path(path)
        try:
            info = read_gguf_info(path)
        except InferenceError as exc:
            raise AttributionUnavailableError(f"attributions: {exc}") from exc
        try:
            import torch
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise AttributionUnavailableError(f"attributions need torch: {exc}") from exc
        if info.architecture not in supported_architectures():
            raise AttributionUnavailableError(
                f"attributions skipped: transformers' GGUF loader does not open the "
                f"{info.architecture!r} architecture of {path.name} ({SKIP_HINT})"
            )
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        dtype = torch.float32
        needed = parameter_count(path) * 4
        free = free_bytes(self.device)
        if needed > free and self.device == "cuda" and needed // 2 <= free:
            dtype, needed = torch.bfloat16, needed // 2
        if needed > free:
            raise AttributionUnavailableError(
                f"attributions skipped: {path.name} needs {needed / 2**30:.1f} GiB in torch "
                f"({self.device}), {free / 2**30:.1f} GiB is free ({SKIP_HINT}, or free memory)"
            )
        self.path = path
        try:
            self.vocab = LlamaCppBackend(path, chat_format=chat_format, vocab_only=True)
        except InferenceError as exc:
            raise AttributionUnavailableError(f"attributions skipped: {exc}") from exc
        try:
            self.model = load_torch_model(path, self.device, dtype)
        except BaseException:  # (the vocabulary is freed now, not at the interpreter's exit)
            self.vocab.close()
            raise
        self.bytes_per_value = 2 if dtype == torch.bfloat16 else 4
        self.lock = threading.Lock()
        self.warm_up_seconds: float | None = None
        if warm_up:
            try:
                self._warm_up()
            except BaseException:  # (a pass torch could not make: the vocabulary freed now)
                self.vocab.close()
                raise

    def _warm_up(self) -> None:
        """One pass over :data:`WARM_UP_TEXT`, timed (``warm_up_seconds``)."""
        started = time.perf_counter()
        try:
            self.attribute(WARM_UP_TEXT, WARM_UP_TEXT.split(), "toxic", GRADIENT_METHODS)
        except PromptTooLongError:  # (no room beside the weights: each text says so)
            return
        self.warm_up_seconds = time.perf_counter() - started

    def close(self) -> None:
        """Free llama.cpp's vocabulary now (the torch model goes with the last reference):
        a Llama freed only at the interpreter's exit fails there, its bindings already gone."""
        self.vocab.close()

    def check_pass_memory(self, positions: int, target_tokens: int) -> None:
        """Refuse (one line) a pass over ``positions`` tokens that needs more than the free
        memory beside the weights (:func:`~.gradients.pass_bytes`)."""
        needed = pass_bytes(self.model.config, positions, target_tokens, self.bytes_per_value)
        free = free_bytes(self.device)
        if needed > free:
            raise PromptTooLongError(
                f"its prompt of {positions} tokens needs {needed / 2**30:.1f} GiB for the pass "
                f"in torch ({self.device}), {free / 2**30:.1f} GiB is free"
            )

    def token_attributions(self, tokens: PromptTokens, spelling: str) -> TokenAttributions:
        """The three methods' token scores for ``spelling`` teacher-forced after the prompt
        (a pass too large for the free memory: :class:`PromptTooLongError`)."""
        target = self.vocab.forced_tokens(spelling)
        with self.lock:
            self.check_pass_memory(len(tokens.ids) + len(target) - 1, len(target))
            return token_attributions(self.model, tokens.ids, target)

    def attribute(
        self, text: str, words: Sequence[str], spelling: str, methods: Sequence[str]
    ) -> WordAttributions:
        """Each method's word scores of ``text`` (words: its word tokens) for ``spelling``."""
        tokens = prompt_tokens(self.vocab, text)
        found = self.token_attributions(tokens, spelling)
        in_text = [(i, span) for i, span in enumerate(tokens.spans) if span is not None]
        spans = word_spans(text, words)
        scores = {
            method: word_scores(
                [found.of(method)[i] for i, _ in in_text], [span for _, span in in_text], spans
            )
            for method in methods
        }
        return WordAttributions(scores, found.target_logprob, tokens.ids)


def load_torch_model(path: Path, device: str, dtype: Any) -> Any:
    """``AutoModelForCausalLM.from_pretrained(folder, gguf_file=name)`` with eager attention,
    in eval mode on ``device``."""
    import transformers.modeling_gguf_pytorch_utils  # noqa: F401  (its bar, below)
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    loader = sys.modules.get("transformers.modeling_gguf_pytorch_utils")
    quiet = loader is not None and hasattr(loader, "tqdm")
    if quiet:  # (its dequantising bar would break a progress display: no option turns it off)
        bar, loader.tqdm = loader.tqdm, _no_bar  # type: ignore[union-attr]
    try:
        model: Any = AutoModelForCausalLM.from_pretrained(
            str(path.parent), gguf_file=path.name, dtype=dtype, attn_implementation="eager"
        )
    except (ValueError, KeyError, NotImplementedError) as exc:
        raise AttributionUnavailableError(
            f"attributions skipped: transformers could not open {path.name}: "
            f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__} ({SKIP_HINT})"
        ) from exc
    finally:
        if quiet:
            loader.tqdm = bar  # type: ignore[union-attr]
    return model.to(device).eval()


def _no_bar(iterable: Any, *args: Any, **kwargs: Any) -> Any:
    """tqdm without the bar."""
    return iterable
