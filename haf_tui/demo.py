"""The headless main job until the staged pipeline lands: JUSTIFY on the built-in sample.

For each text: generate the JUSTIFY answer with per-token raw logprobs, parse the stance,
the decision sentence and the reasons (with character spans), then score the decision
confidence, every reason's TokenSAR confidence, SoS and DiS with the similarity model.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib.resources import files

from haf_tui.config import DecodingSettings
from haf_tui.inference.base import Generation, GenerationBackend
from haf_tui.metrics import diversity_of_support, strength_of_support
from haf_tui.parsing import JustifyParse, parse_justify
from haf_tui.prompts import justify_messages
from haf_tui.scoring import SpanScore, score_span
from haf_tui.similarity import SimilarityModel


@dataclass(frozen=True)
class SampleText:
    """One built-in sample text and the label it was written with."""

    sample_id: str
    text: str
    label: str


@dataclass
class JustifyResult:
    """JUSTIFY of one text: the generation, its parse and its scores."""

    sample: SampleText
    generation: Generation
    parse: JustifyParse
    decision: SpanScore
    reasons: list[SpanScore] = field(default_factory=list)
    sos: float = math.nan
    dis: float = math.nan


def load_sample_texts() -> list[SampleText]:
    """The built-in sample: short texts written for this project (toxic, not, ambiguous)."""
    raw = files("haf_tui.data").joinpath("sample.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in raw.splitlines() if line.strip()]
    return [SampleText(row["id"], row["text"], row["label"]) for row in rows]


def generation_seed(run_seed: int, *parts: str) -> int:
    """A per-generation seed from the run's seed and what is generated (stable across runs,
    independent of order, so a resumed or reordered run samples the same text)."""
    return zlib.crc32("/".join(parts).encode("utf-8"), run_seed) & 0x7FFFFFFF


def justify_one(
    sample: SampleText,
    backend: GenerationBackend,
    similarity: SimilarityModel,
    settings: DecodingSettings,
    *,
    explicit: bool = True,
) -> JustifyResult:
    """Generate, parse and score JUSTIFY for one text."""
    seed = generation_seed(settings.seed, sample.sample_id, "justify")
    generation = backend.generate(
        justify_messages(sample.text, explicit=explicit), settings.model_copy(update={"seed": seed})
    )
    parse = parse_justify(generation.text)
    text, tokens = generation.text, generation.tokens
    decision = score_span(text, tokens, parse.decision_start, parse.decision_end, similarity)
    result = JustifyResult(sample, generation, parse, decision)
    result.reasons = [score_span(text, tokens, r.start, r.end, similarity) for r in parse.reasons]
    if parse.reasons:
        confidences = [score.confidence for score in result.reasons]
        reason_texts = [r.text for r in parse.reasons]
        input_sims = similarity.similarities([(r, sample.text) for r in reason_texts])
        result.sos = strength_of_support(confidences, input_sims)
        result.dis = diversity_of_support(confidences, _similarity_matrix(similarity, reason_texts))
    return result


def _similarity_matrix(similarity: SimilarityModel, texts: Sequence[str]) -> list[list[float]]:
    size = len(texts)
    pairs = [(texts[i], texts[j]) for i in range(size) for j in range(i + 1, size)]
    values = iter(similarity.similarities(pairs))
    matrix = [[1.0] * size for _ in range(size)]
    for i in range(size):
        for j in range(i + 1, size):
            matrix[i][j] = matrix[j][i] = next(values)
    return matrix


def run_justify_demo(
    backend: GenerationBackend,
    similarity: SimilarityModel,
    settings: DecodingSettings,
    *,
    limit: int | None = None,
    on_result: Callable[[JustifyResult], None] | None = None,
) -> Iterator[JustifyResult]:
    """JUSTIFY over the built-in sample, yielding each text's result as it finishes."""
    samples = load_sample_texts()[:limit] if limit else load_sample_texts()
    for sample in samples:
        result = justify_one(sample, backend, similarity, settings)
        if on_result is not None:
            on_result(result)
        yield result
