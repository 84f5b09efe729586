"""The workbench's key vocabulary (issue 18 §8): one key is one verb on every screen.

:data:`KEY_TABLE` is the one place the keys are defined. The screens' ``BINDINGS`` are checked
against it (``tests/test_tui_keys.py``: every key a haf screen or widget binds is in the table,
bound to an action the table lists for it), and the ``?`` help and the key table of
docs/usage.md are written from it. Shifted letters are destructive or heavy verbs; destructive
ones ask first. Editors (the SQL screen, the wizard) use ctrl keys, because letters type there.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class KeyVerb:
    """One row of the key table: the keys (Textual names), the verb, where and how it acts,
    and the action names that carry it out (``name`` or ``name(args)``)."""

    keys: tuple[str, ...]
    verb: str
    where: str
    actions: frozenset[str]
    only_on: tuple[str, ...] = ()
    """Screen classes where this row replaces the general row of its keys (a modal's y / n)."""


def _row(
    keys: str, verb: str, where: str, actions: Iterable[str], only_on: tuple[str, ...] = ()
) -> KeyVerb:
    return KeyVerb(tuple(keys.split()), verb, where, frozenset(actions), only_on)


KEY_TABLE: Final[tuple[KeyVerb, ...]] = (
    _row(
        "question_mark",
        "help & definitions",
        "everywhere; this screen's keys first (again: closes it)",
        ["help", "dismiss"],
    ),
    _row("h", "runs (home)", "everywhere", ["home"]),
    _row(
        "q",
        "quit",
        "everywhere; asks while a run is writing or edits are unsaved",
        ["quit", "app.quit"],
    ),
    _row(
        "escape",
        "back / close",
        "every screen and dialog; asks before discarding edits",
        ["back", "back_out", "dismiss", "close", "cancel", "answer(False)", "app.pop_screen"],
    ),
    _row(
        "enter",
        "open / choose",
        "runs: open a run; lists: choose the row; a cut value: in full",
        ["open", "choose", "select", "submit", "open_full", "full_values", "close", "insert"],
    ),
    _row("n", "new evaluation", "runs (the guided wizard)", ["new_run", "app.new_run"]),
    _row("e", "explore", "runs, monitor: the explorer of the run", ["explore"]),
    _row("m", "metrics", "runs, monitor: the metric panels", ["metrics"]),
    _row("s", "SQL", "runs: the SQL screen", ["sql", "app.sql"]),
    _row(
        "c",
        "compare runs",
        "runs, metrics: the comparison view of the chosen runs; campaigns: of its runs",
        ["compare", "app.compare"],
    ),
    _row(
        "r",
        "refresh",
        "runs: re-read the database, or (a finished run) re-score it with another similarity "
        "model; campaigns: re-read the database",
        ["refresh"],
    ),
    _row(
        "k",
        "campaigns",
        "runs: the campaigns' grids (haf campaign), models × datasets",
        ["campaigns", "app.campaigns"],
    ),
    _row("R", "resume a run", "runs, monitor: resume an unfinished run here", ["resume"]),
    _row("C", "cancel a run", "monitor: stop it now, confirmed (it stays resumable)", ["cancel"]),
    _row("D", "delete a run", "runs: every row of it, confirmed", ["delete", "delete_run"]),
    _row(
        "L", "label a run", "runs: give it a name", ["label", "label_run", "rename", "rename_run"]
    ),
    _row("T", "tag a run", "runs: comma-separated tags", ["tag", "tag_run", "tags"]),
    _row("p", "pause / go on", "monitor: pause before the next generation", ["pause"]),
    _row(
        "space",
        "toggle selection",
        "metrics, compare: pick a run",
        ["toggle_runs", "toggle", "toggle_run", "toggle_selection", "pick"],
    ),
    _row(
        "a",
        "all / none",
        "metrics, compare: every run or none; explorer: clear every filter",
        ["all_runs", "all", "select_all", "toggle_all", "filter('clear')"],
    ),
    _row(
        "right_square_bracket",
        "next item",
        "explorer, compare: next instance; metrics: next panel; campaigns: next campaign",
        ["step(1)", "step_panel(1)", "step_instance(1)", "next_item", "next_instance"],
    ),
    _row(
        "left_square_bracket",
        "previous item",
        "explorer, compare: previous instance; metrics: previous panel; campaigns",
        ["step(-1)", "step_panel(-1)", "step_instance(-1)", "previous_item", "previous_instance"],
    ),
    _row("right greater_than_sign", "next token", "explorer: the token cursor", ["token(1)"]),
    _row("left less_than_sign", "previous token", "explorer: the token cursor", ["token(-1)"]),
    _row("slash", "search", "explorer: search the texts and the model's answers", ["search"]),
    _row(
        "f",
        "ranges filter",
        "explorer: ranges over the run's metrics and the gold label, e.g. sos>0.5 label=toxic",
        ["ranges"],
    ),
    _row("t", "stance filter", "explorer: next stance shown", ["filter('stance')"]),
    _row(
        "u",
        "UNCLEAR filter",
        "explorer: only instances with an UNCLEAR decision",
        ["filter('unclear')"],
    ),
    _row(
        "x",
        "contradictions filter",
        "explorer: only those with a contradiction",
        ["filter('contradictions')"],
    ),
    _row("o", "sort", "explorer: by the next metric", ["filter('sort')", "sort"]),
    _row("O", "reverse sort", "explorer", ["filter('reverse')", "reverse"]),
    _row("d", "metric shown", "metrics: the next histogram metric", ["next_metric"]),
    _row("g", "pooling", "metrics: Tables 1 and 4's pooling rule", ["pooling"]),
    _row("v", "view the prompt", "explorer: the prompt of the node (or back)", ["prompt"]),
    _row("l", "colour layer", "explorer: colour tokens by NLL or relevance", ["colour", "layer"]),
    _row("b", "bookmark", "explorer: toggle a bookmark on the instance", ["bookmark"]),
    _row("w", "write a note", "explorer: edit the instance's note", ["note", "edit_note"]),
    _row(
        "y",
        "copy",
        "copy what is under the cursor (instance text, reason, result cell)",
        ["copy", "yank", "copy_cell", "copy_text"],
    ),
    _row(
        "1 2 3 4 5 6 7 8 9",
        "panel N",
        "metrics: Table 1, 2, 4, Figure 2, …; compare",
        ["panel", "pane"],
    ),
    _row("shift+right shift+left", "scroll sideways", "metrics: a wide panel", ["scroll_panel"]),
    _row(
        "plus",
        "all columns",
        "runs: every column in full (→ scrolls), again: the columns that fit",
        ["all_columns"],
    ),
    _row(
        "asterisk",
        "bookmarked filter",
        "explorer: only bookmarked instances",
        ["filter('bookmarked')"],
    ),
    _row("up down", "cursor", "lists: one row", ["cursor", "cursor_up", "cursor_down", "move"]),
    _row("pageup pagedown", "page", "lists: a screenful", ["page"]),
    _row("home end", "first / last", "lists: the first / last row", ["cursor", "first", "last"]),
    _row("ctrl+n", "next page / step", "SQL: results; wizard: step", ["next", "next_page"]),
    _row("ctrl+b", "previous page / step", "SQL, wizard", ["previous", "previous_page"]),
    _row(
        "ctrl+r f5",
        "run the query",
        "SQL: the selection, else the statement under the cursor; its parameters form",
        ["run_query", "submit"],
    ),
    _row(
        "ctrl+s",
        "start / save",
        "wizard: start the runs; editors: save; SQL: the buffer to a .sql file",
        ["start", "save"],
    ),
    _row("ctrl+a", "select all", "SQL editor (type or delete: replace, clear)", ["select_all"]),
    _row("f2", "open a .sql file", "SQL: into a new buffer", ["open_file"]),
    _row("f3", "next buffer", "SQL (an empty buffer left is closed)", ["next_buffer"]),
    _row("f8", "new buffer", "SQL", ["new_buffer"]),
    _row("f4", "format the SQL", "SQL: the selection or all, with sqlfmt", ["format_sql"]),
    _row(
        "ctrl+c",
        "cancel the query",
        "SQL: while a query runs (shown once it has run 0.15 s, with a running line); "
        "the editor stays usable",
        ["cancel_query"],
    ),
    _row("ctrl+e", "export CSV", "SQL", ["export('csv')"]),
    _row("ctrl+t ctrl+shift+e", "export Parquet", "SQL", ["export('parquet')"]),
    _row("ctrl+l", "query library", "SQL", ["toggle_library"]),
    _row(
        "ctrl+o", "schema browser", "SQL: tables, views, columns, named queries", ["toggle_schema"]
    ),
    _row("ctrl+f", "query history", "SQL: search the queries run before", ["history"]),
    _row("ctrl+space ctrl+@", "complete", "SQL: table and column names", ["complete"]),
    _row("ctrl+g", "download", "wizard: fetch the paper dataset chosen", ["download_dataset"]),
    _row("y", "yes", "a question", ["answer(True)"], only_on=("ConfirmScreen",)),
    _row("n", "no", "a question", ["answer(False)"], only_on=("ConfirmScreen",)),
)
"""Every key of the workbench and its one verb."""

KEY_DISPLAY: Final = {
    "question_mark": "?",
    "slash": "/",
    "right_square_bracket": "]",
    "left_square_bracket": "[",
    "greater_than_sign": ">",
    "less_than_sign": "<",
    "right": "→",
    "left": "←",
    "asterisk": "*",
    "plus": "+",
}
"""How a Textual key name is written in the tables."""


def shown_key(key: str) -> str:
    """A Textual key name as the tables write it (``right_square_bracket`` → ``]``)."""
    return KEY_DISPLAY.get(key, key)


def verb_row(key: str, screen: str = "") -> KeyVerb | None:
    """The row of ``key`` (a Textual key name) on ``screen`` (a class name): its own row if the
    table gives that screen one, else the general row; None when the table lacks the key."""
    general = None
    for row in KEY_TABLE:
        if key in row.keys:
            if screen and screen in row.only_on:
                return row
            if not row.only_on and general is None:
                general = row
    return general


def action_fits(row: KeyVerb, action: str) -> bool:
    """Whether ``action`` (as a binding names it) carries out the row's verb: the action with
    its arguments, or its bare name, is listed (a ``screen.`` prefix ignored)."""
    action = action.removeprefix("screen.")
    return action in row.actions or action.split("(")[0] in row.actions


def markdown_table(rows: Iterable[KeyVerb] = KEY_TABLE) -> str:
    """The key table as Markdown (the ``?`` help and docs/usage.md show it)."""
    lines = ["| key | verb | where |", "|---|---|---|"]
    for row in rows:
        if row.only_on:
            continue
        keys = " ".join(f"`{shown_key(key)}`" for key in row.keys)
        lines.append(f"| {keys} | {row.verb} | {row.where} |")
    return "\n".join(lines)


if __name__ == "__main__":  # `python -m haf_tui.tui.keys`: the table for docs/usage.md
    print(markdown_table())
