"""How fast ``haf rescore`` goes against g's own encoder (issue 44 §4): a finished HAF run of
the scripted answers the rescore tests use (4 instances through every stage), re-scored with
a bi-encoder (the bundled all-MiniLM-L6-v2 unless ``--rescore-model`` names another), in
sentences embedded per second, against the ceiling: sentence-transformers' ``encode`` on
exactly the re-score's distinct sentences, in one batched call. Beside it, each ``rescore``
round's own ``encode`` calls are timed: ``rescore / its own encoder calls`` is the re-score's
pace against its encoder's in the same second (the ceiling's call and the re-score's are
apart by a round, and under load the encoder's pace moves 2–5× between them). It is the share
of the re-score's time spent inside ``encode``: it counts the re-score's own work (reads,
writes, the suite's Python) and leaves out whatever its encoding costs beyond the ceiling's
one call (batches of 16 instances, padding, more calls); the issue's measure is the ceiling's
ratio, reported first.

Arms, interleaved (:func:`benchmarks.method.compare`): ``rescore`` (as ``haf rescore`` runs:
scored ahead, 16 instances a batch), ``rescore as asked`` (``score_ahead=0``: each pair when
the suite asks for it, the code before issue 44) and ``ceiling``. Each re-score arm starts
with g's caches empty and writes a derived run of its own; the model is loaded once, outside
the rounds. The goal: ``rescore`` at ≥ 0.8× the ceiling's pace. ``python -m benchmarks --only
rescore`` runs this part alone.
"""

from __future__ import annotations

import itertools
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.method import compare, ratio_summary

GOAL = 0.8
"""The re-score's pace, at least this fraction of the encoder ceiling's (issue 44 §4)."""


def bench_rescore(model: str, rounds: int) -> dict[str, Any]:
    """The comparison's JSON: each arm's sentences/s per round and median, and the ratios."""
    from haf_tui.pipeline.rescore import rescore_run
    from haf_tui.similarity import BiEncoderSimilarity, CachedSimilarity, load_similarity
    from haf_tui.store import open_store
    from tests.support.rescore_runs import save_tiny_dataset, scripted_run

    folder = Path(tempfile.mkdtemp(prefix="haf-rescore-bench-"))
    store = open_store(folder / "haf.duckdb")
    save_tiny_dataset(store)
    loaded = load_similarity(model, cached=False)
    assert isinstance(loaded, BiEncoderSimilarity)
    encoder = loaded._model
    scripted_run(store, "parent", CachedSimilarity(loaded, symmetric=True))
    sentences: list[str] = []
    counter = itertools.count()

    class Recording:
        """The encoder, writing down every sentence it is given."""

        def encode(self, texts: Sequence[str], **options: Any) -> Any:
            sentences.extend(texts)
            return encoder.encode(texts, **options)

    encoding: list[float] = []  # (the re-score arm's own encoder calls, each round's total)

    class Timed:
        """The encoder, its calls timed."""

        def encode(self, texts: Sequence[str], **options: Any) -> Any:
            started = time.perf_counter()
            try:
                return encoder.encode(texts, **options)
            finally:
                encoding[-1] += time.perf_counter() - started

    def rescore(score_ahead: int, record: bool = False) -> float:
        name = f"{model}#{next(counter)}"  # (a derived run of its own each time)
        timed = score_ahead > 0 and not record
        if timed:
            encoding.append(0.0)
        used = Recording() if record else Timed() if timed else encoder
        g = CachedSimilarity(BiEncoderSimilarity(name, encoder=used), symmetric=True)
        started = time.perf_counter()
        made = f"rescore-{next(counter)}"  # (an id of its own: two made in a second may clash)
        rescore_run(store, "parent", g, score_ahead=score_ahead, new_run_id=lambda: made)
        return time.perf_counter() - started

    rescore(16, record=True)  # (warm-up, and the sentences it embeds)
    distinct = list(dict.fromkeys(sentences))

    def ceiling() -> float:
        started = time.perf_counter()
        encoder.encode(
            distinct,
            batch_size=64,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return time.perf_counter() - started

    def pace(seconds: Callable[[], float]) -> Callable[[], float]:
        return lambda: len(distinct) / seconds()

    arms = {
        "rescore": pace(lambda: rescore(16)),
        "rescore as asked": pace(lambda: rescore(0)),
        "ceiling": pace(ceiling),
    }
    result = compare(
        arms,
        rounds,
        {
            "rescore / ceiling": ("rescore", "ceiling"),
            "as asked / ceiling": ("rescore as asked", "ceiling"),
        },
    )
    paces = result["figures"]["rescore"]
    inside = [len(distinct) / seconds for seconds in encoding]  # (each round's, as paces)
    result["rescore / its own encoder calls"] = ratio_summary(paces, inside)
    result.update(
        {
            "model": model,
            "unit": "sentences/s",
            "sentences": len(sentences),
            "distinct sentences": len(distinct),
            "goal": GOAL,
        }
    )
    return result


def rescore_markdown(result: dict[str, Any]) -> list[str]:
    """The comparison as a Markdown table."""
    lines = [
        f"Re-score against g's encoder ({result['model']}; {result['distinct sentences']} "
        f"distinct sentences, {result['rounds']} rounds, load {result['load_before']} → "
        f"{result['load_after']}):",
        "",
        "| arm | sentences/s per round | median |",
        "|---|---|---:|",
    ]
    for name, figures in result["figures"].items():
        lines.append(
            f"| {name} | {', '.join(f'{f:.0f}' for f in figures)} | {result['median'][name]:.0f} |"
        )
    lines += ["", "| ratio | median | min–max | IQR |", "|---|---:|---|---|"]
    for name in ("rescore / ceiling", "as asked / ceiling", "rescore / its own encoder calls"):
        summary = result[name]
        lines.append(
            f"| {name} | {summary['median']} | {summary['spread'][0]}–{summary['spread'][1]} | "
            f"{summary['iqr'][0]}–{summary['iqr'][1]} |"
        )
    return lines
