"""The demo's texts stored apart from the built-in sample, and ``haf run --demo --file`` taking
the file (``benchmarks.demo_kernels --file`` runs the demo's settings on other texts so).

A store that holds a run of the built-in sample (an older demo's, or ``--dataset sample``) keeps
it when ``haf run --demo`` stores its own texts: one dataset each, by its own id and name. With
a scripted model: which texts the embedded model takes past JUSTIFY is the CPU's say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from haf_tui.cli import main
from haf_tui.datasets import builtin_sample, demo_texts
from haf_tui.pipeline.models import LoadedModels
from haf_tui.store import open_store
from tests.test_demo_scripted import ScriptedDemoModel
from tests.test_scheduler import FlatSimilarity


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> None:
    import haf_tui.pipeline.runs as runs

    def scripted_models(config: object, similarity: object = None) -> LoadedModels:
        return LoadedModels(ScriptedDemoModel(), FlatSimilarity())

    monkeypatch.setattr(runs, "load_models", scripted_models)


def _stored(db: Path) -> tuple[dict[str, tuple[str, int]], list[tuple[str, list[str]]]]:
    """The datasets (id: name, instances) and each run's dataset with its evaluated texts."""
    with open_store(db, read_only=True) as store:
        _, datasets = store.query(
            "SELECT d.dataset_id, d.name, count(i.instance_id) FROM datasets d "
            "JOIN instances i USING (dataset_id) GROUP BY ALL"
        )
        _, runs = store.query(
            "SELECT r.dataset_id, list(i.text ORDER BY i.position) FROM runs r "
            "JOIN instance_results x USING (run_id) "
            "JOIN instances i ON i.dataset_id = r.dataset_id AND i.instance_id = x.instance_id "
            "GROUP BY r.run_id, r.dataset_id, r.created_at ORDER BY r.created_at"
        )
    return {d: (name, n) for d, name, n in datasets}, [(d, list(texts)) for d, texts in runs]


def test_a_demo_in_a_store_with_the_sample_stores_its_own_texts_apart(
    tmp_path: Path, scripted: None
) -> None:
    db = str(tmp_path / "haf.duckdb")
    assert main(["--db", db, "run", "--dataset", "sample", "--limit", "2"]) == 0
    assert main(["--db", db, "run", "--demo"]) == 0
    datasets, runs = _stored(Path(db))
    sample, demo = builtin_sample(), demo_texts()
    assert datasets == {
        sample.dataset_id: (sample.name, len(sample.instances)),
        demo.dataset_id: (demo.name, len(demo.instances)),
    }
    assert len(datasets) == 2  # (neither id nor name is the other's)
    assert sample.name != demo.name
    (sample_id, sample_texts), (demo_id, demo_run_texts) = runs
    assert sample_id == sample.dataset_id and demo_id == demo.dataset_id
    assert sample_texts == [i.text for i in sample.instances[:2]]
    assert demo_run_texts == [i.text for i in demo.instances[: len(demo_run_texts)]]


def test_the_demo_with_a_file_evaluates_the_file_s_texts(tmp_path: Path, scripted: None) -> None:
    texts = ["Thanks for the ride home.", "Nobody wants you here, loser.", "See you at noon."]
    file = tmp_path / "mine.jsonl"
    file.write_text(
        "".join(
            json.dumps({"id": f"m{i}", "text": t, "label": "non-toxic"}) + "\n"
            for i, t in enumerate(texts)
        ),
        encoding="utf-8",
    )
    db = tmp_path / "haf.duckdb"
    assert main(["--db", str(db), "run", "--demo", "--file", str(file)]) == 0
    _, ((_, evaluated),) = _stored(db)
    assert evaluated and evaluated == texts[: len(evaluated)]
