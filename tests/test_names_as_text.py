"""Names from users print as text (issue 42 §6): a dataset called ``[/]`` (Rich markup's
closing tag) made ``haf datasets list`` and ``datasets show`` fail with a MarkupError for the
whole database, and a run labelled so stopped the workbench at its start; and ``haf datasets
remove`` takes a dataset away, keeping one that runs use unless told to delete them too."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.visual import visualize
from textual.widgets import Select
from textual.widgets._select import SelectOverlay

from haf_tui.cli import main
from haf_tui.config import RunConfig
from haf_tui.store import StoreError, open_store
from haf_tui.store.annotations import set_run_label
from haf_tui.store.dataset_catalog import remove_dataset
from haf_tui.store.records import RunRecord
from haf_tui.tui import create_app
from haf_tui.tui.screens.home import HomeScreen
from haf_tui.tui.screens.wizard import WizardScreen
from tests.support import settle

NAME = "[/]"
LABEL = "[/] [bold]baseline"
TEXTS = ("you are [bold]kind[/] to me", "[/] an idiot and a fool")
RUN_ID = "20260101-120000-ab12"


def _haf(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def named_db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A database holding a dataset named ``[/]`` whose texts and a column hold markup."""
    db = tmp_path / "h.duckdb"
    csv = tmp_path / "marked.csv"
    csv.write_text(f"text,label,[/]\n{TEXTS[0]},0,a\n{TEXTS[1]},1,b\n")
    status, out, err = _haf(capsys, "--db", str(db), "datasets", "import", str(csv), "--name", NAME)
    assert status == 0, err
    assert f"imported {NAME} (" in out
    return db


def _dataset_id(db: Path) -> str:
    with open_store(db, read_only=True) as store:
        return str(store.query("SELECT dataset_id FROM datasets WHERE name = ?", [NAME])[1][0][0])


def _add_run(db: Path) -> None:
    dataset_id = _dataset_id(db)
    with open_store(db) as store:
        store.create_run(
            RunRecord(
                run_id=RUN_ID,
                status="finished",
                dataset_id=dataset_id,
                n_planned=2,
                config_json=RunConfig().model_dump_json(),
                model_file="/models/m.gguf",
                similarity_model="g",
                similarity_kind="bi-encoder",
            )
        )
        set_run_label(store, RUN_ID, LABEL)


def test_a_dataset_named_like_markup_is_listed_shown_and_previewed_as_text(
    named_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = _haf(capsys, "--db", str(named_db), "datasets", "list")
    assert status == 0 and not err
    assert f"│ {NAME} " in out
    status, out, err = _haf(capsys, "--db", str(named_db), "datasets", "show", NAME)
    assert status == 0 and not err
    assert out.startswith(f"{NAME} (")
    assert TEXTS[0] in out and TEXTS[1] in out
    status, out, err = _haf(capsys, "datasets", "preview", str(tmp_path / "marked.csv"))
    assert status == 0 and not err
    assert TEXTS[0] in out and "│ [/] " in out  # (the column's name too)


def test_a_dataset_runs_use_is_kept_unless_its_runs_go_too(
    named_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _add_run(named_db)
    dataset_id = _dataset_id(named_db)
    with open_store(named_db) as store, pytest.raises(StoreError, match="used by 1 run"):
        remove_dataset(store, dataset_id)  # (the store keeps it too, whoever asks)
    status, out, err = _haf(capsys, "--db", str(named_db), "datasets", "remove", NAME)
    assert status == 2 and not out
    assert err.splitlines() == [
        f"error: dataset '{NAME}' ({dataset_id}) is used by 1 run(s) ({RUN_ID}): kept; pass "
        "--with-runs to delete them with it"
    ]
    with open_store(named_db, read_only=True) as store:
        assert store.query("SELECT count(*) FROM instances")[1] == [(2,)]
        assert store.query("SELECT count(*) FROM runs")[1] == [(1,)]
    status, out, err = _haf(
        capsys, "--db", str(named_db), "datasets", "remove", NAME, "--with-runs"
    )
    assert status == 0, err
    assert out.strip() == (
        f"removed dataset {NAME} ({dataset_id}): 2 instances; deleted its 1 run(s): {RUN_ID}"
    )
    with open_store(named_db, read_only=True) as store:
        for table in ("datasets", "instances", "runs"):
            assert store.query(f"SELECT count(*) FROM {table}")[1] == [(0,)], table


def test_a_dataset_no_run_uses_is_removed_and_another_kept(
    named_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.csv"
    other.write_text("text,label\nsomething else entirely,0\n")
    assert main(["--db", str(named_db), "datasets", "import", str(other), "--name", "other"]) == 0
    capsys.readouterr()
    status, out, err = _haf(capsys, "--db", str(named_db), "datasets", "remove", NAME)
    assert status == 0, err
    assert out.startswith(f"removed dataset {NAME} (") and "run" not in out
    with open_store(named_db, read_only=True) as store:
        assert store.query("SELECT name FROM datasets")[1] == [("other",)]
        assert store.query("SELECT text FROM instances")[1] == [("something else entirely",)]
    status, _, err = _haf(capsys, "--db", str(named_db), "datasets", "remove", NAME)
    assert status == 2 and err.startswith(f"error: no stored dataset '{NAME}'")


async def test_the_workbench_shows_a_run_and_a_dataset_named_like_markup(named_db: Path) -> None:
    _add_run(named_db)
    dataset_id = _dataset_id(named_db)
    app = create_app(named_db)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        home = app.screen
        assert isinstance(home, HomeScreen)
        assert home.selected_run() == RUN_ID
        await pilot.press("n")
        await settle(pilot)
        wizard = app.screen
        assert isinstance(wizard, WizardScreen)
        source = wizard.query_one("#ds-source", Select)
        source.focus()
        await pilot.press("enter")  # the options drawn
        await settle(pilot)
        overlay = source.query_one(SelectOverlay)
        assert overlay.display  # (drawn: markup it could not read would have stopped the app)
        prompts = [overlay.get_option_at_index(i).prompt for i in range(overlay.option_count)]
        shown = [str(visualize(overlay, prompt, markup=True)) for prompt in prompts]
        assert f"{NAME} · {dataset_id} (2 stored)" in shown, shown
