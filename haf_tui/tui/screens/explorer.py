"""Explorer: one run's instances, the stance/reason tree of the selected one, and the tokens
of the selected generation (NLL or relevance colouring, top-k alternatives, the prompt)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Input, Static, Tree

from haf_tui.reports import run_named
from haf_tui.tui.screens.base import HafScreen
from haf_tui.tui.widgets.stance_tree import NodeRef, StanceTree, fmt
from haf_tui.tui.widgets.token_view import Span, Token, TokenView

TOKENS_SQL = """
SELECT stage, sub_index, text, logprob, top_texts, top_logprobs FROM tokens
WHERE run_id = $run_id AND instance_id = $instance_id ORDER BY stage, sub_index, position
"""
REASONS_SQL = """
SELECT stage, sub_index, reason_index, token_first, token_count, relevance FROM reasons
WHERE run_id = $run_id AND instance_id = $instance_id AND token_first IS NOT NULL
"""
PROMPTS_SQL = """
SELECT stage, sub_index, prompt_text FROM generations
WHERE run_id = $run_id AND instance_id = $instance_id
"""
COLUMNS = ("id", "stance", "#r", "SoS", "stopped")

GenKey = tuple[str, int]


@dataclass
class InstanceData:
    """Everything the explorer shows of one instance, read once and cached."""

    instance_id: str
    detail: list[dict[str, Any]]
    tokens: dict[GenKey, list[Token]] = field(default_factory=dict)
    spans: dict[GenKey, dict[int, Span]] = field(default_factory=dict)
    prompts: dict[GenKey, str] = field(default_factory=dict)


@dataclass
class InstancesLoaded(Message):
    """The run's instances (rows of the ``instances`` query, as dicts)."""

    rows: list[dict[str, Any]]


@dataclass
class InstanceLoaded(Message):
    """One instance's generations, tokens and reason spans."""

    data: InstanceData


def _dicts(result: tuple[list[str], list[tuple[Any, ...]]]) -> list[dict[str, Any]]:
    columns, rows = result
    return [dict(zip(columns, row, strict=True)) for row in rows]


class ExplorerScreen(HafScreen[None]):
    """One run: instances on the left; the tree and the token view on the right."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("n", "step(1)", "Next"),
        Binding("p", "step(-1)", "Prev"),
        Binding("left_square_bracket", "token(-1)", "◀ tok", show=False),
        Binding("right_square_bracket", "token(1)", "tok ▶", show=False),
        Binding("left", "token(-1)", "◀ tok"),
        Binding("right", "token(1)", "tok ▶"),
        Binding("c", "colour", "NLL/relevance"),
        Binding("r", "prompt", "Prompt"),
        Binding("o", "sort", "Sort SoS"),
        Binding("slash", "search", "Search"),
    ]

    DEFAULT_CSS = """
    ExplorerScreen #ex-main { height: 1fr; }
    ExplorerScreen #ex-left { width: 44; height: 1fr; }
    ExplorerScreen.-narrow #ex-left { width: 28; }
    ExplorerScreen.-wide #ex-left { width: 56; }
    ExplorerScreen #ex-search { height: 3; }
    ExplorerScreen #ex-right { width: 1fr; height: 1fr; }
    ExplorerScreen #ex-input { height: auto; max-height: 6; padding: 0 1; overflow: hidden; }
    ExplorerScreen #ex-tree { height: 1fr; }
    ExplorerScreen #ex-tokens { height: 1fr; }
    """

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
        self.instances: list[dict[str, Any]] = []
        self.cache: dict[str, InstanceData] = {}
        self.current: str | None = None
        self.sort_by_sos = False

    def compose(self) -> ComposeResult:
        """Header; instances | (input, tree, tokens); footer."""
        yield Header()
        with Horizontal(id="ex-main"):
            with Vertical(id="ex-left"):
                yield Input(placeholder="search text…", id="ex-search")
                yield DataTable(id="ex-instances", cursor_type="row", zebra_stripes=True)
            with Vertical(id="ex-right"):
                yield Static("loading …", id="ex-input")
                yield StanceTree(id="ex-tree")
                yield TokenView(id="ex-tokens")
        yield Footer()

    def on_mount(self) -> None:
        """Columns, then the instances from a worker."""
        self.sub_title = f"run {self.run_id}"
        self.query_one("#ex-instances", DataTable).add_columns(*COLUMNS)
        self.query_one("#ex-instances", DataTable).focus()
        self.load_instances()

    # -- workers (read, post a message, touch no widget) ---------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="explorer-list")
    def load_instances(self) -> None:
        """Read the run's instances."""
        rows = _dicts(run_named(self.reader.store(), "instances", {"run_id": self.run_id}))
        self.post_message(InstancesLoaded(rows))

    @work(thread=True, exclusive=True, exit_on_error=False, group="explorer-instance")
    def load_instance(self, instance_id: str) -> None:
        """Read one instance: its generations and reasons, tokens, spans and prompts."""
        params = {"run_id": self.run_id, "instance_id": instance_id}
        store = self.reader.store()
        data = InstanceData(instance_id, _dicts(run_named(store, "instance_detail", params)))
        token_rows = store.query(TOKENS_SQL, params)[1]
        for stage, sub, text, logprob, top_texts, top_logprobs in token_rows:
            token = Token(text, logprob, top_texts or (), top_logprobs or ())
            data.tokens.setdefault((stage, sub), []).append(token)
        for stage, sub, index, first, count, relevance in store.query(REASONS_SQL, params)[1]:
            data.spans.setdefault((stage, sub), {})[index] = Span(first, count, relevance or ())
        for stage, sub, prompt in store.query(PROMPTS_SQL, params)[1]:
            data.prompts[(stage, sub)] = prompt
        self.post_message(InstanceLoaded(data))

    # -- handlers --------------------------------------------------------------------------------

    @on(InstancesLoaded)
    def show_instances(self, message: InstancesLoaded) -> None:
        """Keep the rows; fill the table."""
        self.instances = message.rows
        self.fill_table()

    def visible_instances(self) -> list[dict[str, Any]]:
        """The instances matching the search, in dataset order or by SoS (best first)."""
        needle = self.query_one("#ex-search", Input).value.strip().lower()
        rows = [
            row
            for row in self.instances
            if not needle or needle in f"{row['instance_id']} {row['text']}".lower()
        ]
        if self.sort_by_sos:
            rows.sort(key=lambda row: (row["sos"] is None, -(row["sos"] or 0.0)))
        return rows

    def fill_table(self) -> None:
        """(Re)fill the instance table, keeping the current instance under the cursor."""
        table = self.query_one("#ex-instances", DataTable)
        table.clear()
        rows = self.visible_instances()
        for row in rows:
            table.add_row(
                row["instance_id"],
                row["stance"] or "—",
                "—" if row["n_reasons"] is None else str(row["n_reasons"]),
                fmt(row["sos"], 3),
                row["stopped"] or "",
                key=row["instance_id"],
            )
        ids = [row["instance_id"] for row in rows]
        if self.current in ids:
            table.move_cursor(row=ids.index(self.current))
        elif ids:
            table.move_cursor(row=0)
            self.select_instance(ids[0])

    @on(DataTable.RowHighlighted, "#ex-instances")
    def row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The cursor moved: show that instance."""
        if event.row_key.value is not None:
            self.select_instance(str(event.row_key.value))

    def select_instance(self, instance_id: str) -> None:
        """Show an instance from the cache, or read it first."""
        if instance_id == self.current and instance_id in self.cache:
            return
        self.current = instance_id
        if instance_id in self.cache:
            self.show_instance(self.cache[instance_id])
        else:
            self.query_one("#ex-input", Static).update(f"loading {instance_id} …")
            self.load_instance(instance_id)

    @on(InstanceLoaded)
    def instance_loaded(self, message: InstanceLoaded) -> None:
        """Cache it; show it if it is still the selected one."""
        self.cache[message.data.instance_id] = message.data
        if message.data.instance_id == self.current:
            self.show_instance(message.data)

    def show_instance(self, data: InstanceData) -> None:
        """Input text, stance, tree and the JUSTIFY tokens."""
        row = next((r for r in self.instances if r["instance_id"] == data.instance_id), {})
        head = Text(f"{data.instance_id}", style="bold")
        head.append(f"  label {row.get('label') or '—'}  stance {row.get('stance') or '—'}")
        head.append(f" (C={fmt(row.get('justify_confidence'))})")
        if row.get("stopped"):
            head.append(f"  stopped: {row['stopped']}", style="italic")
        head.append("\n" + " ".join(str(row.get("text", "")).split()), style="")
        self.query_one("#ex-input", Static).update(head)
        tree = self.query_one("#ex-tree", StanceTree)
        tree.show(data.instance_id, row.get("stance"), data.detail)
        self.show_node(NodeRef("justify"))

    def show_node(self, ref: NodeRef | None) -> None:
        """Show the node's generation in the token view."""
        data = self.cache.get(self.current or "")
        if ref is None or data is None:
            return
        key = (ref.stage, ref.sub_index)
        title = ref.stage if ref.sub_index < 0 else f"{ref.stage}[{ref.sub_index + 1}]"
        if ref.reason_index is not None:
            title += f" reason {ref.reason_index + 1}"
        self.query_one("#ex-tokens", TokenView).show(
            title,
            data.tokens.get(key, []),
            data.spans.get(key, {}),
            ref.reason_index,
            data.prompts.get(key, ""),
        )

    @on(Tree.NodeHighlighted, "#ex-tree")
    def node_highlighted(self, event: Tree.NodeHighlighted[NodeRef | None]) -> None:
        """The tree cursor moved: show that generation."""
        self.show_node(event.node.data)

    @on(Input.Changed, "#ex-search")
    def search_changed(self) -> None:
        """Filter the list as you type."""
        self.fill_table()

    @on(Input.Submitted, "#ex-search")
    def search_submitted(self) -> None:
        """Enter in the search goes to the list."""
        self.query_one("#ex-instances", DataTable).focus()

    # -- actions ---------------------------------------------------------------------------------

    def action_back(self) -> None:
        """Back to the runs."""
        self.app.pop_screen()

    def action_step(self, delta: int) -> None:
        """Next / previous instance."""
        table = self.query_one("#ex-instances", DataTable)
        if table.row_count:
            table.move_cursor(row=min(table.row_count - 1, max(0, table.cursor_row + delta)))

    def action_token(self, delta: int) -> None:
        """Move the token cursor."""
        self.query_one("#ex-tokens", TokenView).move(delta)

    def action_colour(self) -> None:
        """Colour by NLL or by relevance."""
        self.query_one("#ex-tokens", TokenView).toggle_mode()

    def action_prompt(self) -> None:
        """Show the prompt instead of the output (or back)."""
        self.query_one("#ex-tokens", TokenView).toggle_prompt()

    def action_sort(self) -> None:
        """Dataset order, or by SoS."""
        self.sort_by_sos = not self.sort_by_sos
        self.fill_table()

    def action_search(self) -> None:
        """Focus the search box."""
        self.query_one("#ex-search", Input).focus()
