"""Metrics: every method's metric panels (its ``PanelSpec``s, in registry order: keys 1–9,
then ``]`` / ``[``) of the stored runs, with the runs to compare chosen side by side, and
under them the shown panel's legend.

One thread worker reads the shown panel's reports (all runs) first, then the others', and bins
the values once (:func:`~haf_tui.tui.metrics_data.load_metrics_data`); the handlers only
filter those rows by the chosen runs and draw them: a key press never waits on the database.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import ClassVar

from rich.cells import cell_len
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.strip import Strip
from textual.widgets import Header, SelectionList, Static, TabbedContent, TabPane
from textual.widgets.selection_list import Selection
from textual.worker import get_current_worker

from haf_tui.methods.declare import MetricSpec, PanelSpec
from haf_tui.store.readers import suites_text
from haf_tui.tui.definitions import legend_specs
from haf_tui.tui.messages import DrawKey, FullValueRequested, MetricsLoaded, PanelDrawn
from haf_tui.tui.metrics_data import (
    NUMBERED,
    MetricsData,
    RunInfo,
    load_metrics_data,
    panel_specs,
    run_prompts,
    tab_label,
)
from haf_tui.tui.read_ahead import stop_rows_ahead, wait_for_read_ahead
from haf_tui.tui.screens.base import HafScreen, failure_text
from haf_tui.tui.widgets.key_footer import KeyFooter
from haf_tui.tui.widgets.legend import Legend
from haf_tui.tui.widgets.marked_selection import MarkedSelectionList
from haf_tui.tui.widgets.metric_panels import POOLING_MODES, histogram_specs, render_panel
from haf_tui.tui.widgets.panel_values import full_values
from haf_tui.tui.widgets.panel_view import PanelView, render_strips

CACHE_SIZE = 24
"""Drawn panels kept (a switch back to one of them costs nothing)."""
YIELD = 0.005
"""Seconds the drawing worker pauses between panels: the event loop shows the one drawn."""
MARKS = ("—", "◆", "low", "≠ stance")
"""The marks the panels draw (the legend explains them)."""
DRAW = "metrics: draw panels"  # (not Textual's repr of every value it is handed)


class MetricsScreen(HafScreen[None]):
    """The methods' metric panels in tabs (keys 1–9, ``]`` / ``[``), the runs chosen left."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("right_square_bracket", "step_panel(1)", "Next panel", show=False),
        Binding("left_square_bracket", "step_panel(-1)", "Prev panel", show=False),
        Binding("space", "toggle_runs", "Pick runs"),
        Binding("a", "all_runs", "All/none"),
        Binding("c", "compare", "Compare", show=False),
        Binding("g", "pooling", "Pooling"),
        Binding("d", "next_metric", "Metric"),
        Binding("enter", "full_values", "Full values", show=False),
        Binding("shift+right", "scroll_panel(1)", "Scroll right", show=False),
        Binding("shift+left", "scroll_panel(-1)", "Scroll left", show=False),
    ]

    DEFAULT_CSS = """
    MetricsScreen #mx-main { height: 1fr; }
    MetricsScreen #mx-runs { width: 36; height: 1fr; border-right: vkey $primary 40%; }
    MetricsScreen #mx-run-list { height: 1fr; }
    MetricsScreen #mx-run-info { height: auto; padding: 0 1; color: $text-muted; }
    MetricsScreen.-narrow #mx-runs { display: none; width: 30; }
    MetricsScreen #mx-right { width: 1fr; height: 1fr; }
    MetricsScreen #mx-status { height: 1; padding: 0 1; color: $text-muted; }
    MetricsScreen #mx-tabs { height: 1fr; }
    MetricsScreen #mx-tabs TabPane { padding: 0; height: 1fr; }
    """

    def __init__(self, run_ids: Sequence[str] | None = None, panel: str = "") -> None:
        super().__init__()
        self.HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
        self.initial_run_ids = list(run_ids or [])
        self.panels: dict[str, PanelSpec] = {spec.key: spec for spec in panel_specs()}
        """Every method's panels by pane id, in key order."""
        first = next(iter(self.panels), "")
        self.initial_panel = panel if panel in self.panels else first
        for number, spec in enumerate(list(self.panels.values())[:NUMBERED], start=1):
            self._bindings.bind(str(number), f"panel('{spec.key}')", spec.title, show=False)
        self.data: MetricsData | None = None
        self.pooling = POOLING_MODES[0]
        self.metric_index = 0
        self.drawn: dict[DrawKey, list[Strip]] = {}

    def compose(self) -> ComposeResult:
        """Header; (runs | status line + panel tabs); footer."""
        yield Header()
        with Horizontal(id="mx-main"):
            with Vertical(id="mx-runs"):
                yield MarkedSelectionList[str](id="mx-run-list")
                yield Static("", id="mx-run-info")
            with Vertical(id="mx-right"):
                yield Static("loading …", id="mx-status")
                with TabbedContent(initial=self.initial_panel, id="mx-tabs"):
                    for number, spec in enumerate(self.panels.values(), start=1):
                        with TabPane(tab_label(number, spec), id=spec.key):
                            yield PanelView(id=f"mx-body-{spec.key}")
                yield Legend(MARKS, metrics=self.legend_of(self.initial_panel), id="mx-legend")
        yield KeyFooter()

    def on_mount(self) -> None:
        """Read everything in a worker (as the screen is shown: see ``when_shown``)."""
        self.sub_title = "metrics"
        self.query_one("#mx-run-list", SelectionList).border_title = "runs (space toggles)"
        self.when_shown(self.load_data)

    @work(thread=True, exclusive=True, exit_on_error=False, group="metrics-load")
    def load_data(self) -> None:
        """Read what the panel shown first needs, post it; then the other panels' and post all
        (reports read, or read ahead, are kept: none is read again until the file is written)."""
        stop_rows_ahead(self.reader)  # (the explorer's rows, not needed here: not beside these)
        wait_for_read_ahead(self.reader)  # (the first panel being read ahead: not read twice)
        state = self.reader.database_state()  # (before reading: what is read is as new)
        with self.reader.reading() as store:
            first = load_metrics_data(store, [self.initial_panel], state=state)
        self.post_message(MetricsLoaded(first))
        if get_current_worker().is_cancelled:
            return
        with self.reader.reading() as store:
            data = load_metrics_data(store, known=first, state=state)
        self.post_message(MetricsLoaded(data))

    def worker_failed(self, group: str, error: BaseException) -> None:
        """What failed, over the panels and in each panel not read ("loading …" for ever)."""
        what = "read the metrics" if group == "metrics-load" else "draw a panel"
        self.query_one("#mx-status", Static).update(line := failure_text(what, error))
        for pane in self.panels if group == "metrics-load" else ():
            if self.data is None or not self.data.holds(pane):
                view = self.query_one(f"#mx-body-{pane}", PanelView)
                view.show(render_strips(line, self.body_width()))

    # -- handlers --------------------------------------------------------------------------------

    @on(MetricsLoaded)
    def data_loaded(self, message: MetricsLoaded) -> None:
        """Fill the run list (the constructor's runs chosen, else all) and draw (then only draw
        when the other panels' data follows)."""
        if self.data is not None:
            self.data = message.data
            self.redraw()
            return
        self.data = message.data
        wanted = [
            run.run_id
            for run in self.data.runs
            if any(run.run_id.startswith(given) for given in self.initial_run_ids)
        ] or [run.run_id for run in self.data.runs]
        run_list = self.query_one("#mx-run-list", SelectionList)
        with run_list.prevent(SelectionList.SelectedChanged):
            run_list.clear_options()
            prompts = run_prompts(self.data.runs)
            run_list.add_options(
                Selection(prompts[run.run_id], run.run_id, run.run_id in wanted)
                for run in self.data.runs
            )
        if self.data.runs:
            run_list.highlighted = 0
            if self.has_class("-wide"):
                run_list.focus()
        self.redraw()

    @on(SelectionList.SelectionHighlighted, "#mx-run-list")
    def run_highlighted(self, event: SelectionList.SelectionHighlighted[str]) -> None:
        """Say which run the list cursor is on."""
        runs = self.data.runs if self.data is not None else []
        run = next((r for r in runs if r.run_id == event.selection.value), None)
        if run is not None:
            named = f"{run.run_label}\n" if run.run_label else ""
            self.query_one("#mx-run-info", Static).update(
                f"{named}{run.run_id}\n{run.model_file}\n{suites_text(run.suites)} · "
                f"{run.dataset_id} · {run.status} · {run.n_done}/{run.n_planned} instances"
            )

    def chosen_runs(self) -> list[RunInfo]:
        """The runs ticked in the list, in its order."""
        if self.data is None:
            return []
        ticked = set(self.query_one("#mx-run-list", SelectionList).selected)
        return [run for run in self.data.runs if run.run_id in ticked]

    def body_width(self) -> int:
        """The width the panels draw in."""
        width = self.query_one("#mx-tabs", TabbedContent).size.width or self.size.width
        return max(30, width - 4)

    def draw_key(self, pane: str) -> DrawKey:
        """What ``pane`` looks like now (options it ignores left out, so they share lines)."""
        runs = tuple(run.run_id for run in self.chosen_runs())
        spec = self.panels.get(pane)
        pooling = self.pooling if spec is not None and spec.pooled else ""
        metric = self.metric_index if spec is not None and spec.histograms else 0
        return (pane, runs, pooling, metric, self.body_width())

    def redraw(self) -> None:
        """Show the visible panel (drawn now in a worker unless drawn before), then draw the
        others in the same worker so that switching to them costs nothing."""
        if self.data is None:
            return
        self.update_status()
        active = self.query_one("#mx-tabs", TabbedContent).active
        order = [active] + [pane for pane in self.panels if pane != active]
        order = [pane for pane in order if self.data.holds(pane)]  # (the rest: still read)
        keys = [self.draw_key(pane) for pane in order]
        if order and order[0] == active and keys[0] in self.drawn:
            self.query_one(f"#mx-body-{active}", PanelView).show(self.drawn[keys[0]])
        missing = [key for key in keys if key not in self.drawn]
        if missing:
            self.draw_panels(self.data, self.chosen_runs(), missing)

    @work(thread=True, exclusive=True, exit_on_error=False, group="metrics-draw", description=DRAW)
    def draw_panels(self, data: MetricsData, runs: list[RunInfo], keys: list[DrawKey]) -> None:
        """Render each panel of ``keys`` to lines, in order; stop when superseded."""
        worker = get_current_worker()
        for index, key in enumerate(keys):
            if index:
                time.sleep(YIELD)  # let the UI show what was drawn (the GIL is shared)
            if worker.is_cancelled:
                return
            pane, _, pooling, metric, width = key
            renderable = render_panel(
                pane, data, runs, width=width, pooling=pooling or "both", metric_index=metric
            )
            self.post_message(PanelDrawn(key, render_strips(renderable, width)))

    @on(PanelDrawn)
    def panel_drawn(self, message: PanelDrawn) -> None:
        """Keep the lines; show them if the panel still looks like that."""
        if len(self.drawn) >= CACHE_SIZE:
            self.drawn.pop(next(iter(self.drawn)))
        self.drawn[message.key] = message.lines
        pane = message.key[0]
        if message.key == self.draw_key(pane):
            self.query_one(f"#mx-body-{pane}", PanelView).show(message.lines)

    def update_status(self) -> None:
        """The one-line summary above the panels."""
        if self.data is None:
            return
        chosen, total = len(self.chosen_runs()), len(self.data.runs)
        parts = [f"runs {chosen}/{total} (space)"]
        if any(spec.pooled for spec in self.panels.values()):
            parts.append(f"pooling {self.pooling} (g)")
        histograms = self.histogram_panel()
        if histograms is not None:
            metrics = histogram_specs(histograms)
            parts.append(f"histogram {metrics[self.metric_index % len(metrics)].label} (d)")
        self.query_one("#mx-status", Static).update(" · ".join(parts))

    def histogram_panel(self) -> PanelSpec | None:
        """The panel ``d`` steps: the shown one if it has histograms, else the first that has."""
        active = self.panels.get(self.query_one("#mx-tabs", TabbedContent).active)
        if active is not None and active.histograms:
            return active
        return next((spec for spec in self.panels.values() if spec.histograms), None)

    def legend_of(self, pane: str) -> list[MetricSpec]:
        """The declared metrics of ``pane``'s legend."""
        spec = self.panels.get(pane)
        return list(legend_specs(spec.legend)) if spec is not None else []

    def shown_metrics(self) -> list[MetricSpec]:
        """What ``?`` defines here: the shown panel's legend and histogram metrics."""
        pane = self.query_one("#mx-tabs", TabbedContent).active
        spec = self.panels.get(pane)
        if spec is None:
            return []
        return list(legend_specs(list(dict.fromkeys((*spec.legend, *spec.histograms)))))

    @on(SelectionList.SelectedChanged, "#mx-run-list")
    def runs_changed(self) -> None:
        """Other runs chosen: redraw."""
        self.redraw()

    @on(TabbedContent.TabActivated, "#mx-tabs")
    def tab_activated(self) -> None:
        """Show the panel as it is now (normally drawn already), with its legend."""
        pane = self.query_one("#mx-tabs", TabbedContent).active
        self.query_one("#mx-legend", Legend).show(MARKS, self.legend_of(pane))
        self.redraw()

    def on_resize(self) -> None:
        """Redraw at the new width once the layout has it; the tabs' titles fitted to it."""
        self.call_after_refresh(self.fit_tabs)
        self.call_after_refresh(self.redraw)

    def fit_tabs(self) -> None:
        """Every tab whole: the full titles where they all fit in the tab bar's width, else
        the short ones (the bar cut its last tab, "7 Rati", at 80 columns)."""
        tabbed = self.query_one("#mx-tabs", TabbedContent)
        numbered = list(enumerate(self.panels.items(), start=1))
        labels = {key: tab_label(number, spec) for number, (key, spec) in numbered}
        short = {key: tab_label(number, spec, short=True) for number, (key, spec) in numbered}
        width = tabbed.size.width or self.size.width
        fits = sum(cell_len(label) + 2 for label in labels.values()) <= width  # (1 cell a side)
        for key, label in (labels if fits else short).items():
            tab = tabbed.get_tab(key)
            if tab.label_text != label:
                tab.label = label

    # -- actions ---------------------------------------------------------------------------------

    def action_back(self) -> None:
        """From the run list of a narrow screen back to the panels; else back to where the
        screen was opened."""
        if self.has_class("-narrow") and self.query_one("#mx-run-list").has_focus:
            self.action_toggle_runs()
            return
        self.app.pop_screen()

    def action_panel(self, pane: str) -> None:
        """Show a panel."""
        self.query_one("#mx-tabs", TabbedContent).active = pane

    def action_step_panel(self, delta: int) -> None:
        """Next / previous panel."""
        panes = list(self.panels)
        current = panes.index(self.query_one("#mx-tabs", TabbedContent).active)
        self.action_panel(panes[(current + delta) % len(panes)])

    def action_toggle_runs(self) -> None:
        """Show and focus the run list; from the list, back to the panels (on a narrow screen
        the list hides again to leave them the width)."""
        runs = self.query_one("#mx-runs")
        run_list = self.query_one("#mx-run-list", SelectionList)
        if not runs.display or not run_list.has_focus:
            if not runs.display:
                runs.display = True  # on the one widget: restyling the screen is slow
                self.call_after_refresh(self.redraw)
            run_list.focus()
            return
        if self.has_class("-narrow"):
            runs.display = False
            self.call_after_refresh(self.redraw)
        self.active_view().focus()

    def action_compare(self) -> None:
        """Compare the runs chosen here (intervals, paired tests, instances side by side)."""
        from haf_tui.tui.screens.compare import CompareScreen

        self.app.push_screen(CompareScreen([run.run_id for run in self.chosen_runs()]))

    def action_all_runs(self) -> None:
        """Choose every run, or none when all are chosen."""
        run_list = self.query_one("#mx-run-list", SelectionList)
        if self.data is not None and len(run_list.selected) == len(self.data.runs):
            run_list.deselect_all()
        else:
            run_list.select_all()

    def action_pooling(self) -> None:
        """Tables 1 and 4: both pooling rules, the reference's, or the instance mean."""
        self.pooling = POOLING_MODES[(POOLING_MODES.index(self.pooling) + 1) % len(POOLING_MODES)]
        self.redraw()

    def active_view(self) -> PanelView:
        """The panel shown."""
        pane = self.query_one("#mx-tabs", TabbedContent).active
        return self.query_one(f"#mx-body-{pane}", PanelView)

    def action_scroll_panel(self, direction: int) -> None:
        """Scroll the panel shown sideways by half its width (a wide table or chart)."""
        view = self.active_view()
        step = max(1, view.scrollable_content_region.width // 2)
        view.scroll_to(x=view.scroll_x + direction * step, animate=False)

    def action_full_values(self) -> None:
        """Every value of the panel shown, whole (its cells are cut at a width), in a modal."""
        if self.data is None:
            return
        pane = self.query_one("#mx-tabs", TabbedContent).active
        if not self.data.holds(pane):
            return
        title = f"{self.panels[pane].title} — every value in full"
        value = full_values(pane, self.data, self.chosen_runs(), self.pooling)
        self.post_message(FullValueRequested(title, value))

    def action_next_metric(self) -> None:
        """The next metric's histograms (and show them)."""
        spec = self.histogram_panel()
        if spec is None:
            return
        self.metric_index = (self.metric_index + 1) % len(spec.histograms)
        self.action_panel(spec.key)
        self.redraw()
