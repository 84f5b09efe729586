"""The headless main job end to end through the real model and the real similarity model."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from haf_tui.cli import main
from haf_tui.config import DecodingSettings
from haf_tui.demo import generation_seed, justify_one, load_sample_texts

pytestmark = [pytest.mark.real_model, pytest.mark.real_similarity]


def test_builtin_sample_has_each_kind_of_text() -> None:
    samples = load_sample_texts()
    assert 12 <= len(samples) <= 24
    assert {s.label for s in samples} == {"toxic", "non-toxic", "ambiguous"}
    assert len({s.sample_id for s in samples}) == len(samples)


def test_generation_seed_is_stable_and_distinct() -> None:
    assert generation_seed(17, "s01", "justify") == generation_seed(17, "s01", "justify")
    assert generation_seed(17, "s01", "justify") != generation_seed(17, "s02", "justify")
    assert generation_seed(17, "s01", "justify") != generation_seed(18, "s01", "justify")


def test_justify_one_scores_every_parsed_span(embedded_backend: Any, minilm: Any) -> None:
    sample = load_sample_texts()[0]
    result = justify_one(sample, embedded_backend, minilm, DecodingSettings(max_new_tokens=96))
    assert result.generation.tokens
    assert len(result.reasons) == len(result.parse.reasons)
    for reason, score in zip(result.parse.reasons, result.reasons, strict=True):
        assert score.token_indices, reason.text
        assert len(score.nll) == len(score.relevance) == len(score.token_indices)
        assert 0.0 < score.confidence <= 1.0
    if result.parse.decision_sentence:
        assert 0.0 < result.decision.confidence <= 1.0
    if result.parse.reasons:
        assert 0.0 <= result.sos <= 1.0
    if len(result.parse.reasons) < 2:
        assert math.isnan(result.dis)


def test_haf_demo_runs_on_the_embedded_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--limit", "1", "--max-new-tokens", "48", "--n-gpu-layers", "0"]) == 0
    out = capsys.readouterr().out
    assert "chat format gemma" in out and "stance" in out and "s01" in out


def test_haf_demo_bad_model_is_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "broken.gguf").write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x01\x00" * 20)
    assert main(["demo", "--model", str(tmp_path / "broken.gguf")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "GGUF" in err and "\n" not in err
