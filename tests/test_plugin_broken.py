"""A broken or hostile plug-in method (issue 33 §3): one that raises on import, is no Method,
reuses a stage, or could own haf's tables is left out with one line and everything else works
(``haf --version``, ``haf runs``, a real DuckDB file keeps its tables); one that raises in its
plan stops the run with one line naming it, what was stored kept; one whose report raises
costs that report only. Installed through a real entry point, run as ``python -m
haf_tui.cli``."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.plugin import plugins_installed

from haf_tui.methods.guard import MethodFailedError
from haf_tui.methods.haf.method import METHOD as HAF
from haf_tui.methods.judge.method import METHOD as JUDGE
from haf_tui.methods.registry import left_out, methods
from haf_tui.pipeline.runner import HafRunner
from haf_tui.store import open_store
from haf_tui.tui import create_app
from haf_tui.tui.screens.home import HomeScreen
from tests.support import settle
from tests.test_scheduler import FlatSimilarity, ScriptedBackend, _store_with_run

ROOT = Path(__file__).resolve().parents[1]

TOY_LIKE = """import dataclasses
from toy_method.method import METHOD as TOY, ToySuite, ToyPlan
from haf_tui.reports.registry import Report
from haf_tui.store.method_tables import MethodMigration


class Suite(ToySuite):
    name = "{name}"
    stages = ("{name}_word",)
    titles = {{"{name}_word": "word"}}
    table = None
{suite_body}

METHOD = dataclasses.replace(
    TOY, name="{name}", suite=Suite(), settings={settings}, flag_prefix="", panels=(),
    list_columns=(), summary_reports=(), reports={reports}, workbench="", dataset_formats=(){extra},
)
"""


def toy_like(
    name: str, suite_body: str = "", extra: str = "", reports: str = "()", settings: str = "None"
) -> str:
    """A plug-in module: the toy method under another name, its suite's body and the
    Method's fields changed as given."""
    body = suite_body or "    pass"
    extra = extra if "migrations=" in extra else f"{extra}, migrations=()"  # (not the toy's)
    return TOY_LIKE.format(
        name=name, suite_body=body, extra=extra, reports=reports, settings=settings
    )


BROKEN = {
    "crash": 'raise RuntimeError("boom at import")\n',
    "notamethod": "METHOD = 42\n",
    "dup": toy_like("dup", '    stages = ("justify",)'),
    "intsettings": toy_like("intsettings", settings="int"),
}
FLAG_CLASH = toy_like("clash", settings="ClashSettings").replace(
    "class Suite(",
    """from pydantic import BaseModel, Field


class ClashSettings(BaseModel):
    limit: int = Field(1, json_schema_extra={"flag": "--limit"})
    word: str = "w"


class Suite(""",
)
WIPER = toy_like(
    "instance",
    extra=', migrations=(MethodMigration(1, "mine", '
    '"DELETE FROM instance_results; DROP TABLE instance_notes"),)',
)
PLAN_FAILS = toy_like(
    "boom",
    """
    def plan(self, instance, config):
        raise ValueError("no plan today")
""",
)
ADVANCE_FAILS = toy_like(
    "late",
    """
    def plan(self, instance, config):
        plan = ToyPlan(instance.text, TOY.settings())
        if instance.instance_id == "i1":
            plan.start = lambda: 1 / 0
        return plan
""",
)
REPORT_FAILS = toy_like(
    "badreport",
    reports='(Report("badreport", "Bad", "toy_summary", shape=lambda c, r: {}["x"]),)',
)


def haf(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m haf_tui.cli ARGS`` (this worktree's code, the plug-ins on PYTHONPATH)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ["PYTHONPATH"]])}
    return subprocess.run(
        [sys.executable, "-m", "haf_tui.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.fixture
def broken(tmp_path: Path) -> Iterator[Path]:
    with plugins_installed(tmp_path / "site", BROKEN) as site:
        yield site


def test_broken_plug_ins_are_left_out_in_one_line_each_and_haf_works(
    broken: Path, tmp_path: Path
) -> None:
    assert [line.split("'")[1] for line in left_out()] == [
        "crash",
        "dup",
        "intsettings",
        "notamethod",
    ]
    assert "dup" not in methods() and "justify" in methods()["haf"].suite.stages
    version = haf("--version")
    assert version.returncode == 0 and version.stdout.startswith("haf-tui ")
    warnings = version.stderr.splitlines()
    assert warnings == [
        "warning: method 'crash' (crash_plugin.method:METHOD) could not be loaded: "
        "RuntimeError: boom at import — left out, the others work",
        "warning: method 'dup' reuses the stage(s) ['justify'] — left out, the others work",
        "warning: method 'intsettings': its settings are not a pydantic model — left out, "
        "the others work",
        "warning: method 'notamethod' (notamethod_plugin.method:METHOD) is a int, not a "
        "Method — left out, the others work",
    ]
    db = tmp_path / "h.duckdb"
    open_store(db).close()
    runs = haf("--db", str(db), "runs")
    assert runs.returncode == 0, runs.stderr
    assert runs.stderr.splitlines() == warnings


async def test_the_workbench_opens_and_says_which_plug_ins_were_left_out(
    broken: Path, tmp_path: Path
) -> None:
    app = create_app(tmp_path / "none.duckdb")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        said = [str(n.message) for n in app._notifications if "left out" in str(n.message)]
        assert len(said) == 4 and said[0].startswith("method 'crash'")


def test_a_plug_in_named_like_a_built_in_method_is_left_out_in_one_line_the_built_in_kept(
    tmp_path: Path,
) -> None:
    """A package's entry point ``haf`` (or ``myjudge`` whose method is called ``judge``)
    neither replaces the built-in method nor vanishes unsaid (issue 42 §5)."""
    plugins = {"haf": toy_like("haf"), "myjudge": toy_like("judge")}
    with plugins_installed(tmp_path / "site", plugins):
        assert methods()["haf"] is HAF and methods()["judge"] is JUDGE
        assert "haf_word" not in methods()["haf"].suite.stages
        shown = haf("--version")
    assert shown.returncode == 0 and shown.stdout.startswith("haf-tui ")
    assert shown.stderr.splitlines() == [
        "warning: method 'haf' (haf_plugin.method:METHOD) is named like the built-in method "
        "'haf' — left out, the built-in one is used (rename the plug-in)",
        "warning: method 'myjudge' (myjudge_plugin.method:METHOD) is called 'judge': its entry "
        "point must bear its name — left out, the others work",
    ]


def test_a_plug_in_flag_that_haf_run_has_is_left_out_in_one_line(tmp_path: Path) -> None:
    with plugins_installed(tmp_path / "site", {"clash": FLAG_CLASH}):
        shown = haf("run", "--help")
    assert shown.returncode == 0
    assert shown.stderr.splitlines() == [
        "warning: method 'clash': its flag --limit is left out (argument --limit: conflicting "
        "option string: --limit); the setting keeps its default"
    ]
    assert "--clash-word TEXT" in shown.stdout


def test_a_method_that_could_own_haf_s_tables_is_refused_and_the_file_keeps_them(
    tmp_path: Path,
) -> None:
    db = tmp_path / "h.duckdb"
    open_store(db).close()
    with plugins_installed(tmp_path / "site", {"instance": WIPER}):
        assert "instance" not in methods()
        (line,) = left_out()
        assert line.startswith(
            "method 'instance': its tables (instance_…) could be haf's own table instance_"
        )
        with open_store(db) as store:  # a writing open: every registered migration applied
            tables = {row[0] for row in store.query("SELECT table_name FROM duckdb_tables()")[1]}
            assert {"instance_notes", "instance_results"} <= tables
            wiper = "SELECT count(*) FROM method_migrations WHERE method = 'instance'"
            assert store.query(wiper)[1] == [(0,)]


def test_a_plug_in_whose_plan_raises_stops_haf_run_in_one_line(tmp_path: Path) -> None:
    with plugins_installed(tmp_path / "site", {"boom": PLAN_FAILS}):
        db = tmp_path / "h.duckdb"
        run = haf("--db", str(db), "run", "--dataset", "sample", "--limit", "1", "--suites", "boom")
    assert run.returncode == 2
    assert run.stderr.splitlines() == [
        "error: method 'boom' failed in its plan: ValueError: no plan today"
    ]


def test_a_plug_in_failing_mid_run_fails_the_run_in_one_line_keeping_what_was_stored(
    tmp_path: Path,
) -> None:
    with plugins_installed(tmp_path / "site", {"late": ADVANCE_FAILS}):
        store, config = _store_with_run(tmp_path / "h.duckdb", 3, 1)
        config = config.model_copy(update={"suites": ("late",)})
        with pytest.raises(MethodFailedError) as failed:
            HafRunner(store, ScriptedBackend(), FlatSimilarity(), config).run("run")
        assert str(failed.value) == (
            "method 'late' failed in its start: ZeroDivisionError: division by zero"
        )
        assert store.get_run("run").status == "failed"
        stored = store.query("SELECT DISTINCT instance_id FROM generations")[1]
        assert stored == [("i0",)]
        store.close()


def test_a_plug_in_report_that_raises_costs_that_report_only(tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    open_store(db).close()
    with plugins_installed(tmp_path / "site", {"badreport": REPORT_FAILS}):
        shown = haf("--db", str(db), "report", "--report", "badreport", "--report", "table1")
    assert shown.returncode == 2
    assert shown.stderr.splitlines() == ["error: report 'badreport' failed: KeyError: 'x'"]
    assert "Table 1 — HAF metrics per model × dataset" in shown.stdout
