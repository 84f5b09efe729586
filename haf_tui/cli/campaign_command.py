"""``haf campaign run|status|report GRID``: a grid of models × datasets run as one resumable
whole, where it stands, and its report.

The grid's ``[settings]`` table is read by ``haf run``'s own parser (the same options, the same
defaults); a model's cells run one after another (with servers, each cell's requests spread
over them), the cells of models with servers of their own side by side (``--cells-at-once``),
one line of progress each.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, NoReturn, cast

from rich.console import Console
from rich.progress import Progress
from rich.text import Text

from haf_tui.campaign.cells import PlannedCell, plan_campaign
from haf_tui.campaign.grid import Grid, GridError, load_grid
from haf_tui.campaign.lanes import default_cells_at_once, lanes_of, side_by_side
from haf_tui.campaign.rescores import check_similarities
from haf_tui.campaign.runner import CampaignHooks, run_campaign
from haf_tui.campaign.status import (
    CampaignStatus,
    campaign_cells,
    campaign_status,
    duration_text,
)
from haf_tui.cli.campaign_parser import REPORT_FORMATS as REPORT_FORMATS
from haf_tui.cli.campaign_parser import add_campaign_parser as add_campaign_parser
from haf_tui.cli.campaign_progress import CellLines
from haf_tui.cli.fit_table import Column, fit_table
from haf_tui.cli.plain_progress import plain_lines
from haf_tui.cli.plain_table import print_plain_table
from haf_tui.cli.progress_bars import ProgressBars, progress_columns
from haf_tui.cli.run_command import (
    _config,
    _CtrlC,
    add_run_parser,
)
from haf_tui.cli.writer_open import open_writer
from haf_tui.config import RunConfig
from haf_tui.methods.registry import run_stages, stage_titles
from haf_tui.pipeline.events import ProgressListener
from haf_tui.pipeline.runner import RunSummary
from haf_tui.pipeline.runs import StartedRun
from haf_tui.store import Store, StoreError, default_db_path, open_snapshot, open_store

GRID_KEYS = {
    "model": "name the models in models = [...]",
    "chat-format": "give a model's chat_format in its models entry",
    "dataset": "name the datasets in datasets = [...]",
    "file": "name the datasets in datasets = [...]",
    "limit": "give limit at the top of the file",
    "seed": "give seed at the top of the file",
    "suites": "give suites at the top of the file",
    "suite": "give suites at the top of the file",
    "server": "give servers in [servers] urls = [...] or a model's servers = [...]",
    "servers-file": "give servers in [servers] urls = [...] or a model's servers = [...]",
    "resume": "a campaign resumes its cells itself",
    "demo": "name the embedded model and the sample instead",
    "cells-at-once": "give cells_at_once at the top of the file",
    "wait": "give --wait to haf campaign run",
}
"""``haf run`` options a grid gives elsewhere than in ``[settings]``, and where."""


def campaign_command(args: argparse.Namespace, console: Console) -> int:
    """Run ``haf campaign run|status|report``; returns the exit status."""
    grid = load_grid(args.grid)
    database = args.db or grid.database
    if args.campaign_command == "run":
        base = grid_run_config(grid)
        with open_writer(
            database, wait=args.wait, command="campaign run", purpose=f"campaign {grid.name}"
        ) as store:
            return _run(args, grid, base, store, console)
    stored = Path(database).expanduser() if database else default_db_path()
    if not stored.is_file():  # (the store's own line says `haf run`: a campaign has its own)
        raise StoreError(
            f"no database at {stored}: campaign {grid.name} has not run yet; "
            f"`haf campaign run {args.grid}` runs it (or pass --db where it ran)"
        )
    reading = open_snapshot(database) if args.snapshot else open_store(database, read_only=True)
    with reading as store:
        if args.campaign_command == "status":
            _print_status(campaign_status(store, grid), console)
            return 0
        return _report(args, grid, store, console)


class _GridParser(argparse.ArgumentParser):
    """``haf run``'s parser reading a grid's ``[settings]``: an error is a :class:`GridError`."""

    grid_path: Path = Path("grid.toml")

    def error(self, message: str) -> NoReturn:
        raise GridError(f"{self.grid_path}: [settings]: {message}")


def grid_run_config(grid: Grid) -> RunConfig:
    """The run config the grid gives every cell (before its model): its suites, limit, seed
    and ``[settings]``, read by ``haf run``'s parser; an option it does not know, or one the
    grid gives elsewhere, is one line naming it and the file."""
    holder = argparse.ArgumentParser(prog="haf", add_help=False)
    commands = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        holder.add_subparsers(parser_class=_GridParser),
    )
    add_run_parser(commands)
    parser = commands.choices["run"]
    assert isinstance(parser, _GridParser)
    parser.grid_path = grid.path
    actions = {flag: action for action in parser._actions for flag in action.option_strings}
    argv: list[str] = []
    if grid.suites:
        argv.append("--suites=" + ",".join(grid.suites))
    if grid.limit is not None:
        argv.append(f"--limit={grid.limit}")
    if grid.seed is not None:
        argv.append(f"--seed={grid.seed}")
    if grid.similarity:  # (the cells' g: the first; the others re-score them)
        if "similarity-model" in grid.settings or "similarity_model" in grid.settings:
            raise GridError(f"{grid.path}: give the similarity model in similarity = [...] only")
        first = grid.similarity[0]
        argv += [f"--similarity-model={first.model}", f"--similarity-kind={first.kind}"]
    for key, value in grid.settings.items():
        argv += _setting_argv(grid.path, key.replace("_", "-"), value, actions)
    return _config(parser.parse_args(argv))


def _setting_argv(
    grid_path: Path, name: str, value: Any, actions: dict[str, argparse.Action]
) -> list[str]:
    if name in GRID_KEYS:
        raise GridError(f"{grid_path}: [settings] {name}: {GRID_KEYS[name]}")
    action = actions.get(f"--{name}")
    if action is None or name == "help":
        raise GridError(
            f"{grid_path}: [settings] has no option {name!r} (haf run --help lists them)"
        )
    if isinstance(action, argparse.BooleanOptionalAction | argparse._StoreTrueAction):
        if not isinstance(value, bool):
            raise GridError(f"{grid_path}: [settings] {name} is true or false, not {value!r}")
        if isinstance(action, argparse._StoreTrueAction):
            return [f"--{name}"] if value else []
        return [f"--{name}" if value else f"--no-{name}"]
    if isinstance(value, list):
        value = ",".join(str(item) for item in value)
    elif isinstance(value, bool | dict):
        raise GridError(f"{grid_path}: [settings] {name} takes a value, not {value!r}")
    return [f"--{name}={value}"]


def _line(*parts: str | tuple[str, str]) -> Text:
    """A line of plain text and (text, style) parts: a grid's name, its labels and paths are
    text, never rich markup (``[/]`` is printed, ``a \\`` keeps one backslash)."""
    return Text.assemble(*parts)


def _run(
    args: argparse.Namespace, grid: Grid, base: RunConfig, store: Store, console: Console
) -> int:
    plan = plan_campaign(store, grid, base, args.server)
    if plan.refused:
        err = Console(stderr=True, soft_wrap=True)
        for line in plan.refused:
            err.print(_line(("error:", "red"), f" {line}"))
        return 2
    check_similarities(  # (every g of the grid, before the first cell: a bad one is one line)
        grid,
        device=base.similarity.device,
        loading=lambda entry: console.print(
            _line(f"checking similarity model {entry.label} ({entry.kind}) ...")
        ),
    )
    cells = len(plan.cells)
    lanes = lanes_of(plan)
    at_once = args.cells_at_once or grid.cells_at_once or default_cells_at_once(lanes)
    concurrent = side_by_side(lanes, at_once)
    how = (
        f"up to {min(at_once, len(lanes))} at once (models with servers of their own side by side)"
        if concurrent
        else "one after another"
    )
    console.print(
        _line(
            "campaign ",
            (grid.name, "bold"),
            f": {len(grid.models)} model(s) × {len(grid.datasets)} dataset(s) = {cells} cells, "
            f"{how}; database {store.path}",
        )
    )
    resume = f"haf campaign run {args.grid}"
    lines = CellLines(console) if concurrent else None
    try:
        with _CtrlC(console) as ctrl_c, lines or nullcontext():
            summary = run_campaign(
                store,
                plan,
                hooks=_hooks(console, lines),
                stop_event=ctrl_c.event,
                cells_at_once=at_once,
            )
    except KeyboardInterrupt:
        Console(stderr=True).print(_line(f"interrupted: {resume} resumes the campaign"))
        return 130
    if summary.stopped:
        console.print(_line(f"stopped: {resume} resumes the campaign"))
        return 130
    failed = [label for label, (_, status) in summary.cells.items() if status == "failed"]
    if failed:
        console.print(
            _line((f"{len(failed)} cell(s) failed", "red"), f" ({', '.join(failed)}): {resume}")
        )
        return 1
    from haf_tui.cli.campaign_rescore import rescore_grid

    status = rescore_grid(grid, args.grid, store, base.similarity.device, console)
    if status:
        return status
    console.print(
        _line(
            f"campaign {grid.name}: all {cells} cells finished; haf campaign report {args.grid} "
            "--out DIR writes its tables"
        )
    )
    return 0


def _hooks(console: Console, lines: CellLines | None = None) -> CampaignHooks:
    """What the command prints of a campaign: a line per cell skipped, model loaded, run
    started, done or failed; while a cell runs, its bars (``lines``: cells side by side, one
    line each)."""

    def skipped(cell: PlannedCell) -> None:
        run_id = cell.claim.run_id if cell.claim else "?"
        console.print(_line((f"{cell.label}: run {run_id} finished before, skipped", "dim")))

    def loading(cell: PlannedCell) -> None:
        console.print(_line(f"loading {cell.model.label} (once for its cells) ..."))

    @contextmanager
    def progress(cell: PlannedCell, started: StartedRun) -> Iterator[ProgressListener]:
        how = "resuming" if cell.run is not None else "new"
        console.print(_line(f"{cell.label}: run ", (started.run_id, "bold"), f" ({how})"))
        stages = run_stages(started.config)
        plain = plain_lines(console, stage_titles(), stages, prefix=f"{cell.label}: ")
        if plain is not None:  # (no terminal: rich's bars would show nothing until the end)
            try:
                yield plain
            finally:
                plain.printer.close()
            return
        if lines is not None:
            with lines.cell(cell.label) as listener:
                yield listener
            return
        with Progress(*progress_columns(), console=console, transient=True) as bars:
            yield ProgressBars(bars, stages).show

    def done(cell: PlannedCell, summary: RunSummary) -> None:
        mark = ("✓", "green") if summary.status == "finished" else ("…", "yellow")
        counts = ", ".join(f"{k} {v}" for k, v in summary.generations.items())
        console.print(
            _line(
                mark,
                f" {cell.label}: run {summary.run_id} {summary.status}: "
                f"{summary.instances_done}/{summary.instances_total} instances; {counts}",
            )
        )

    def failed(cell: PlannedCell, message: str) -> None:
        console.print(_line((f"✗ {cell.label} failed:", "red"), f" {message}"))

    return CampaignHooks(skipped, loading, progress, done, failed)


STATUS_COLUMNS = (
    Column("model", 0, shrink_to=12),
    Column("dataset", 1, shrink_to=12),
    Column("status", 3),
    Column("done", 4, justify="right"),
    Column("ETA", 5, justify="right"),
    Column("generations", 6, justify="right"),
    Column("seconds", 7, justify="right"),
    Column("run", 2),
)
"""``campaign status``'s columns: a run id is never cut (it is what ``haf report --run``
takes); at 80 columns the counts give way first, then the status."""

RICH_TABLE_ROWS = 1000
"""More cells than this are listed as plain aligned lines (a rich table of a 300 × 300 grid
took minutes to render)."""


def _print_status(status: CampaignStatus, console: Console) -> None:
    rows = [
        (
            cell.model,
            cell.dataset,
            cell.status,
            f"{cell.done}/{cell.planned if cell.planned is not None else '?'}",
            _duration(cell.eta_seconds) if cell.status != "finished" else "",
            str(cell.generations),
            f"{cell.seconds:.0f}",
            cell.run_id or "",
        )
        for cell in status.cells
    ]
    if len(rows) > RICH_TABLE_ROWS:
        print_plain_table(console, f"campaign {status.name}", STATUS_COLUMNS, rows)
    else:
        table, _ = fit_table("", STATUS_COLUMNS, rows, console.width)
        table.title = Text(f"campaign {status.name}")  # (a name is text, never markup)
        console.print(table)
    left = len(status.cells) - status.finished
    if not left:
        eta = "nothing left"
    elif status.eta_seconds is None:
        eta = "ETA unknown until a cell of each model has run"
    else:
        eta = f"ETA {'' if status.eta_complete else '≥ '}{_duration(status.eta_seconds)}"
    running = f", {status.running} running" if status.running else ""
    console.print(f"{status.finished}/{len(status.cells)} cells finished{running}; {eta}")


def _duration(seconds: float | None) -> str:
    return "?" if seconds is None else duration_text(seconds)


def _report(args: argparse.Namespace, grid: Grid, store: Store, console: Console) -> int:
    from haf_tui.campaign.report import (  # (matplotlib, scipy: on demand)
        CampaignReportError,
        write_campaign_report,
    )

    if not args.out.strip():  # (Path("") is the current folder)
        raise CampaignReportError("--out is empty: give the folder to write the report into")

    cells = [
        (cell.model, cell.dataset, cell.run_id)
        for cell in campaign_cells(store, grid)
        if cell.run_id is not None
    ]
    if not cells:
        raise GridError(f"campaign {grid.name} has no runs yet: haf campaign run {args.grid}")
    written = write_campaign_report(
        store, grid.name, cells, args.format or ["markdown"], Path(args.out), force=args.force
    )
    for path in written:
        console.print(_line(str(path)))
    return 0
