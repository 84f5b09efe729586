"""The comparison view's instance pane: the chosen runs' finished instances in order, one of
them read across the runs in a thread worker and drawn side by side (``]`` / ``[`` step, ``/``
finds an id). :class:`~haf_tui.tui.screens.compare.CompareScreen` builds on it."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import on, work
from textual.widgets import DataTable, Input, TabbedContent

from haf_tui.store.comparison_readers import instance_across
from haf_tui.tui.compare_data import CompareData, RunStatistics, instance_order
from haf_tui.tui.screens.base import HafScreen
from haf_tui.tui.screens.compare_messages import InstanceDrawn
from haf_tui.tui.widgets.compare_tables import instance_parts, statistics_parts
from haf_tui.tui.widgets.panel_view import PanelView, render_strips
from haf_tui.vocabulary import error_line

DRAW = "compare: statistics or instance"
"""The drawing workers' description (else Textual writes one from the repr of their arguments,
every instance value: 0.12 s on the event loop at 5,000 × 4)."""


class InstancePane(HafScreen[None]):
    """The instances to step through and the one shown (the data and statistics: the
    comparison's); a failed read or computation said where it was waited for."""

    def __init__(self) -> None:
        super().__init__()
        self.data: CompareData | None = None
        self.stats: list[RunStatistics] = []
        self.instances: list[str] = []
        self.instance_index = 0
        self.instance_shown_for: tuple[tuple[str, ...], int] | None = None
        """The chosen runs and width the instance was last read for (None: not read yet)."""
        self.read_failed: str | None = None
        """What stopped the runs' or values' read (None: read, or being read)."""
        self.stats_failed: str | None = None
        """What stopped the chosen runs' statistics (None: computed, or being computed): the
        instance, drawn with them, says it too."""

    def update_status(self, doing: str | None = None) -> None:
        """The line under the runs (the comparison's)."""

    def reading_note(self) -> str:
        """What the status line says while the values are not read: being read, or what
        stopped their read."""
        return self.read_failed or "reading instances …"

    def worker_failed(self, group: str, error: BaseException) -> None:
        """What failed, said on the status line and in the pane that waited for it, in place
        of "reading" or "loading" forever (the runs listed can still be chosen)."""
        line = error_line(error)
        if group == "compare-load":
            self.read_failed = f"could not read the {'instances' if self.data else 'runs'}: {line}"
            self.update_status(self.read_failed)
            self.show_instance()  # (its "loading …" says it too)
        elif group == "compare-stats":  # (the instance is drawn with them: not either)
            self.stats, self.stats_failed = [], f"could not compute the statistics: {line}"
            self.show_instance()
            self.show_failure("#cmp-stats-view", self.stats_failed)
        elif group == "compare-instance":
            self.show_failure("#cmp-instance-view", f"could not read the instance: {line}")

    def show_failure(self, view_id: str, line: str) -> None:
        """A failure's one line in a pane, and on the status line."""
        width = self.view_width("#cmp-stats-view")
        self.query_one(view_id, PanelView).show(render_strips(Text(line), width), from_top=True)
        self.update_status(line)

    @work(
        thread=True, exclusive=True, exit_on_error=False, group="compare-instance", description=DRAW
    )
    def read_instance(
        self, stats: list[RunStatistics], instance_id: str, position: str, width: int
    ) -> None:
        """One instance across the chosen runs, drawn (posts it)."""
        run_ids = [found.run.run_id for found in stats]
        metrics = [spec.name for spec in stats[0].metrics]
        with self.reader.reading() as store:
            across = instance_across(store, run_ids, instance_id, metrics)
        lines = render_strips(instance_parts(across, stats, width, position), width)
        self.post_message(InstanceDrawn((tuple(run_ids), instance_id, width), lines))

    def view_width(self, view_id: str) -> int:
        """The width a pane draws in (its padding and a vertical scrollbar left out)."""
        view = self.query_one(view_id, PanelView)
        return max(40, (view.size.width or self.size.width) - 4)

    def order_instances(self, ids: Sequence[str]) -> None:
        """The instances of the runs ``ids`` to step through (the current one kept)."""
        if self.data is None:
            return
        current = self.current_instance()
        self.instances = instance_order(ids, self.data.values)
        self.instance_index = (
            self.instances.index(current) if current in self.instances else 0
        )  # fmt: skip

    def current_instance(self) -> str | None:
        """The instance the side-by-side pane shows."""
        if not self.instances:
            return None
        return self.instances[min(self.instance_index, len(self.instances) - 1)]

    def show_instance(self) -> None:
        """Read and draw the current instance across the chosen runs."""
        instance_id = self.current_instance()
        view = self.query_one("#cmp-instance-view", PanelView)
        width = self.view_width("#cmp-stats-view")
        if self.data is not None and not self.data.values_read:
            self.instance_shown_for = None
            view.show(render_strips(Text(self.read_failed or "loading …"), width))
            return
        self.instance_shown_for = (tuple(found.run.run_id for found in self.stats), width)
        if instance_id is None or not self.stats:
            said = Text(self.stats_failed) if self.stats_failed else statistics_parts([])
            view.show(render_strips(said, width), from_top=True)
            if self.stats_failed:  # (drawn again with the next statistics, of no run too)
                self.instance_shown_for = None
            return
        position = f"{self.instance_index + 1} of {len(self.instances)}"
        self.read_instance(self.stats, instance_id, position, self.view_width("#cmp-stats-view"))

    @on(InstanceDrawn)
    def instance_drawn(self, message: InstanceDrawn) -> None:
        """Show the instance if it is still the one asked for."""
        if message.key[1] == self.current_instance() and self.stats:  # (else: they failed)
            self.query_one("#cmp-instance-view", PanelView).show(message.lines, from_top=True)

    def action_pane(self, pane: str) -> None:
        """Show the statistics or the instance pane."""
        self.query_one("#cmp-tabs", TabbedContent).active = pane

    def action_step_instance(self, delta: int) -> None:
        """The next / previous instance (shown in the instance pane)."""
        if not self.instances:
            return
        self.instance_index = (self.instance_index + delta) % len(self.instances)
        self.action_pane("cmp-instance")
        self.update_status()
        self.show_instance()

    def action_search(self) -> None:
        """Ask for an instance id."""
        search = self.query_one("#cmp-search", Input)
        search.add_class("-shown")
        search.value = ""
        search.focus()

    @on(Input.Submitted, "#cmp-search")
    def search_submitted(self, event: Input.Submitted) -> None:
        """Go to the instance with that id (or the first whose id starts with it)."""
        wanted = event.value.strip()
        found = next((i for i in self.instances if i == wanted), None) or next(
            (i for i in self.instances if wanted and i.startswith(wanted)), None
        )
        if found is None:
            self.notify(f"no instance {wanted!r} in the chosen runs", severity="warning")
            return
        self.query_one("#cmp-search", Input).remove_class("-shown")
        self.query_one("#cmp-runs", DataTable).focus()
        self.instance_index = self.instances.index(found)
        self.action_pane("cmp-instance")
        self.update_status()
        self.show_instance()
