"""The explorer's detail side: reading the instances it shows (the one under the cursor with its
neighbours, in thread workers, into a cache), and the generation of the tree's node under the
cursor in the token view, or, for a node of a method's own part of the workbench
(``Method.workbench``: :mod:`~haf_tui.tui.method_parts`), that method's pane in its place, read
when first shown and kept (or the item of a related run it attaches, read with the instance)."""

from __future__ import annotations

from collections import OrderedDict
from time import monotonic
from typing import Any, cast

from rich.text import Text
from textual import on, work
from textual.widgets import Static, Tree

from haf_tui.methods.declare import Method
from haf_tui.methods.registry import method_named, methods
from haf_tui.tui.instance_reader import (
    CACHE_SIZE,
    WITH_MISSING,
    InstanceCache,
    InstanceData,
    InstancesRead,
    PaneRead,
    kept_opening,
    metric_names,
    read_instances,
)
from haf_tui.tui.method_parts import (
    AttachedReader,
    DetailPane,
    NodeRef,
    attached_readers,
    explorer_parts,
)
from haf_tui.tui.run_cache import DatabaseState
from haf_tui.tui.screens.explorer_filters import FilteredScreen
from haf_tui.tui.widgets.token_view import TokenView
from haf_tui.vocabulary import error_line

LOADING_DELAY = 0.15
"""Seconds before a slow instance read says "loading" (a fast one just appears)."""
AHEAD, BEHIND = 8, 3
"""The shown rows after and before the cursor read ahead while the instance under it shows
(one read of several instances costs little more than one of a single instance), so that
stepping finds them cached."""


class DetailScreen(FilteredScreen):
    """The token view, or a method's pane in its place (see the module)."""

    run_id: str
    cache: InstanceCache
    current: str | None
    methods: list[Method[Any]]
    shown_node: tuple[str, NodeRef] | None
    related: dict[str, tuple[object, ...]]

    def __init__(self) -> None:
        super().__init__()
        self.reading: set[str] = set()
        """Ids a read under way will bring (none is asked for twice)."""
        self.parts, self.part_problems = explorer_parts(methods().values())
        """The methods' own parts of the explorer by method name (and why any could not be
        loaded: said once the screen shows)."""
        self.panes = {part.stage: name for name, part in self.parts.items()}
        """The method whose pane a node of each pane stage opens."""
        self.pane_data: OrderedDict[tuple[str, str], object] = OrderedDict()
        """What the panes showed, by (method, instance) (least recently read dropped beyond the
        instance cache's size)."""

    @work(thread=True, exclusive=True, exit_on_error=False, group="explorer-instance")
    def load_batch(self, ids: list[str]) -> None:
        """Read instances (the one under the cursor first in ``ids``, then its neighbours)."""
        self._read(ids)

    @work(thread=True, exclusive=True, exit_on_error=False, group="explorer-prefetch")
    def prefetch(self, ids: list[str]) -> None:
        """Read the shown neighbours of the cursor before they are asked for."""
        self._read(ids)

    def _read(
        self,
        ids: list[str],
        run_id: str | None = None,
        attached: dict[str, AttachedReader] | None = None,
        metrics: list[str] | None = None,
        keep_at: DatabaseState | None = None,
    ) -> None:
        """Read ``ids`` and post them (the run's, its parts' and metrics unless given;
        ``keep_at``: the database's state the instances the explorer opens on were read at,
        kept by it as the runs list keeps them when it reads ahead; None: read, not kept)."""
        found: list[InstanceData] = []
        failed: str | None = None
        if metrics is None:
            metrics = metric_names(self.methods)
        try:
            with self.reader.reading() as store:
                attached = self._attached() if attached is None else attached
                run = run_id or self.run_id
                if keep_at is None:
                    found = read_instances(store, run, ids, attached, metrics)
                else:
                    found = kept_opening(store, run, tuple(ids), attached, metrics, keep_at)
        except Exception as exc:
            failed = error_line(exc)
            raise  # (the app's notification too)
        finally:  # even a failed read says what it no longer brings, and why
            self.post_message(InstancesRead(found, ids, failed))

    def _read_now(self, instance_id: str) -> None:
        # "loading" only if the read is slow: a quick one shows the instance in one frame
        self.set_timer(LOADING_DELAY, lambda: self._loading(instance_id))
        if instance_id not in self.reading:
            ids = [instance_id, *self.neighbours(instance_id, *WITH_MISSING)]
            self.reading.update(ids)
            self.load_batch(ids)

    def neighbours(self, instance_id: str, ahead: int = AHEAD, behind: int = BEHIND) -> list[str]:
        """The shown rows near ``instance_id`` (after it first) not cached or being read."""
        rows = self.instance_list.rows
        at = self.instance_list.cursor_row
        if not rows or str(rows[min(at, len(rows) - 1)]["instance_id"]) != instance_id:
            return []
        near = [*rows[at + 1 : at + 1 + ahead], *rows[max(at - behind, 0) : at][::-1]]
        ids = (str(row["instance_id"]) for row in near)
        return [i for i in ids if i not in self.cache and i not in self.reading]

    def read_neighbours(self, instance_id: str) -> None:
        """Read ahead when the next or previous shown row is not cached (one read at a time:
        a read under way is never given up)."""
        missing = self.neighbours(instance_id)
        rows, at = self.instance_list.rows, self.instance_list.cursor_row
        close = {str(r["instance_id"]) for r in rows[max(at - 1, 0) : at + 3]}
        if missing and not self.reading and close.intersection(missing):
            self.reading.update(missing)
            self.prefetch(missing)

    def _loading(self, instance_id: str) -> None:
        reading = instance_id in self.reading  # (not read yet, nor failed)
        if self.current == instance_id and instance_id not in self.cache and reading:
            self.query_one("#ex-input", Static).update(f"loading {instance_id} …", layout=False)

    def _read_later(self, instance_id: str) -> None:
        if self.current == instance_id and instance_id not in self.cache:
            wait = self.typing_until - monotonic()
            if wait > 0:
                self.set_timer(wait, lambda: self._read_later(instance_id))
            else:
                self._read_now(instance_id)

    @on(InstancesRead)
    def instances_read(self, message: InstancesRead) -> None:
        """Cache them; show the selected one if it came."""
        self.reading.difference_update(message.requested)
        for found in message.found:
            self.cache.put(found)
        current = self.current
        if current is None or current not in message.requested:
            return
        data = self.cache.get_fresh(current)
        if data is not None:
            self.show_instance(data)
            self.read_neighbours(current)
        elif message.failed is not None:  # (said where "loading" was; moving to it reads again)
            line = f"could not read {current}: {message.failed}"
            self.query_one("#ex-input", Static).update(Text(line), layout=False)

    def show_instance(self, data: InstanceData) -> None:
        """Show an instance read (the explorer draws it)."""
        raise NotImplementedError

    @work(thread=True, exclusive=True, exit_on_error=False, group="explorer-pane")
    def load_pane(self, name: str, instance_id: str) -> None:
        """Read what method ``name``'s pane shows of an instance (its node shows it)."""
        found: object | None = None
        read = self.parts[name].read
        try:
            with self.reader.reading() as store:
                if read is not None:
                    found = read(store, self.run_id, instance_id, method_named(name))
        finally:  # (a failed read is reported by the app)
            self.post_message(PaneRead(name, instance_id, found))

    def show_node(self, ref: NodeRef | None) -> None:
        """Show the node's generation in the token view (unless it shows it already)."""
        data = self.cache.get(self.current or "")
        if ref is None or data is None or (data.instance_id, ref) == self.shown_node:
            return
        self.shown_node = (data.instance_id, ref)
        if ref.stage in self.panes and self.parts[self.panes[ref.stage]].read is None:
            name = self.panes[ref.stage]  # (an item of a related run, read with the instance)
            items = data.attached.get(name, ())
            self._show_view(name)
            self._pane(name).show(items[ref.sub_index] if ref.sub_index < len(items) else None)
            return
        if ref.stage in self.panes:
            self.show_pane(self.panes[ref.stage], data.instance_id)
            return
        self._show_view("tokens")
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

    def _show_view(self, name: str) -> None:
        """The token view, or a method's pane in its place (by its id's end)."""
        for n in ("tokens", *self.parts):
            view = self.query_one(f"#ex-{n}")
            if view.display != (n == name):  # (a layout only when it changes)
                view.display = n == name

    def _attached(
        self, related: dict[str, tuple[object, ...]] | None = None
    ) -> dict[str, AttachedReader]:
        """Each method's reader of its items of the related runs (the parts that have some;
        ``related``: those runs, by method, when not yet the screen's)."""
        return attached_readers(self.parts, self.related if related is None else related)

    def _pane(self, name: str) -> DetailPane:
        return cast("DetailPane", self.query_one(f"#ex-{name}"))

    def show_pane(self, name: str, instance_id: str) -> None:
        """Show method ``name``'s pane of an instance: read already, or read first ("loading"
        if that is slow)."""
        self._show_view(name)
        found = self.pane_data.get((name, instance_id))
        if found is not None:
            self.pane_data.move_to_end((name, instance_id))
            self._pane(name).show(found)
            return
        self._pane(name).show_message("")
        self.set_timer(LOADING_DELAY, lambda: self._pane_loading(name, instance_id))
        self.load_pane(name, instance_id)

    def _pane_shown(self, name: str, instance_id: str) -> bool:
        return self.shown_node == (instance_id, NodeRef(self.parts[name].stage))

    def _pane_loading(self, name: str, instance_id: str) -> None:
        if self._pane_shown(name, instance_id) and (name, instance_id) not in self.pane_data:
            noun = self.parts[name].noun
            self._pane(name).show_message(f"loading the {noun} of {instance_id} …")

    @on(PaneRead)
    def pane_read(self, message: PaneRead) -> None:
        """Keep it; show it if its node is still the one shown."""
        name, instance_id = message.method, message.instance_id
        if message.data is None:  # (the app says why)
            if self._pane_shown(name, instance_id):
                noun = self.parts[name].noun
                self._pane(name).show_message(f"the {noun} of {instance_id} could not be read")
            return
        self.pane_data[name, instance_id] = message.data
        self.pane_data.move_to_end((name, instance_id))
        while len(self.pane_data) > CACHE_SIZE:
            self.pane_data.popitem(last=False)
        if self._pane_shown(name, instance_id):
            self._pane(name).show(message.data)

    @on(Tree.NodeHighlighted, "#ex-tree")
    def node_highlighted(self, event: Tree.NodeHighlighted[NodeRef | None]) -> None:
        """The tree cursor moved: show that generation."""
        self.show_node(event.node.data)

    def action_token(self, delta: int) -> None:
        """Move the token cursor."""
        self.query_one("#ex-tokens", TokenView).move(delta)

    def action_colour(self) -> None:
        """Colour by NLL or by relevance."""
        self.query_one("#ex-tokens", TokenView).toggle_mode()

    def action_prompt(self) -> None:
        """Show the prompt instead of the output (or back)."""
        self.query_one("#ex-tokens", TokenView).toggle_prompt()
