"""The screens :mod:`benchmarks.tui_latency` times: how each is opened from the runs list and
which keys are pressed on it (data: a screen added later is one more entry)."""

from __future__ import annotations

from dataclasses import dataclass

Actions = tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class Scenario:
    """One screen: how to open it from the runs list, then (action name, keys) to time."""

    screen: str
    open_keys: tuple[str, ...]
    actions: Actions
    module: str | None = None
    """A module the screen needs; when it cannot be imported, the scenario is skipped."""
    screen_class: str | None = None
    """The class name ``app.screen`` must have once opened."""


def _typed(text: str) -> tuple[str, ...]:
    return tuple(text)


SCENARIOS: list[Scenario] = [
    Scenario(
        "home",
        (),
        (
            ("cursor down/up", ("down", "up") * 6),
            ("refresh (r)", ("r",) * 4),
        ),
        screen_class="HomeScreen",
    ),
    Scenario(
        "explorer",
        ("e",),
        (
            ("step ] / [", ("right_square_bracket",) * 15 + ("left_square_bracket",) * 5),
            ("list down/up", ("down",) * 10 + ("up",) * 5),
            ("token left/right", ("right",) * 15 + ("left",) * 5),
            ("colour / prompt (l, v)", ("l", "l", "v", "v")),
            ("sort (o, O)", ("o",) * 9 + ("O", "O")),
            ("filters (t, u, x, a)", ("t",) * 5 + ("u", "u", "x", "x", "a")),
            ("search typing", ("slash", *_typed("t012"), *("backspace",) * 4, "escape")),
            ("range typing", ("f", *_typed("sos>0.5 rs<0.3"), "escape")),
        ),
        module="haf_tui.tui.screens.explorer",
        screen_class="ExplorerScreen",
    ),
    Scenario(
        "sql",
        ("s",),
        (
            ("editor typing", _typed("SELECT count(*) FROM instance_results")),
            ("run query (ctrl+r)", ("ctrl+r",)),
            # enter puts the query in the editor and its parameters (defaults) in the form
            ("library: pick + run", ("shift+tab", "down", "down", "enter", "ctrl+r")),
            ("schema browser (ctrl+o)", ("ctrl+o", "down", "down", "enter", "ctrl+o")),
            ("history (ctrl+f, esc)", ("ctrl+f", "escape")),
        ),
        module="haf_tui.tui.screens.sql",
        screen_class="SqlScreen",
    ),
    Scenario(
        "metrics",
        ("m",),
        (
            ("panels 1-6", ("1", "2", "3", "4", "5", "6", "1")),
            ("panel [ ]", ("right_square_bracket",) * 3 + ("left_square_bracket",) * 3),
            ("pooling / metric (g, d)", ("g", "g", "d", "d")),
        ),
        module="haf_tui.tui.screens.metrics",
        screen_class="MetricsScreen",
    ),
    Scenario(
        "compare",
        ("c",),
        (
            ("step ] / [", ("2",) + ("right_square_bracket",) * 6 + ("left_square_bracket",) * 2),
            ("cursor down/up", ("down", "up") * 3),
            ("panels 1 / 2", ("1", "2") * 2),
        ),
        module="haf_tui.tui.screens.compare",
        screen_class="CompareScreen",
    ),
    Scenario(
        "new-run wizard",
        ("n",),
        (
            ("move", ("down", "up") * 3 + ("tab", "shift+tab")),
            # models → dataset → settings and back, then on to the settings again (never
            # past them: the review loads the model to time it)
            ("steps ctrl+n / ctrl+b", ("ctrl+n", "ctrl+n", "ctrl+b", "ctrl+b", "ctrl+n", "ctrl+n")),
            ("settings: tab, typing", ("tab", "tab", "5", "backspace", "shift+tab", "shift+tab")),
        ),
        module="haf_tui.tui.screens.wizard",
        screen_class="WizardScreen",
    ),
    Scenario(
        "campaigns",
        ("k",),
        (
            ("cell right/left", ("right",) * 4 + ("left",) * 4),
            ("cell down/up", ("down", "up") * 2),
            ("campaign ] / [", ("right_square_bracket", "left_square_bracket")),
            ("refresh (r)", ("r",) * 3),
        ),
        module="haf_tui.tui.screens.campaign",
        screen_class="CampaignScreen",
    ),
]
