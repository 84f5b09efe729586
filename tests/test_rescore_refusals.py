"""A re-score whose g would mean nothing is refused in one line and leaves nothing behind
(issue 42 §6): a model that scores NaN, a bi-encoder passed as a cross-encoder (a head of
random weights), a device g cannot run on; a NaN met inside the run fails it, never
"finished" with NULL metrics. On the tiny random models of tests/support/tiny_similarity.py."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from haf_tui.cli import main
from haf_tui.pipeline.rescore import RescoreError, load_rescore_similarity, rescore_run
from haf_tui.similarity import (
    CachedSimilarity,
    SimilarityError,
    SimilarityModel,
    SimilarityRefusedError,
    check_device,
    load_similarity,
)
from haf_tui.store import Store
from haf_tui.store.derived_runs import children_of
from tests.support.tiny_similarity import nan_bi_encoder, tiny_bi_encoder, tiny_cross_encoder
from tests.test_rescore import models, stored

__all__ = ["models", "stored"]  # (the fixtures)


@pytest.fixture(scope="module")
def odd_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A cross-encoder saved whole, one with two labels, a bi-encoder whose config was
    renamed to a classifier (no head in its weights), and a bi-encoder that scores NaN."""
    folder = tmp_path_factory.mktemp("odd-g")
    renamed = folder / "renamed"
    shutil.copytree(tiny_bi_encoder(folder, 5), renamed)
    config = json.loads((renamed / "config.json").read_text())
    config.update(architectures=["BertForSequenceClassification"], num_labels=1)
    config.pop("id2label", None)
    config.pop("label2id", None)
    (renamed / "config.json").write_text(json.dumps(config))
    return {
        "cross": tiny_cross_encoder(folder, 1),
        "two_labels": tiny_cross_encoder(folder, 1, num_labels=2),
        "renamed": renamed,
        "nan": nan_bi_encoder(folder),
        "bi": tiny_bi_encoder(folder, 6),
    }


def _one_line(text: str) -> str:
    assert "\n" not in text.strip() and "Traceback" not in text
    return text


def test_a_cross_encoder_needs_its_trained_head(odd_models: dict[str, Path]) -> None:
    cross = load_similarity(str(odd_models["cross"]), "cross-encoder")
    scores = cross.similarities([("a cat", "a dog"), ("x", "x")])
    assert all(0.0 <= s <= 1.0 for s in scores)  # (a whole cross-encoder loads and scores)
    with pytest.raises(SimilarityRefusedError) as bi:
        load_similarity(str(odd_models["bi"]), "cross-encoder")
    assert "is not a cross-encoder: its config names BertModel" in _one_line(str(bi.value))
    with pytest.raises(SimilarityRefusedError) as headless:
        load_similarity(str(odd_models["renamed"]), "cross-encoder")
    line = _one_line(str(headless.value))
    assert "has no trained scoring head" in line and "classifier.weight" in line
    with pytest.raises(SimilarityRefusedError, match="gives 2 scores a pair"):
        load_similarity(str(odd_models["two_labels"]), "cross-encoder")


def test_a_nan_score_is_an_error_not_a_value(odd_models: dict[str, Path]) -> None:
    nan = load_similarity(str(odd_models["nan"]))
    with pytest.raises(SimilarityRefusedError) as refused:
        nan.similarities([("a cat", "a dog")])
    assert "scored the pair ('a cat', 'a dog') nan" in _one_line(str(refused.value))
    with pytest.raises(SimilarityRefusedError):  # (uncached: the model's own check)
        load_similarity(str(odd_models["nan"]), cached=False).similarities([("a", "b")])

    class Scripted:
        """Scores 0.5, but NaN or inf for the pairs named."""

        name = "scripted"

        def __init__(self, bad: dict[tuple[str, str], float]):
            self.bad = bad

        def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
            return [self.bad.get(pair, 0.5) for pair in pairs]

    for value in (math.nan, math.inf, -math.inf):
        cached = CachedSimilarity(Scripted({("b", "c"): value}))
        with pytest.raises(SimilarityRefusedError, match="scored the pair"):
            cached.similarities([("a", "b"), ("b", "c")])
        assert cached.similarities([("a", "b")]) == [0.5]  # (nothing bad was cached)


def test_a_device_g_cannot_run_on_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    check_device("cpu")
    check_device(None)
    for device, says in (
        ("meta", "holds no weights"),
        ("nonsense", "is not a torch device"),
        ("cuda:x", "is not a torch device"),
    ):
        with pytest.raises(SimilarityRefusedError, match=says) as refused:
            check_device(device)
        _one_line(str(refused.value))
    with monkeypatch.context() as patched:  # (this machine's GPUs, whatever they are)
        patched.setattr(torch.cuda, "is_available", lambda: False)
        with pytest.raises(SimilarityRefusedError, match="torch sees no cuda device"):
            check_device("cuda")
        patched.setattr(torch.cuda, "is_available", lambda: True)
        patched.setattr(torch.cuda, "device_count", lambda: 2)
        check_device("cuda")
        check_device("cuda:1")
        with pytest.raises(SimilarityRefusedError, match="torch sees 2 cuda device"):
            check_device("cuda:2")


def test_refused_gs_leave_no_derived_run(
    stored: Store, models: tuple[Path, Path], odd_models: dict[str, Path]
) -> None:
    with pytest.raises(RescoreError, match="scored the pair") as nan:
        rescore_run(stored, "parent", load_similarity(str(odd_models["nan"])))
    _one_line(str(nan.value))
    with pytest.raises(RescoreError, match="is not a cross-encoder") as bi:
        load_rescore_similarity(str(odd_models["bi"]), "cross-encoder")
    assert "pass the folder" not in str(bi.value)  # (its own line, not the loading hint)
    with pytest.raises(RescoreError, match="holds no weights"):
        load_rescore_similarity(str(models[1]), device="meta")
    assert children_of(stored, "parent") == []


@pytest.mark.parametrize(("score_ahead", "after"), [(0, 3), (2, 1)])
def test_a_nan_inside_the_run_fails_the_derived_run(
    stored: Store, models: tuple[Path, Path], score_ahead: int, after: int
) -> None:
    from haf_tui.methods.haf.suite.suite import HAF  # noqa: F401  (the suite's g calls)

    real = load_similarity(str(models[1]), cached=False)

    class NanOnThe:
        """The real g, but NaN for every pair once ``after`` calls went through."""

        name = "nan-later"

        def __init__(self, after: int):
            self.calls, self.after = 0, after

        def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
            self.calls += 1
            scores = real.similarities(pairs)
            return scores if self.calls <= self.after else [math.nan] * len(scores)

    with pytest.raises(RescoreError) as failed:
        rescore_run(stored, "parent", CachedSimilarity(NanOnThe(after)), score_ahead=score_ahead)
    line = _one_line(str(failed.value))
    (derived,) = children_of(stored, "parent")
    assert f"re-score {derived.run_id} of run parent failed at instance" in line
    run = stored.get_run(derived.run_id)
    assert run.status == "failed" and "scored the pair" in str(run.error)


class OddAfter:
    """The real g (``real``) for the first ``after`` calls, then ``odd`` of its scores."""

    name = "odd-later"

    def __init__(
        self, real: SimilarityModel, after: int, odd: Callable[[list[float]], list[float]]
    ):
        self.real, self.after, self.odd, self.calls = real, after, odd, 0

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.calls += 1
        scores = self.real.similarities(pairs)
        return scores if self.calls <= self.after else self.odd(scores)


def test_a_g_failing_on_the_first_batch_leaves_no_derived_run(
    stored: Store, models: tuple[Path, Path]
) -> None:
    """The first batch's pairs are g's probe: a g that scores one pair but not them (NaN for
    a batch, or a score short) is refused in one line before a derived run is made."""
    real = load_similarity(str(models[1]), cached=False)
    for odd, says in (
        (lambda scores: [math.nan] * len(scores) if len(scores) > 1 else scores, "scored the pair"),
        (lambda scores: scores[:-1], "scores for"),
    ):
        with pytest.raises(RescoreError, match=says) as refused:
            rescore_run(stored, "parent", CachedSimilarity(OddAfter(real, 0, odd)), score_ahead=2)
        _one_line(str(refused.value))
        assert children_of(stored, "parent") == []


def test_a_score_short_inside_the_run_fails_the_derived_run(
    stored: Store, models: tuple[Path, Path]
) -> None:
    """A batch past the first that g answers with a score too few: the run failed, in one
    line, not stopped with a traceback."""
    real = load_similarity(str(models[1]), cached=False)
    short = CachedSimilarity(OddAfter(real, 1, lambda scores: scores[:-1]))
    with pytest.raises(RescoreError) as failed:
        rescore_run(stored, "parent", short, score_ahead=2)
    line = _one_line(str(failed.value))
    (derived,) = children_of(stored, "parent")
    assert f"re-score {derived.run_id} of run parent failed at instances" in line
    run = stored.get_run(derived.run_id)
    assert run.status == "failed" and "scores for" in str(run.error)


def test_the_command_line_refuses_them_in_one_line(
    stored: Store, odd_models: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = stored.path
    stored.close()
    for extra, says in (
        (["--similarity", str(odd_models["bi"]), "--similarity-kind", "cross-encoder"],
         "is not a cross-encoder"),
        (["--similarity", str(odd_models["bi"]), "--similarity-device", "meta"],
         "holds no weights"),
        (["--similarity", str(odd_models["nan"])], "scored the pair"),
    ):  # fmt: skip
        assert main(["--db", str(path), "rescore", "parent", *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error:") and says in _one_line(err)
    from haf_tui.store import open_store

    with open_store(path) as store:
        assert children_of(store, "parent") == []
    assert issubclass(SimilarityRefusedError, SimilarityError)
