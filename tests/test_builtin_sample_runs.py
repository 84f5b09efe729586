"""Samples of the built-in sample are one stored dataset, not one per size (issue 34 §9): runs
on samples of 2 and 4 with seed 17 share ``builtin-sample-s17``, each evaluating its sample's
instances in draw order (its limit the sample's size). A real DuckDB file, the real run
start; a scripted model (the embedded GGUF's metadata, never its weights)."""

from __future__ import annotations

from pathlib import Path

from haf_tui.config import RunConfig
from haf_tui.datasets import builtin_sample, sample_dataset
from haf_tui.datasets.builtin_samples import builtin_in_seed_order, stored_form
from haf_tui.defaults import embedded_model_path
from haf_tui.inference.gguf import read_gguf_info
from haf_tui.pipeline.models import LoadedModels
from haf_tui.pipeline.runs import DatasetChoice, RunRequest, resolve_dataset, start_or_resume
from haf_tui.store import open_store
from tests.support.rationale_runs import ScriptedRationaleModel
from tests.test_scheduler import FlatSimilarity


class _ScriptedFile(ScriptedRationaleModel):
    def __init__(self) -> None:
        super().__init__()
        self.info = read_gguf_info(embedded_model_path())
        self.chat_format = "chatml"
        self.offload_supported = False
        self.n_gpu_layers = 0


def _start(db: Path, size: int, seed: int = 17, limit: int | None = None) -> tuple[str, RunConfig]:
    choice = DatasetChoice("builtin", "sample", sample_size=size, seed=seed)
    with open_store(db) as store:
        dataset = resolve_dataset(choice, store)
        models = LoadedModels(_ScriptedFile(), FlatSimilarity())
        started = start_or_resume(
            store, RunRequest(config=RunConfig(limit=limit), dataset=dataset, preloaded=models)
        )
    return started.run_id, started.config


def test_samples_of_every_size_share_one_dataset(tmp_path: Path) -> None:
    db = tmp_path / "haf.duckdb"
    runs = {size: _start(db, size) for size in (2, 4)}
    _start(db, 3, seed=23)
    with open_store(db, read_only=True) as store:
        _, rows = store.query("SELECT dataset_id, n_instances FROM datasets ORDER BY 1")
        assert rows == [("builtin-sample-s17", 16), ("builtin-sample-s23", 16)]
        whole = builtin_sample()
        for size, (run_id, config) in runs.items():
            record = store.get_run(run_id)
            assert record.dataset_id == config.dataset_id == "builtin-sample-s17"
            assert (record.n_planned, config.limit) == (size, size)
            sample = sample_dataset(whole, size, 17)  # what the run evaluates: the sample
            evaluated = store.instances(config.dataset_id, config.limit)
            assert [(i.instance_id, i.text) for i in evaluated] == [
                (i.instance_id, i.text) for i in sample.instances
            ]


def test_a_smaller_limit_than_the_sample_is_kept(tmp_path: Path) -> None:
    _, config = _start(tmp_path / "haf.duckdb", 4, limit=2)
    assert config.limit == 2


def test_the_shared_order_records_the_seed_and_every_index() -> None:
    shared = builtin_in_seed_order(17)
    assert shared.meta["sample"]["seed"] == 17
    assert sorted(shared.meta["sample"]["indices"]) == list(range(16))
    assert [i.position for i in shared.instances] == list(range(16))


def test_other_datasets_and_changed_texts_are_stored_as_they_are() -> None:
    whole = builtin_sample()
    assert stored_form(whole) == (whole, None)  # not a sample: itself, no limit
    sample = sample_dataset(whole, 2, 17)
    changed = sample.instances[1].model_copy(update={"text": "an edited text"})
    edited = type(sample)(
        sample.dataset_id, sample.name, sample.source, [sample.instances[0], changed],
        sample.skipped, sample.meta,
    )  # fmt: skip
    assert stored_form(edited) == (edited, None)  # not the shared order's first two any more
