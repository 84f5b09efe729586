"""Explorer: one run's instances (filtered and sorted), the stance/reason tree of the selected
one, and the tokens of the selected generation (NLL or relevance colouring, top-k, the prompt).

Keys: ] / [ step through the shown instances, t cycles the stance filter, u shows only
instances with an UNCLEAR decision, x only those with a contradiction (a follow-up says Y = NO
yet lists new reasons), f edits ranges (``sos>0.5 mass<0.5 label=toxic``: any of the run's
instance metrics, the gold label), / searches the texts and the model's answers, o
cycles the sort metric and O reverses it, a clears every filter; ← → (anywhere but a text box)
and < > move the token cursor, l colours by NLL or relevance, v shows the prompt; b bookmarks
the instance, w writes a note on it, * shows only bookmarked ones and y copies the text or the
reason under the cursor (their base, ``instance_notes.py``).

The list's columns, sort keys, ranges and legend are the run's methods' (their declared
``list_columns`` and metrics: :class:`~haf_tui.tui.filters.ListSchema`); the tree has a node
per method of the run, drawn by the method's own part of the workbench (``Method.workbench``:
:mod:`~haf_tui.tui.method_parts`), else the view it declares (``Method.view``; none: its title
over its metric lines). A part's node opens its pane in place of the token view, read when first
shown (the rationales method's: the prompted words, the occlusion scores and the annotators'
shares per word, then the faithfulness, plausibility and complexity numbers). A part may
attach the items of related runs, read with the instances: under JUSTIFY, the judge's "judge …"
node per judge run over the run's explanations (a judge run: its own, at the top) lists the
eight criteria's labels and opens the judgement (p of each label, mass, E, ≠ stance, the judged
item).
"""

from __future__ import annotations

from dataclasses import replace
from time import monotonic
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Header, Input, Static, TextArea

from haf_tui.config import RunConfig
from haf_tui.methods.declare import LOW_MASS_SIGN, Method, MetricSpec
from haf_tui.methods.registry import methods_of
from haf_tui.reports import first_with_reasons
from haf_tui.tui.filters import (
    InstanceFilter,
    ListSchema,
    prepare,
)
from haf_tui.tui.instance_reader import (
    AnswersRead,
    InstanceCache,
    InstanceData,
    InstancesLoaded,
    kept_answers,
    kept_run_context,
    metric_names,
    opening_ids,
    run_rows,
)
from haf_tui.tui.method_parts import NodeRef
from haf_tui.tui.read_ahead import wait_for_rows, want_rows
from haf_tui.tui.screens.base import failure_text
from haf_tui.tui.screens.explorer_detail import DetailScreen
from haf_tui.tui.screens.explorer_filters import TYPING_PAUSE
from haf_tui.tui.screens.instance_notes import add_notes, notes_and_pending
from haf_tui.tui.widgets.instance_list import InstanceList
from haf_tui.tui.widgets.key_footer import KeyFooter
from haf_tui.tui.widgets.legend import Legend
from haf_tui.tui.widgets.stance_tree import StanceTree, fmt
from haf_tui.tui.widgets.token_view import TokenView

EXPLORER_MARKS = ("U", "!", "★", "—")
"""The marks the legend explains (a run with related runs adds their parts' marks)."""


class ExplorerScreen(DetailScreen):
    """One run: instances on the left; the tree and the token view on the right."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        # the keys are haf_tui/tui/keys.py's vocabulary (tests/test_tui_keys.py checks them)
        Binding("right_square_bracket", "step(1)", "Next", key_display="]"),
        Binding("left_square_bracket", "step(-1)", "Prev", key_display="["),
        Binding("less_than_sign", "token(-1)", "◀ tok", key_display="← <"),
        Binding("greater_than_sign", "token(1)", "tok ▶", key_display="> →"),
        # priority: before the focused list or tree; check_action leaves them to text boxes
        Binding("left", "token(-1)", "◀ tok", show=False, priority=True),
        Binding("right", "token(1)", "tok ▶", show=False, priority=True),
        Binding("l", "colour", "NLL/relevance"),
        Binding("v", "prompt", "Prompt"),
        Binding("t", "filter('stance')", "Stance"),
        Binding("u", "filter('unclear')", "UNCLEAR"),
        Binding("x", "filter('contradictions')", "Contradictions"),
        Binding("f", "ranges", "Ranges"),
        Binding("o", "filter('sort')", "Sort"),
        Binding("O", "filter('reverse')", "Reverse", show=False),
        Binding("a", "filter('clear')", "All", show=False),
        Binding("slash", "search", "Search"),
        Binding("b", "bookmark", "Bookmark"),  # (these four: instance_notes.py)
        Binding("w", "note", "Note"),
        Binding("y", "copy", "Copy", show=False),
        Binding("asterisk", "filter('bookmarked')", "★ only", show=False),
    ]

    AUTO_FOCUS = "#ex-instances"
    DEFAULT_CSS = """
    ExplorerScreen #ex-main { height: 1fr; }
    ExplorerScreen #ex-left { width: 44; height: 1fr; }
    ExplorerScreen.-narrow #ex-left { width: 28; }
    ExplorerScreen.-wide #ex-left { width: 56; }
    ExplorerScreen #ex-left Input { height: 1; border: none; padding: 0 1; }
    ExplorerScreen #ex-left Input:focus { background: $boost; }
    ExplorerScreen #ex-filter-error { color: $error; padding: 0 1; }
    ExplorerScreen #ex-filter-error.-empty { display: none; }
    ExplorerScreen #ex-shown { color: $text-muted; padding: 0 1; height: 2; }
    ExplorerScreen #ex-right { width: 1fr; height: 1fr; }
    ExplorerScreen #ex-input { height: 4; padding: 0 1; overflow: hidden; }
    ExplorerScreen #ex-tree { height: 1fr; }
    ExplorerScreen #ex-tokens { height: 1fr; }
    ExplorerScreen .ex-pane { height: 1fr; display: none; }
    ExplorerScreen.-short-tree #ex-tree { height: auto; max-height: 40%; }
    """

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
        self.instances: list[dict[str, Any]] = []
        self.by_id: dict[str, dict[str, Any]] = {}
        self.cache = InstanceCache()
        self.current: str | None = None
        self.filter = InstanceFilter()
        self.loaded = False
        self.shown_node: tuple[str, NodeRef] | None = None
        self.typing_until = 0.0
        self.suites: tuple[str, ...] = ()
        """The run's suites (known once its instances are loaded)."""
        self.related: dict[str, tuple[object, ...]] = {}
        """By method: the related runs whose items the instances show (known with the
        suites)."""
        self.methods: list[Method[Any]] = []
        """The methods of the run's suites (known with the suites)."""

    @property
    def sort_by_sos(self) -> bool:
        """Whether the list is sorted by SoS."""
        return self.filter.sort_key == "sos"

    @property
    def metric_specs(self) -> list[MetricSpec]:
        """The metrics of the run's methods (``?`` defines them)."""
        return [spec for method in self.methods for spec in method.metrics]

    def compose(self) -> ComposeResult:
        """Header; instances | (input, tree, tokens); footer."""
        yield Header()
        with Horizontal(id="ex-main"):
            with Vertical(id="ex-left"):
                yield Input(placeholder="/ search texts, answers…", id="ex-search")
                yield Input(placeholder="f ranges: sos>0.5 rs<0.3", id="ex-ranges")
                yield Static("", id="ex-filter-error", classes="-empty")
                yield Static("loading …", id="ex-shown")
                yield InstanceList(id="ex-instances")
            with Vertical(id="ex-right"):
                yield Static("loading …", id="ex-input")
                yield StanceTree(id="ex-tree")
                yield TokenView(id="ex-tokens")
                for name, part in self.parts.items():
                    pane = part.pane()
                    pane.id = f"ex-{name}"
                    yield pane.add_class("ex-pane")
                yield Legend(EXPLORER_MARKS, id="ex-legend")
        yield KeyFooter()

    def on_mount(self) -> None:
        """The instances, from a worker."""
        self.sub_title = f"run {self.run_id}"
        for problem in self.part_problems:
            self.notify(problem, severity="error")
        self.load_instances()

    # -- workers (read, post a message, touch no widget) ---------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="explorer-list")
    def load_instances(self) -> None:
        """Read the run's instances (and its full id: the screen may have been given a prefix),
        then the instance it opens on with its neighbours (the same read a key would start,
        without waiting for the list to be shown first), then the answers the search reads.
        The run, its stored notes and related runs, the rows, those instances and the answers
        read before from the database as it is now (no write since: the runs list reads them
        ahead) are not read again; the notes still pending for the file are read each time."""
        want_rows(self.reader, self.run_id)  # (being read ahead: its instances come next)
        state = self.reader.database_state()  # (before reading: what is read is as new)
        with self.reader.reading() as store:
            run, notes, related = kept_run_context(store, self.run_id, self.parts, state)
            # (the queue read while the file is read: a note stored meanwhile leaves neither)
            notes = notes_and_pending(notes, run.run_id, self.reader.path)
        suites = RunConfig.model_validate_json(run.config_json).suites
        wait_for_rows(self.reader, run.run_id)  # (being read ahead: kept, not read twice)
        methods = methods_of(RunConfig(suites=suites))
        schema = ListSchema.of(methods)
        with self.reader.reading() as store:
            rows = add_notes(run_rows(store, run.run_id, schema, state), notes)
        ids = opening_ids(rows)
        loaded = InstancesLoaded(prepare(rows), run.run_id, suites, related, schema, ids)
        self.post_message(loaded)
        try:
            if ids:  # (read ahead: kept, shown at once)
                metrics = metric_names(methods)
                attached = self._attached(related)
                self._read(list(ids), run.run_id, attached, metrics, keep_at=state)
        finally:  # (the search reads them, even if that instance could not be read)
            with self.reader.reading() as store:
                answers = kept_answers(store, run.run_id, state)
            self.post_message(AnswersRead(run.run_id, answers))

    def worker_failed(self, group: str, error: BaseException) -> None:
        """The run's instances not read: said where "loading …" was (not for ever)."""
        if group == "explorer-list" and not self.loaded:
            line = failure_text("read the run's instances", error)
            self.query_one("#ex-shown", Static).update(line)
            self.query_one("#ex-input", Static).update(line)

    # -- handlers --------------------------------------------------------------------------------

    @on(InstancesLoaded)
    def show_instances(self, message: InstancesLoaded) -> None:
        """Keep the rows; show those the filters pass."""
        self.run_id, self.instances = message.run_id, message.rows
        self.suites, self.related = message.suites, message.related
        self.methods = methods_of(RunConfig(suites=self.suites))
        views = {method.view for method in self.methods}
        short = any(m.name in self.parts and self.parts[m.name].short_tree for m in self.methods)
        self.set_class(short and "stances" not in views, "-short-tree")
        self.filter = replace(self.filter, schema=message.schema)
        marks = [m for name, runs in self.related.items() if runs for m in self.parts[name].marks]
        masses = any(column.mass for column in message.schema.shown)  # (p on a label mass)
        shown = (*(marks or ("low",) * masses), *(LOW_MASS_SIGN,) * masses)
        legend = message.schema.legend()
        self.query_one("#ex-legend", Legend).show(EXPLORER_MARKS + shown, legend)
        self.by_id = {str(row["instance_id"]): row for row in message.rows}
        self.loaded = True
        self.reading.update(message.reading)  # (their read is under way: not asked twice)
        rows = self.visible_instances()  # (filtered once: 5,000 rows take ~10 ms)
        start = None if self.current else first_with_reasons(rows)
        self.fill_table(keep=start, rows=rows)
        if start is not None:  # the cursor was put there without a Highlighted message
            self.select_instance(start)
        self.haf_app.freeze_after_load(self)

    def visible_instances(self) -> list[dict[str, Any]]:
        """The instances the filters pass, in the chosen order."""
        return self.filter.apply(self.instances)

    def fill_table(self, keep: str | None = None, rows: list[dict[str, Any]] | None = None) -> None:
        """(Re)fill the list with ``rows`` (default: :meth:`visible_instances`), keeping ``keep``
        (default: the current instance) under the cursor if it is shown."""
        rows = self.visible_instances() if rows is None else rows
        key = self.filter.sort_key
        extra = None if key == "position" else key
        self.instance_list.set_rows(rows, keep or self.current, extra, self.filter.schema)
        shown = f"{len(rows)} of {len(self.instances)} instances shown"
        line = Text(f"{shown} · {self.filter.describe()}")
        self.query_one("#ex-shown", Static).update(line, layout=False)
        if not rows and self.loaded:
            self.current = self.shown_node = None
            self.query_one("#ex-input", Static).update("no instance passes the filters (a: all)")
            self.query_one("#ex-tree", StanceTree).show_nothing()
            self.query_one("#ex-tokens", TokenView).show("—", [], {}, None, "")
            self._show_view("tokens")

    @on(InstanceList.Highlighted, "#ex-instances")
    def row_highlighted(self, event: InstanceList.Highlighted) -> None:
        """The cursor moved: show that instance (unless the list moved on since: a filter that
        leaves none shows none)."""
        if event.instance_id == self.instance_list.current_id:
            self.select_instance(event.instance_id)

    def select_instance(self, instance_id: str) -> None:
        """Show an instance from the cache, or read it (with its neighbours) first."""
        if instance_id == self.current and instance_id in self.cache:
            return
        self.current = instance_id
        data = self.cache.get_fresh(instance_id)
        if data is not None:
            self.show_instance(data)
            self.read_neighbours(instance_id)
        elif monotonic() < self.typing_until:  # read it once typing pauses
            self.query_one("#ex-input", Static).update(f"{instance_id} …", layout=False)
            self.set_timer(TYPING_PAUSE, lambda: self._read_later(instance_id))
        else:
            self._read_now(instance_id)

    def show_instance(self, data: InstanceData) -> None:
        """Input text, stance, tree and the JUSTIFY tokens."""
        row = self.by_id.get(data.instance_id, {})
        head = Text(f"{data.instance_id}", style="bold")
        head.append(f"  label {row.get('label') or '—'}")
        if not self.methods or any(m.view == "stances" for m in self.methods):  # (the stance)
            head.append(f"  stance {row.get('stance') or '—'}")
            head.append(f" (C={fmt(row.get('justify_confidence'))})")
        if row.get("stopped"):
            head.append(f"  stopped: {row['stopped']}", style="italic")
        head.append("\n" + " ".join(str(row.get("text", "")).split()), style="")
        self.query_one("#ex-input", Static).update(head, layout=False)
        tree = self.query_one("#ex-tree", StanceTree)
        tree.show(
            data.instance_id,
            row.get("stance"),
            data.detail,
            self.suites or None,
            data.attached,
            metrics=data.metrics,
            text=str(row.get("text") or ""),
        )
        tree.show_note(
            row.get("note"),
            bookmarked=bool(row.get("bookmarked")),
            pending=bool(row.get("pending")),
        )
        self.show_node(tree.root.data or NodeRef("justify"))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """← → move the token cursor except in a text box (there they move the caret)."""
        if action == "token" and isinstance(self.focused, Input | TextArea):
            return None
        return True

    # -- actions ---------------------------------------------------------------------------------

    def action_back(self) -> None:
        """From a text box back to the list; else back to the runs."""
        if isinstance(self.focused, Input):
            self.instance_list.focus()
        else:
            self.app.pop_screen()

    def action_step(self, delta: int) -> None:
        """Next / previous shown instance."""
        table = self.instance_list
        if table.row_count:
            table.move_cursor(table.cursor_row + delta)
