"""The SQL screen's side panel: the named-query library, or the schema browser (the haf
schema's tables and views with their columns and types, and the named queries, in a Tree;
``enter`` on a name asks to insert it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import OptionList, Static, Tree
from textual.widgets.option_list import Option

from haf_tui.store.readers import SchemaColumn


def schema_names(columns: Sequence[SchemaColumn]) -> list[str]:
    """Every table, view and column name, once each (what completion offers)."""
    names: dict[str, None] = {}
    for column in columns:
        names.setdefault(column.table)
        names.setdefault(column.column)
    return list(names)


@dataclass
class NameChosen(Message):
    """A name was chosen in the schema browser: a table's or column's to insert into the
    editor, or a named query's (``query``) to open."""

    name: str
    query: bool = False


class SchemaTree(Tree[str]):
    """Tables, views and named queries; a leaf's data is the name it inserts."""

    DEFAULT_CSS = """
    SchemaTree { width: 1fr; height: 1fr; padding: 0; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("haf schema", id=id)
        self.show_root = False

    def fill(self, columns: Sequence[SchemaColumn], queries: Sequence[str]) -> None:
        """Show ``columns`` grouped by table (tables, then views), then ``queries``."""
        self.clear()
        groups = {
            "table": self.root.add("tables", expand=True),
            "view": self.root.add("views", expand=True),
        }
        current: tuple[str, str] | None = None
        node = None
        for column in columns:
            if (column.kind, column.table) != current:
                current = (column.kind, column.table)
                group = groups.get(column.kind, groups["table"])
                node = group.add(Text(column.table, style="bold"), data=column.table)
            assert node is not None
            label = Text(column.column)
            label.append(f"  {column.data_type}", style="dim")
            node.add_leaf(label, data=column.column)
        named = self.root.add("named queries", expand=False)
        for name in queries:
            named.add_leaf(name, data=name)
        for group in groups.values():
            if not group.children:
                group.remove()

    @on(Tree.NodeSelected)
    def choose(self, event: Tree.NodeSelected[str]) -> None:
        """``enter`` on a table, column or query: ask to insert its name."""
        event.stop()
        name = event.node.data
        if name:
            parent = event.node.parent
            is_query = parent is not None and str(parent.label) == "named queries"
            self.post_message(NameChosen(name, query=is_query))


@dataclass
class QueryPicked(Message):
    """A named query was highlighted (``chosen`` False) or chosen in the library, with the
    mouse (``clicked``: the focus stays in the library) or with ``enter``."""

    name: str
    chosen: bool
    clicked: bool = False


class LibraryList(OptionList):
    """The named-query library: an OptionList that remembers whether the option chosen last
    was clicked (a click chooses, as ``enter`` does, but the focus stays where it was clicked)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.clicked: int | None = None
        """The option a click chose, until its choice is handled."""

    async def _on_click(self, event: events.Click) -> None:
        # (Textual calls OptionList's own handler after this one: it chooses the option)
        self.clicked = event.style.meta.get("option")

    def take_click(self, index: int) -> bool:
        """Whether the choice of option ``index`` came from a click (said once)."""
        clicked, self.clicked = self.clicked == index, None
        return clicked


class SqlSide(Horizontal):
    """The SQL screen's side panel: the named-query library or the schema browser (one at a
    time); the browser is filled when first shown."""

    DEFAULT_CSS = """
    SqlSide { width: auto; height: 1fr; }
    SqlSide .sql-side { width: 32; height: 1fr; border-right: vkey $primary-background; }
    SqlSide .sql-side.-hidden { display: none; }
    SqlSide #library {
        height: 1fr; border: none; scrollbar-gutter: stable; text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.queries: list[str] = []
        self.columns: list[SchemaColumn] = []

    def compose(self) -> ComposeResult:
        """The library (shown) and the schema browser (hidden)."""
        with Vertical(id="sql-library", classes="sql-side"):
            yield Static("Queries", classes="title")
            yield LibraryList(id="library")
        with Vertical(id="sql-schema", classes="sql-side -hidden"):
            yield Static("Schema", classes="title")
            yield SchemaTree(id="schema")

    def fill(self, queries: list[str], columns: list[SchemaColumn]) -> None:
        """List the named queries; keep the schema for the browser."""
        self.queries, self.columns = queries, columns
        options = self.query_one("#library", OptionList)
        # one line each (CSS: no wrap), whatever the width: a wrapped name moved the rows as
        # the scrollbar came, so the list's layout depended on timing; the hint line names it
        options.add_options(Option(Text(name, style="bold"), id=name) for name in queries)

    def toggle(self, panel_id: str) -> bool:
        """Show ``sql-library`` or ``sql-schema`` instead of the other; focus it when shown
        but not focused; hide it when it has the focus. Returns whether it is shown now (its
        list then has the focus)."""
        panel = self.query_one(f"#{panel_id}")
        focused = self.screen.focused
        if focused is not None and (focused is panel or panel in focused.ancestors):
            panel.add_class("-hidden")  # (shown and in use: the key hides it)
            return False
        for side in self.query(".sql-side"):
            side.set_class(side.id != panel_id, "-hidden")
        if panel_id == "sql-schema":
            tree = self.query_one("#schema", SchemaTree)
            if not tree.root.children:
                tree.fill(self.columns, self.queries)
            tree.focus()
        else:  # (focusable once shown: after the refresh)
            self.call_after_refresh(self.query_one("#library", OptionList).focus)
        return True

    @on(OptionList.OptionHighlighted, "#library")
    def highlighted(self, event: OptionList.OptionHighlighted) -> None:
        """Say which query is highlighted."""
        self.post_message(QueryPicked(event.option.id or "", chosen=False))

    @on(OptionList.OptionSelected, "#library")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        """Say which query was chosen, and whether by a click."""
        clicked = self.query_one("#library", LibraryList).take_click(event.option_index)
        self.post_message(QueryPicked(event.option.id or "", chosen=True, clicked=clicked))
