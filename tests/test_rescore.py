"""``haf rescore``: a stored run re-scored with a second similarity model g equals the same
run computed from scratch with that g (the real runner, the same answers), adds no generation
text or token row, gives back the stored values with the run's own g, and resumes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from haf_tui.cli import main
from haf_tui.pipeline.rescore import RescoreError, RescoreSummary, rescore_run
from haf_tui.pipeline.runs import run_config_of
from haf_tui.similarity import load_similarity
from haf_tui.store import Store, StoreError, derived_runs, open_store
from haf_tui.store.derived_runs import children_of, parent_run
from haf_tui.store.result_rows import insert_instance_results
from tests.support.rescore_runs import JUSTIFY, save_tiny_dataset, scripted_run
from tests.support.tiny_similarity import tiny_bi_encoder


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two tiny random bi-encoders: the parent's g and the second g."""
    folder = tmp_path_factory.mktemp("tiny-g")
    return tiny_bi_encoder(folder, 1), tiny_bi_encoder(folder, 2)


@pytest.fixture
def stored(tmp_path: Path, models: tuple[Path, Path]) -> Store:
    """A store with the parent run (g = first tiny model) and the same run made from scratch
    with the second (run id ``scratch``)."""
    store = open_store(tmp_path / "haf.duckdb")
    save_tiny_dataset(store)
    scripted_run(store, "parent", load_similarity(str(models[0])))
    scripted_run(store, "scratch", load_similarity(str(models[1])))
    return store


TABLES = {
    "instance_results": "instance_id, stance, n_reasons, stopped",
    "instance_metrics": "instance_id, metric, value, n",
    "reason_metrics": "instance_id, stage, sub_index, reason_index, metric, value",
    "generations": "instance_id, stage, sub_index, test, seed, output_tokens, finish_reason, "
    "decision, decision_source, decision_sentence, decision_start, decision_end, "
    "decision_confidence",
    "reasons": "instance_id, stage, sub_index, reason_index, text, span_start, span_end, "
    "token_first, token_count, nll, relevance, confidence",
    "parse_diagnostics": "instance_id, stage, sub_index, kind, detail",
}


def _rows(store: Store, table: str, run_id: str) -> list[tuple[Any, ...]]:
    return store.query(
        f"SELECT {TABLES[table]} FROM {table} WHERE run_id = ? ORDER BY ALL", [run_id]
    )[1]


def _close(a: Any, b: Any, tolerance: float) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        both_nan = math.isnan(a) and math.isnan(b)
        return both_nan or abs(a - b) <= tolerance
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_close(x, y, tolerance) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _assert_same(store: Store, run_a: str, run_b: str, tolerance: float) -> None:
    for table in TABLES:
        rows_a, rows_b = _rows(store, table, run_a), _rows(store, table, run_b)
        assert len(rows_a) == len(rows_b) > 0 or table == "parse_diagnostics", table
        for row_a, row_b in zip(rows_a, rows_b, strict=True):
            assert _close(row_a, row_b, tolerance), (table, row_a, row_b)


def _counts(store: Store) -> tuple[int, int]:
    texts = store.query("SELECT count(*) FROM generations WHERE output_text IS NOT NULL")[1]
    tokens = store.query("SELECT count(*) FROM tokens")[1]
    return int(texts[0][0]), int(tokens[0][0])


def test_a_rescore_equals_the_run_made_from_scratch_with_that_g(
    stored: Store, models: tuple[Path, Path]
) -> None:
    before = _counts(stored)
    summary = rescore_run(stored, "parent", load_similarity(str(models[1])), score_ahead=0)
    assert summary.status == "finished" and summary.instances_done == 4
    assert parent_run(stored, summary.run_id) == "parent"
    _assert_same(stored, summary.run_id, "scratch", 1e-9)
    assert _counts(stored) == before  # no generation text or token copied
    sources = {row[0] for row in _rows(stored, "generations", summary.run_id)}
    assert sources  # (the similarity-decided follow-ups are there too)
    decided = stored.query(
        "SELECT count(*) FROM generations WHERE run_id = ? AND decision_source = 'similarity'",
        [summary.run_id],
    )[1]
    assert decided[0][0] > 0
    moved = stored.query(
        "SELECT count(*) FROM instance_metrics d JOIN instance_metrics p USING (instance_id, "
        "metric) WHERE d.run_id = ? AND p.run_id = 'parent' AND d.value <> p.value",
        [summary.run_id],
    )[1]
    assert moved[0][0] > 0  # g matters: the test is not comparing the parent with itself


def test_scored_ahead_a_rescore_equals_one_scored_as_asked_through_sentence_transformers(
    stored: Store, models: tuple[Path, Path]
) -> None:
    """Through real sentence-transformers (a tiny random bi-encoder): scored ahead (the first
    batch's pairs as g's probe, 2 instances a batch) the stored values are those of each pair
    scored as asked, within float32's batch noise, and the same again run after run."""
    path = str(models[1])
    as_asked = rescore_run(stored, "parent", load_similarity(path), score_ahead=0)
    renamed = "UPDATE runs SET similarity_model = $name WHERE run_id = $run"  # (the next g's
    stored.connection.execute(renamed, {"name": "as asked", "run": as_asked.run_id})  # run: new)
    ahead = rescore_run(stored, "parent", load_similarity(path), score_ahead=2)
    assert ahead.run_id != as_asked.run_id and ahead.instances_done == 4
    _assert_same(stored, ahead.run_id, as_asked.run_id, 1e-6)
    _assert_same(stored, ahead.run_id, "scratch", 1e-6)
    stored.connection.execute(renamed, {"name": "first", "run": ahead.run_id})
    again = rescore_run(stored, "parent", load_similarity(path), score_ahead=2)
    _assert_same(stored, again.run_id, ahead.run_id, 0.0)


def test_rescoring_with_the_runs_own_g_gives_back_its_values(
    stored: Store, models: tuple[Path, Path]
) -> None:
    summary = rescore_run(stored, "parent", load_similarity(str(models[0])), score_ahead=0)
    _assert_same(stored, summary.run_id, "parent", 0.0)


def test_a_stopped_rescore_resumes_to_the_same_values(
    stored: Store, models: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    second = load_similarity(str(models[1]))
    saved = insert_instance_results
    calls: list[str] = []

    def killed_on_the_second(con: Any, results: Any) -> None:
        calls.extend(result.instance_id for result in results)
        if len(calls) == 2:  # its generations are written, its results never are
            raise KeyboardInterrupt
        saved(con, results)

    monkeypatch.setattr(derived_runs, "insert_instance_results", killed_on_the_second)
    with pytest.raises(KeyboardInterrupt):
        rescore_run(stored, "parent", second, score_ahead=0)
    monkeypatch.setattr(derived_runs, "insert_instance_results", saved)
    (derived,) = children_of(stored, "parent")
    assert stored.get_run(derived.run_id).status == "stopped"
    for table in ("generations", "reasons", "instance_results"):  # (one transaction an instance)
        held = {row[0] for row in _rows(stored, table, derived.run_id)}
        assert held == {calls[0]}, table
    with pytest.raises(StoreError, match="is a re-score of run parent: go on with haf rescore"):
        run_config_of(stored, derived.run_id)  # (haf run --resume would generate into it)
    summary = rescore_run(stored, "parent", second, score_ahead=0)
    assert summary.resumed and summary.run_id == derived.run_id
    assert summary.status == "finished" and summary.instances_done == 4
    _assert_same(stored, summary.run_id, "scratch", 1e-9)
    again = rescore_run(stored, derived.run_id, second)  # a derived run: its parent's
    assert again.run_id == derived.run_id and again.instances_done == 4


def test_a_resumed_rescore_discards_an_instance_left_half_written(
    stored: Store, models: tuple[Path, Path]
) -> None:
    """An instance's generations and reasons without its results (a derived run written a
    generation a transaction, by an earlier version, and killed): a resume writes it again
    whole, not beside (or over) what was left."""
    second = load_similarity(str(models[1]))
    first = rescore_run(stored, "parent", second, score_ahead=0)
    with stored.transaction() as con:  # (i2's results gone: its other rows half an instance)
        for table in ("instance_results", "instance_metrics", "reason_metrics"):
            con.execute(
                f"DELETE FROM {table} WHERE run_id = ? AND instance_id = 'i2'", [first.run_id]
            )
    stored.update_run(first.run_id, status="stopped")
    summary = rescore_run(stored, "parent", second, score_ahead=0)
    assert summary.resumed and summary.run_id == first.run_id
    assert summary.status == "finished" and summary.instances_done == 4
    _assert_same(stored, summary.run_id, "scratch", 1e-9)


def test_an_unfinished_or_non_haf_run_is_refused(stored: Store, models: tuple[Path, Path]) -> None:
    stored.update_run("parent", status="stopped")
    with pytest.raises(RescoreError, match="is stopped: resume it to the end first"):
        rescore_run(stored, "parent", load_similarity(str(models[1])))
    stored.update_run("parent", status="running")
    with stored.transaction() as con:  # (no process writes it: killed)
        con.execute("UPDATE runs SET writer_pid = NULL WHERE run_id = 'parent'")
    with pytest.raises(RescoreError, match="is interrupted: resume it to the end first"):
        rescore_run(stored, "parent", load_similarity(str(models[1])))
    assert children_of(stored, "parent") == []
    from haf_tui.config import RunConfig

    config = RunConfig.model_validate_json(stored.get_run("parent").config_json)
    classify_only = config.model_copy(update={"suites": ("classify",)}).model_dump_json()
    stored.update_run("parent", status="finished")
    with stored.transaction() as con:
        con.execute("UPDATE runs SET config = ? WHERE run_id = 'parent'", [classify_only])
    with pytest.raises(RescoreError, match="has no HAF suite: none of its values depend on g"):
        rescore_run(stored, "parent", load_similarity(str(models[1])))


def test_the_derived_run_names_its_g_and_each_kind_of_g_is_a_run_of_its_own(
    stored: Store, models: tuple[Path, Path]
) -> None:
    from haf_tui.config import RunConfig

    second = load_similarity(str(models[1]))
    bi = rescore_run(stored, "parent", second)
    run = stored.get_run(bi.run_id)
    config = RunConfig.model_validate_json(run.config_json)
    assert (config.similarity.model, config.similarity.kind) == (second.name, "bi-encoder")
    assert (
        config.similarity.model
        != RunConfig.model_validate_json(stored.get_run("parent").config_json).similarity.model
    )  # (the parent's g is another)
    assert (run.similarity_model, run.similarity_kind) == (second.name, "bi-encoder")
    cross = rescore_run(stored, "parent", second, "cross-encoder")  # (the same name, scored
    assert not cross.resumed and cross.run_id != bi.run_id  # as a pair: another g)
    assert [d.similarity_kind for d in children_of(stored, "parent")] == [
        "bi-encoder",
        "cross-encoder",
    ]


def stopped_rescore(store: Store, models: tuple[Path, Path]) -> RescoreSummary:
    """A re-score of the parent with the second g, asked to stop while its first instance is
    recorded (g asked a pair past its probe: the four instances are one batch)."""
    import threading

    stop = threading.Event()
    second = load_similarity(str(models[1]))

    class StopOnTheSecondCall:
        name = second.name

        def __init__(self) -> None:
            self.calls = 0

        def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
            self.calls += 1
            if self.calls == 2:  # (the first: the batch's pairs, g's probe)
                stop.set()
            return second.similarities(pairs)

    progress: list[tuple[int, int]] = []
    summary = rescore_run(
        store,
        "parent",
        StopOnTheSecondCall(),
        on_progress=lambda *done: progress.append(done),
        stop_event=stop,
    )
    assert progress == [(1, 4)]  # (said once stored)
    return summary


def test_a_rescore_asked_to_stop_stops_between_instances(
    stored: Store, models: tuple[Path, Path]
) -> None:
    """Asked to stop inside a batch, the instance being recorded is finished and stored, the
    rest of the batch is not scored."""
    summary = stopped_rescore(stored, models)
    assert (summary.status, summary.instances_done, summary.instances_total) == ("stopped", 1, 4)
    assert stored.get_run(summary.run_id).status == "stopped"
    for table in ("generations", "reasons", "instance_results"):
        held = {row[0] for row in _rows(stored, table, summary.run_id)}
        assert held == {"i0"}, table


def test_the_command_line_rescores_and_refuses_a_model_it_cannot_load(
    stored: Store, models: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = stored.path
    stored.close()
    assert main(["--db", str(path), "rescore", "parent", "--similarity", "no-such/model"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "huggingface-cli download no-such/model" in err and err.startswith("error:")
    missing = str(path.parent / "no-such-folder")  # (a path: no Hub download to suggest)
    assert main(["--db", str(path), "rescore", "parent", "--similarity", missing]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"at {missing}" in err and "huggingface-cli" not in err
    assert main(["--db", str(path), "rescore", "par", "--similarity", str(models[1])]) == 0
    out = capsys.readouterr().out
    assert "run parent re-scored with" in out and "4/4 instances, finished" in out
    assert "progress: 4/4 instances re-scored · elapsed" in out  # (no terminal: plain lines)
    assert main(["--db", str(path), "rescore", "parent", "--similarity", str(models[1])]) == 0
    assert "was re-scored with" in capsys.readouterr().out  # (once is enough)


def test_a_derived_run_reads_its_parents_answers_pairs_with_it_and_keeps_it(
    stored: Store, models: tuple[Path, Path]
) -> None:
    from haf_tui.reports.registry import run_report
    from haf_tui.store.annotations import delete_run
    from haf_tui.store.instance_readers import (
        instance_parts,
        instance_tokens,
        run_answers,
        stage_answers,
    )
    from haf_tui.store.paces import past_runs

    derived = rescore_run(stored, "parent", load_similarity(str(models[1]))).run_id
    ids = ["i0", "i1"]
    own, of_parent = instance_parts(stored, derived, ids), instance_parts(stored, "parent", ids)
    prompts = sorted((g.instance_id, g.stage, g.sub_index, g.prompt_text) for g in own.generations)
    assert prompts == sorted(
        (g.instance_id, g.stage, g.sub_index, g.prompt_text) for g in of_parent.generations
    )
    assert all(p[3] for p in prompts)
    assert instance_tokens(stored, derived, ids) == instance_tokens(stored, "parent", ids) != []
    assert run_answers(stored, derived) == run_answers(stored, "parent")
    assert stage_answers(stored, derived, "i0", "justify") == {-1: JUSTIFY["0"]}
    from haf_tui.reports import run_named

    params = {"run_id": derived, "instance_id": "i0", "stage": "justify"}
    columns, rows = run_named(stored, "token_view", params)
    assert len(rows) == len(run_named(stored, "token_view", {**params, "run_id": "parent"})[1])
    assert rows and any(r[columns.index("relevance")] is not None for r in rows)
    result = run_report(stored, "compare-ci", {"run_ids": ["parent", derived]})
    paired = [dict(zip(result.columns, r, strict=True)) for r in result.rows]
    sos = next(r for r in paired if r["run"] == derived and r["metric"] == "SoS")
    assert sos["n pairs"] == 3 and sos["Δ vs first"] is not None  # (i3 stopped: no SoS)
    with pytest.raises(StoreError, match=r"re-scored runs .* delete them first"):
        delete_run(stored, "parent")
    assert stored.get_run(derived).seconds_running > 0
    assert len(past_runs(stored, ["scripted.gguf"])) == 2  # parent, scratch: no pace of a re-score


def test_a_grid_with_several_gs_rescores_its_cells_and_reports_the_sensitivity(
    stored: Store, models: tuple[Path, Path], tmp_path: Path
) -> None:
    from haf_tui.campaign.grid import GridError, load_grid
    from haf_tui.campaign.report import build_campaign_report
    from haf_tui.campaign.rescores import RescoreHooks, rescore_campaign
    from haf_tui.cli.campaign_command import grid_run_config
    from haf_tui.reports.comparison import mean_interval, paired_difference
    from haf_tui.store.campaigns import ClaimedCell, claim_cell, save_campaign
    from haf_tui.store.comparison_readers import run_metric_values

    first, second = (str(m) for m in models)
    grid_file = tmp_path / "grid.toml"
    grid_file.write_text(
        f'name = "g"\nmodels = ["embedded"]\ndatasets = ["sample"]\n'
        f'similarity = ["{first}", {{ model = "{second}", label = "tiny-2" }}]\n'
    )
    grid = load_grid(grid_file)
    assert grid_run_config(grid).similarity.model == first  # the cells' g: the first
    save_campaign(stored, "g", str(grid_file))
    claim_cell(stored, "g", ClaimedCell("embedded", "sample", "parent", "fp", {}, 0))
    loaded: list[str] = []
    hooks = RescoreHooks(loading=lambda entry: loaded.append(entry.label))
    ((_, entry, summary),) = rescore_campaign(stored, grid, hooks=hooks)
    assert loaded == ["tiny-2"] and entry.model == second and summary.instances_done == 4
    # (scored ahead, g embeds the texts in other batches than the run's: float32's last bits)
    _assert_same(stored, summary.run_id, "scratch", 1e-6)
    assert rescore_campaign(stored, grid, hooks=hooks) == [] and loaded == ["tiny-2"]

    report = build_campaign_report(stored, "g", [("embedded", "sample", "parent")])
    (table,) = [t for t in report.run_tables if t.slug == "sensitivity-to-g"]
    rows = [dict(zip(table.columns, row, strict=True)) for row in table.rows]
    sos = [row for row in rows if row["metric"] == "SoS"]
    assert [row["run"] for row in sos] == ["parent", summary.run_id]
    values = run_metric_values(stored, ["parent", "scratch"], ["sos"])
    of = {run: {i: v.get("sos") for i, v in values[run].items()} for run in values}
    assert sos[1]["mean"] == pytest.approx(mean_interval(of["scratch"]).mean, abs=1e-6)
    expected = paired_difference(of["parent"], of["scratch"])
    assert sos[1]["Δ vs first g"] == pytest.approx(expected.mean, abs=1e-6)
    assert sos[1]["n pairs"] == expected.n == 3 and sos[0]["Δ vs first g"] is None

    for bad, says in (
        ("similarity = [3]", "similarity: a model name or path"),
        ('similarity = ["a", "a"]', "two similarity models are labelled 'a'"),
        ('similarity = [{ model = "a", kind = "nearest" }]', "similarity 'a': kind"),
    ):
        grid_file.write_text(f'models = ["embedded"]\ndatasets = ["sample"]\n{bad}\n')
        with pytest.raises(GridError, match=says):
            load_grid(grid_file)


def test_a_new_derived_run_never_takes_a_taken_id(
    stored: Store, models: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ids are a second and two random bytes: two made in one second may clash. A re-score
    whose fresh id is taken (here: its parent's) takes another, never a traceback or rows in
    the other run."""
    from haf_tui.pipeline import runs

    offered = iter(["parent", "derived-2"])
    monkeypatch.setattr(runs, "new_run_id", lambda: next(offered))
    summary = rescore_run(stored, "parent", load_similarity(str(models[1])))
    assert (summary.run_id, summary.status) == ("derived-2", "finished")
    assert parent_run(stored, "parent") is None and parent_run(stored, "derived-2") == "parent"
