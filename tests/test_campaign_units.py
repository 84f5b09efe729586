"""``haf campaign``'s parts without a model: the grid file and its one-line errors, the
``[settings]`` read by ``haf run``'s parser, fingerprints, claims on real DuckDB files, the
cell whose run was never made (killed between its claim and its run), refusals, status."""

from __future__ import annotations

from pathlib import Path

import pytest

from haf_tui.campaign import GridError, campaign_status, known_campaigns, load_grid
from haf_tui.campaign.cells import changed_settings, plan_campaign
from haf_tui.campaign.runner import _request
from haf_tui.campaign.status import CellState, _with_eta
from haf_tui.cli import main
from haf_tui.cli.campaign_command import grid_run_config
from haf_tui.store import RunRecord, Store, open_store
from haf_tui.store.campaigns import ClaimedCell, cell_runs, claim_cell, run_id_taken


def _grid(tmp_path: Path, text: str, name: str = "grid.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


BASIC = """
models = ["embedded"]
datasets = ["sample", {label = "again", name = "sample"}]
suites = ["classify"]
limit = 2
seed = 3
[settings]
max-new-tokens = 8
threads = 2
"""


def test_a_grid_is_read_with_haf_runs_own_options(tmp_path: Path) -> None:
    grid = load_grid(_grid(tmp_path, BASIC))
    assert grid.name == "grid"
    assert [m.label for m in grid.models] == ["embedded"]
    assert grid.models[0].path is None
    assert [(d.label, d.name) for d in grid.datasets] == [("sample", "sample"), ("again", "sample")]
    config = grid_run_config(grid)
    assert config.suites == ("classify",)
    assert config.limit == 2
    assert config.decoding.seed == 3
    assert config.decoding.max_new_tokens == 8
    assert config.model.n_threads == 2


def test_settings_take_flags_lists_and_underscores(tmp_path: Path) -> None:
    text = BASIC.replace("threads = 2", "top_p = 0.5\nextra-buffers = true\nstages = ['justify']")
    text = text.replace('suites = ["classify"]', 'suites = ["haf"]')
    config = grid_run_config(load_grid(_grid(tmp_path, text)))
    assert config.decoding.top_p == 0.5
    assert config.model.extra_buffers is True
    assert config.settings["haf"]["stages"] == ["justify"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("models = [\n  'embedded',\n datasets = 1", "not valid TOML"),
        ("models = ['x.gguf']\ndatasets = ['sample']", "model file x.gguf not found"),
        ("models = ['embedded', 'embedded']\ndatasets = ['sample']", "two models are labelled"),
        ("models = ['embedded']\ndatasets = []", "give datasets = [...]"),
        ("models = ['embedded']\ndatasets = ['sample']\nmodel = 1", "unknown key 'model'"),
        ("models = ['embedded']\ndatasets = ['nope.csv']", "dataset file nope.csv not found"),
        ("models = ['embedded']\ndatasets = ['sample']\nlimit = 0", "limit"),
        ("models = ['embedded']\ndatasets = ['sample']\nsuites = 3", "suites: a list"),
        ("models = ['embedded']\ndatasets = ['sample']\ndatabase = 1", "database: a file path"),
        ("models = [{path = 'embedded', n = 1}]\ndatasets = ['sample']", "model 'embedded'"),
    ],
)
def test_a_bad_grid_is_one_line(tmp_path: Path, text: str, says: str) -> None:
    with pytest.raises(GridError) as caught:
        load_grid(_grid(tmp_path, text))
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_bad_toml_names_its_line(tmp_path: Path) -> None:
    with pytest.raises(GridError, match="line 3"):
        load_grid(_grid(tmp_path, "models = ['embedded']\ndatasets = ['sample']\nlimit = = 2\n"))


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        ("max-new-tokenz = 8", "has no option 'max-new-tokenz'"),
        ("model = 'x.gguf'", "name the models in models"),
        ("limit = 3", "give limit at the top"),
        ("server = 'http://h:1'", "[servers]"),
        ("max-new-tokens = 'x'", "invalid int value"),
        ("extra-buffers = 3", "true or false"),
    ],
)
def test_a_bad_setting_is_one_line_naming_the_file(tmp_path: Path, setting: str, says: str) -> None:
    path = _grid(tmp_path, f"models = ['embedded']\ndatasets = ['sample']\n[settings]\n{setting}\n")
    with pytest.raises(GridError) as caught:
        grid_run_config(load_grid(path))
    assert says in str(caught.value) and str(path.resolve()) in str(caught.value)


def test_the_command_line_prints_a_bad_grid_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _grid(tmp_path, "models = ['embedded']\ndatasets = ['sample']\n[settings]\nfoo = 1\n")
    assert main(["campaign", "run", str(path), "--db", str(tmp_path / "c.duckdb")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "[settings] has no option 'foo'" in err


def test_unknown_datasets_and_suites_are_one_line(tmp_path: Path) -> None:
    with open_store(tmp_path / "c.duckdb") as store:
        grid = load_grid(_grid(tmp_path, "models = ['embedded']\ndatasets = ['no_such_set']"))
        with pytest.raises(GridError, match="dataset 'no_such_set': unknown dataset"):
            plan_campaign(store, grid, grid_run_config(grid))
        grid = load_grid(_grid(tmp_path, BASIC.replace('"classify"', '"nosuite"')))
        with pytest.raises(GridError, match="unknown suite"):
            plan_campaign(store, grid, grid_run_config(grid))


def test_paper_sample_names_its_file_or_says_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    samples = tmp_path / "samples"
    samples.mkdir()
    (samples / "processed_toxigen.csv").write_text(
        "index,input_text,given_label\n7,some text here,1.0\n9,another text,0.0\n"
    )
    monkeypatch.setenv("HAF_PAPER_SAMPLES", str(samples))
    with open_store(tmp_path / "c.duckdb") as store:
        grid = load_grid(
            _grid(tmp_path, BASIC.replace('"sample", {label', '"paper-sample:toxigen", {label'))
        )
        plan = plan_campaign(store, grid, grid_run_config(grid))
        assert plan.cells[0].choice.kind == "paper-sample"
        grid = load_grid(_grid(tmp_path, "models = ['embedded']\ndatasets = ['paper-sample:nope']"))
        with pytest.raises(GridError, match="no paper sample paper-sample:nope"):
            plan_campaign(store, grid, grid_run_config(grid))


def test_runtime_settings_are_not_in_the_fingerprint(tmp_path: Path) -> None:
    first = load_grid(_grid(tmp_path, BASIC))
    second = load_grid(_grid(tmp_path, BASIC.replace("threads = 2", "threads = 1\nparallel = 2")))
    third = load_grid(_grid(tmp_path, BASIC.replace("max-new-tokens = 8", "max-new-tokens = 9")))
    with open_store(tmp_path / "c.duckdb") as store:
        prints = [
            [c.fingerprint for c in plan_campaign(store, g, grid_run_config(g)).cells]
            for g in (first, second, third)
        ]
    assert prints[0] == prints[1] != prints[2]


def test_a_setting_only_one_side_knows_is_no_change() -> None:
    assert changed_settings({"a": 1, "b": 2}, {"a": 1, "c": 3}) == []
    assert changed_settings({"a": 1, "b": 2}, {"a": 2, "b": 2}) == ["a"]


def _fake_run(store: Store, run_id: str, status: str) -> None:
    store.create_run(
        RunRecord(
            run_id=run_id,
            status=status,
            dataset_id="builtin-sample",
            n_planned=2,
            config_json="{}",
            model_file="m.gguf",
            similarity_model="s",
            similarity_kind="bi-encoder",
        )
    )


def test_a_claimed_cell_without_its_run_makes_it_with_the_claimed_id(tmp_path: Path) -> None:
    """Killed between the claim and the run: the run is made with the id claimed, never a
    second one."""
    grid = load_grid(_grid(tmp_path, BASIC))
    with open_store(tmp_path / "c.duckdb") as store:
        plan = plan_campaign(store, grid, grid_run_config(grid))
        first = plan.cells[0]
        claim = ClaimedCell("embedded", "sample", "claimed-1", first.fingerprint, {}, 0)
        claim_cell(store, grid.name, claim)
        assert run_id_taken(store, "claimed-1") and not run_id_taken(store, "other")
        plan = plan_campaign(store, grid, grid_run_config(grid))
        cell = plan.cells[0]
        assert cell.claim is not None and cell.run is None and not plan.refused
        request = _request(store, plan, cell, None, {})  # type: ignore[arg-type]
        assert request.run_id == "claimed-1" and request.resume_run_id is None
        assert request.dataset is not None and request.config == cell.config
        # its run exists (killed while running): it resumes that run
        _fake_run(store, "claimed-1", "running")
        plan = plan_campaign(store, grid, grid_run_config(grid))
        request = _request(store, plan, plan.cells[0], None, {})  # type: ignore[arg-type]
        assert request.resume_run_id == "claimed-1" and request.config is None
        assert cell_runs(store, ["claimed-1"])["claimed-1"].status == "interrupted"
        # a second cell claimed gets a fresh id
        request = _request(store, plan, plan.cells[1], None, {})  # type: ignore[arg-type]
        assert request.run_id not in (None, "claimed-1")


def test_a_cell_whose_settings_changed_is_refused(tmp_path: Path) -> None:
    grid = load_grid(_grid(tmp_path, BASIC))
    with open_store(tmp_path / "c.duckdb") as store:
        cell = plan_campaign(store, grid, grid_run_config(grid)).cells[0]
        claim_cell(
            store,
            grid.name,
            ClaimedCell("embedded", "sample", "r1", cell.fingerprint, cell.settings, 0),
        )
        _fake_run(store, "r1", "finished")
        changed = load_grid(_grid(tmp_path, BASIC.replace("= 8", "= 9")))
        plan = plan_campaign(store, changed, grid_run_config(changed))
        assert plan.refused == [
            "cell embedded × sample: its settings changed since run r1 was made "
            "(decoding.max_new_tokens 8 → 9); put them back, or name a new campaign"
        ]
        assert plan.cells[0].finished
        # the same settings: nothing refused, the finished cell skipped
        assert not plan_campaign(store, grid, grid_run_config(grid)).refused


def test_status_from_the_store(tmp_path: Path) -> None:
    grid = load_grid(_grid(tmp_path, BASIC))
    with open_store(tmp_path / "c.duckdb") as store:
        claim_cell(store, grid.name, ClaimedCell("embedded", "sample", "r1", "f", {}, 0))
        _fake_run(store, "r1", "created")
        from haf_tui.store.campaigns import save_campaign

        save_campaign(store, grid.name, str(grid.path))
        status = campaign_status(store, grid)
        assert [(c.dataset, c.status, c.run_id, c.planned) for c in status.cells] == [
            ("sample", "created", "r1", 2),
            ("again", "pending", None, 2),
        ]
        assert status.eta_seconds is None and not status.eta_complete
        assert [(c.name, c.cells) for c in known_campaigns(store)] == [("grid", 1)]


def test_eta_from_the_cells_own_pace_else_its_models() -> None:
    running = CellState("m", "d", 0, "r", "interrupted", 2, 10, 5, 20.0)
    assert _with_eta(running, None).eta_seconds == pytest.approx(80.0)
    pending = CellState("m", "e", 1, None, "pending", 0, 4, 0, 0.0)
    assert _with_eta(pending, (30.0, 3)).eta_seconds == pytest.approx(40.0)
    assert _with_eta(pending, None).eta_seconds is None


def test_the_report_command_hands_the_cells_with_a_run_to_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = pytest.importorskip("haf_tui.campaign.report")
    assert callable(report.write_campaign_report)
    grid_path = _grid(tmp_path, BASIC)
    grid = load_grid(grid_path)
    db = tmp_path / "c.duckdb"
    with open_store(db) as store:
        claim_cell(store, grid.name, ClaimedCell("embedded", "sample", "r1", "f", {}, 0))
        _fake_run(store, "r1", "finished")
    seen: list[object] = []

    def fake(store: Store, campaign: str, cells: object, formats: object, out: Path, **kw: object):
        seen.append((campaign, cells, formats, out, kw))
        return [out / "x.md"]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(report, "write_campaign_report", fake)
        status = main(["campaign", "report", str(grid_path), "--db", str(db), "--out", "o"])
    assert status == 0
    assert seen == [
        ("grid", [("embedded", "sample", "r1")], ["markdown"], Path("o"), {"force": False})
    ]


def test_servers_a_models_own_else_the_grids_plus_the_command_lines(tmp_path: Path) -> None:
    text = BASIC.replace(
        'models = ["embedded"]',
        'models = ["embedded", {label = "far", servers = ["http://a:1#2"]}]',
    )
    grid = load_grid(_grid(tmp_path, text + '[servers]\nurls = ["http://g:1"]\n'))
    with open_store(tmp_path / "c.duckdb") as store:
        plan = plan_campaign(store, grid, grid_run_config(grid), ["http://x:1"])
    servers = {c.model.label: c.config.model.servers for c in plan.cells}
    assert servers == {
        "embedded": ("http://g:1", "http://x:1"),
        "far": ("http://a:1#2", "http://x:1"),
    }
    assert plan.cells[0].fingerprint == plan.cells[2].fingerprint  # (servers: runtime only)


def test_a_pending_cell_has_an_eta_while_its_models_first_cell_runs(tmp_path: Path) -> None:
    """Before any cell of a model finishes, its pending cells take the pace of its cells
    under way (the first cell's)."""
    grid = load_grid(_grid(tmp_path, BASIC))
    with open_store(tmp_path / "c.duckdb") as store:
        claim_cell(store, grid.name, ClaimedCell("embedded", "sample", "r1", "f", {}, 0))
        _fake_run(store, "r1", "interrupted")
        store.update_run("r1", seconds=30.0)
        from haf_tui.store.records import InstanceResult

        store.save_instance_result(InstanceResult("r1", "i0", stance="toxic", n_reasons=0))
        status = campaign_status(store, grid)
    running, pending = status.cells
    assert running.eta_seconds == pytest.approx(30.0)  # (1 left at 30 s each)
    assert pending.status == "pending" and pending.eta_seconds == pytest.approx(60.0)


def test_two_grid_files_of_one_name_are_not_one_campaign(tmp_path: Path) -> None:
    """Two grid.toml in two folders are both campaign "grid": the second is refused in one
    line while the first is still there (a grid file moved away is the same campaign)."""
    from haf_tui.store.campaigns import save_campaign

    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    first = load_grid(_grid(tmp_path / "a", BASIC))
    second = load_grid(_grid(tmp_path / "b", BASIC))
    with open_store(tmp_path / "c.duckdb") as store:
        save_campaign(store, first.name, str(first.path))
        assert not plan_campaign(store, first, grid_run_config(first)).refused
        refused = plan_campaign(store, second, grid_run_config(second)).refused
        assert refused == [
            f"campaign grid in this database is the grid {first.path}: give {second.path} a "
            'name of its own (name = "…"), or run that file'
        ]
        first.path.unlink()  # (moved away: this file is the campaign now)
        assert not plan_campaign(store, second, grid_run_config(second)).refused


def test_a_fresh_run_id_is_never_one_a_run_or_a_claimed_cell_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two ids made in one second may clash (a second and two random bytes): every run the
    store makes (a run, a campaign's cell, a re-score) takes one no run or claim has."""
    from haf_tui.pipeline import runs

    grid = load_grid(_grid(tmp_path, BASIC))
    with open_store(tmp_path / "c.duckdb") as store:
        plan = plan_campaign(store, grid, grid_run_config(grid))
        claim = ClaimedCell("embedded", "sample", "claimed-1", plan.cells[0].fingerprint, {}, 0)
        claim_cell(store, grid.name, claim)
        offered = iter(["claimed-1", "claimed-1", "free-1"])
        monkeypatch.setattr(runs, "new_run_id", lambda: next(offered))
        assert runs.fresh_run_id(store) == "free-1"
