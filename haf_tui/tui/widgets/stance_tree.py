"""The stance/reason tree of one instance: JUSTIFY, UPHOLD-REASON (internal, external),
UPHOLD-STANCE and, when the run holds the classify suite, its label scores, and when it holds
the rationales suite, a node for the instance's rationales; under JUSTIFY, each judge run's
ratings of the explanation (a judge run's own instances: at the top); each node carries the
generation (and reason) it stands for."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.css.styles import RenderStyles
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from haf_tui.methods.classify.core.labels import SPELLINGS, label_scores
from haf_tui.methods.rationales.suite.plan import CLASSIFY as RATIONALE_CLASSIFY
from haf_tui.methods.rationales.suite.plan import PROMPT as RATIONALE_PROMPT
from haf_tui.methods.rationales.suite.plan import STAGES as RATIONALE_STAGES
from haf_tui.reports import format_number
from haf_tui.store.instance_readers import DetailRow
from haf_tui.tui.judge_data import Judgement
from haf_tui.tui.messages import FullValueRequested
from haf_tui.tui.widgets.judge_view import JUDGEMENT, criterion_text, judge_title

RATIONALES = "rationales"
"""The stage of the node that shows an instance's rationales (no generation of its own)."""


@dataclass(frozen=True)
class NodeRef:
    """Which generation (stage, sub_index) a node stands for and, for a reason, which one."""

    stage: str
    sub_index: int = -1
    reason_index: int | None = None


def fmt(value: Any, digits: int = 2) -> str:
    """A number to two decimals, or "—" when undefined (the report formatter's rule)."""
    return format_number(value, digits)


def _log(probability: Any) -> float:
    return math.log(probability) if probability else -math.inf


def _short(text: Any, width: int = 48) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _metric(row: DetailRow | None, name: str) -> float | None:
    """A reason metric of ``row`` (None: no such row)."""
    return None if row is None else row.metric(name)


@dataclass
class Generation:
    """One generation's row of ``instance_detail`` and its reason rows."""

    row: DetailRow
    reasons: list[DetailRow]


def group_detail(rows: Sequence[DetailRow]) -> dict[tuple[str, int], Generation]:
    """The rows of ``instance_detail`` grouped by generation, in query order."""
    groups: dict[tuple[str, int], Generation] = {}
    for row in rows:
        group = groups.setdefault((row.stage, row.sub_index), Generation(row, []))
        if row.reason_index is not None:
            group.reasons.append(row)
    return groups


class StanceTree(Tree[NodeRef | None]):
    """The HAF stages of one instance as a tree; ``show`` rebuilds it."""

    DEFAULT_CSS = """
    StanceTree {
        height: 1fr;
        min-height: 4;
        border: round $primary-darken-2;
        padding: 0 1;
    }
    StanceTree:focus { border: round $accent; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_full", "Full text", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(Text("(no instance)"), data=None, id=id)
        self.show_root = True
        self._base_style = Style()
        self._frame_styles: dict[tuple[str, ...], RenderStyles] | None = None
        self.note_node: TreeNode[NodeRef | None] | None = None
        """The "note:" line of the instance shown (the researcher's note and bookmark)."""
        self.full_texts: dict[int, str] = {}
        """The whole text of each row shown cut with "…" (by node id)."""

    def clear(self) -> Self:
        """As Tree's, forgetting the rows' whole texts."""
        self.full_texts = {}
        super().clear()
        return self

    def action_open_full(self) -> None:
        """The cursor's row in full (a reason's whole text), in a modal."""
        node = self.cursor_node
        if node is None:
            return
        parent = node.parent
        title = str(self.root.label) if parent is None else f"{self.root.label} › {parent.label}"
        self.post_message(FullValueRequested(title, self.full_texts.get(node.id, str(node.label))))

    def render_lines(self, crop: Region) -> list[Strip]:
        """Look the base and component styles up once per frame, not once per line (Tree
        asks for them several times a line)."""
        self._base_style = self.rich_style
        self._frame_styles = {}
        try:
            return super().render_lines(crop)
        finally:
            self._frame_styles = None

    def get_component_styles(self, *names: str) -> RenderStyles:
        """As Widget's, looked up once per frame while drawing."""
        if self._frame_styles is None:
            return super().get_component_styles(*names)
        styles = self._frame_styles.get(names)
        if styles is None:
            styles = self._frame_styles[names] = super().get_component_styles(*names)
        return styles

    def render_line(self, y: int) -> Strip:
        """One visible line (as Tree draws it, with the frame's base style)."""
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        return self._render_line(y + scroll_y, scroll_x, scroll_x + width, self._base_style)

    def show_nothing(self) -> None:
        """No instance (none passes the filters)."""
        self.clear()
        self.root.set_label(Text("(no instance)"))
        self.root.data = None

    def show_note(
        self, note: str | None, *, bookmarked: bool = False, pending: bool = False
    ) -> None:
        """The researcher's note (and ★ bookmark) as the first line under the instance
        (``pending``: kept, stored once the process writing the database lets go)."""
        if self.note_node is not None and self.note_node in self.root.children:
            self.note_node.remove()
        self.note_node = None
        if not note and not bookmarked:
            return
        label = f"note: {_short(note, 60)}" if note else "bookmarked"
        label = f"★ {label}" if bookmarked else label
        label = f"⧗ pending · {label}" if pending else label
        before = 0 if self.root.children else None
        self.note_node = self.root.add_leaf(Text(label), data=None, before=before)
        if note:  # (enter shows the whole note)
            self.full_texts[self.note_node.id] = f"note: {note}"

    def show(
        self,
        instance_id: str,
        stance: Any,
        rows: Sequence[DetailRow],
        suites: Sequence[str] | None = None,
        judgements: Sequence[Judgement] = (),
    ) -> None:
        """Rebuild the tree from the ``instance_detail`` rows of one instance (``suites``: the
        run's; None: told by the rows) and its ``judgements`` (under JUSTIFY; else at the
        top)."""
        self.clear()
        groups = group_detail(rows)
        # (a judge run's instances: the stance the judged explanation argued for)
        stance = stance or next((j.stance for j in judgements if j.stance), None)
        self.root.set_label(Text(f"{instance_id}  stance: {stance or '—'}"))
        justify = groups.get(("justify", -1))
        classify = any(stage == "classify" for stage, _ in groups)
        rationales = any(stage in RATIONALE_STAGES for stage, _ in groups) or (
            suites is not None and "rationales" in suites
        )
        if suites is not None:
            haf_shown = justify is not None or "haf" in suites
        else:
            haf_shown = justify is not None or not (classify or rationales)
        if haf_shown:
            self.root.data = NodeRef("justify")
        elif classify:
            self.root.data = NodeRef("classify", 0)
        elif rationales:
            self.root.data = NodeRef(RATIONALES)
        else:
            self.root.data = NodeRef(JUDGEMENT, 0) if judgements else None
        if haf_shown:
            # (a run without the HAF suite shows its other suites only)
            node = self._justify(justify)
            _add_judgements(self.root if node is None else node, judgements)
            self._uphold_reason(groups, "internal", "uii", "UII")
            self._uphold_reason(groups, "external", "uei", "UEI")
            self._uphold_stance(groups, justify)
        self._classify(groups)
        if rationales:
            self._rationales(groups)
        if not haf_shown:
            _add_judgements(self.root, judgements)
        self.root.expand_all()
        self.move_cursor(self.root)

    def _rationales(self, groups: dict[tuple[str, int], Generation]) -> None:
        """The rationales suite: ŷ and its label scores on the full text (the node shows the
        rationale view), then each rationale prompt's answer (the token view)."""
        spellings = {
            sub_index: g for (stage, sub_index), g in groups.items()
            if stage == RATIONALE_CLASSIFY and sub_index < len(SPELLINGS)
        }  # fmt: skip
        if not spellings:
            self.root.add_leaf(Text("rationales — not run"), data=None)
            return
        logprobs = {
            SPELLINGS[sub][0]: _log(g.row.decision_confidence) for sub, g in spellings.items()
        }
        try:
            scores = label_scores(logprobs)
            title = f"rationales → {scores.predicted} (p(toxic) {fmt(scores.p_toxic)})"
        except ValueError:
            title = "rationales → incomplete"
        node = self.root.add(Text(title), data=NodeRef(RATIONALES))
        for (stage, sub_index), generation in groups.items():
            if stage == RATIONALE_PROMPT:
                node.add_leaf(
                    Text(f"asked why {generation.row.decision or '—'}: the answer"),
                    data=NodeRef(stage, sub_index),
                )

    def _classify(self, groups: dict[tuple[str, int], Generation]) -> None:
        """The classify suite's label scores, when the run holds it: p(y | x), ŷ and the
        label mass, then each forced spelling with its probability."""
        spellings = [(key, g) for key, g in groups.items() if key[0] == "classify"]
        if not spellings:
            return
        logprobs = {  # (a spelling's decision confidence is its probability)
            SPELLINGS[key[1]][0]: _log(g.row.decision_confidence) for key, g in spellings
        }
        try:
            scores = label_scores(logprobs)
            title = (
                f"classify → {scores.predicted} (p(toxic) {fmt(scores.p_toxic)}, "
                f"label mass {fmt(scores.label_mass)})"
            )
        except ValueError:
            title = "classify — incomplete"
        node = self.root.add(Text(title), data=NodeRef("classify", spellings[0][0][1]))
        for (stage, sub_index), generation in spellings:
            row = generation.row
            node.add_leaf(
                Text(f"{SPELLINGS[sub_index][0]!r}: p {fmt(row.decision_confidence, 3)}"),
                data=NodeRef(stage, sub_index),
            )

    def _justify(self, justify: Generation | None) -> TreeNode[NodeRef | None] | None:
        if justify is None:
            self.root.add_leaf(Text("JUSTIFY — not run"), data=None)
            return None
        row = justify.row
        node = self.root.add(
            Text(f"JUSTIFY → {row.decision} ({fmt(row.decision_confidence)})"),
            data=NodeRef("justify"),
        )
        _add_reason_leaves(node, justify.reasons, "r", "justify", -1, ("SoS", "sos"))
        if not justify.reasons:
            node.add_leaf(Text("no reasons"), data=NodeRef("justify"))
        return node

    def _uphold_reason(
        self, groups: dict[tuple[str, int], Generation], stage: str, column: str, name: str
    ) -> None:
        generation = groups.get((stage, -1))
        if generation is None:
            self.root.add_leaf(Text(f"UPHOLD-REASON {stage} — not run"), data=None)
            return
        row = generation.row
        node = self.root.add(
            Text(f"UPHOLD-REASON {stage} → {row.decision} ({fmt(row.decision_confidence)})"),
            data=NodeRef(stage),
        )
        _add_reason_leaves(node, generation.reasons, "s", stage, -1, (name, column))
        if not generation.reasons:
            node.add_leaf(Text("no new reasons"), data=NodeRef(stage))

    def _uphold_stance(
        self, groups: dict[tuple[str, int], Generation], justify: Generation | None
    ) -> None:
        individual = {key[1]: g for key, g in groups.items() if key[0] == "individual"}
        if not individual:
            self.root.add_leaf(Text("UPHOLD-STANCE — not run"), data=None)
            return
        node = self.root.add(Text("UPHOLD-STANCE"), data=None)
        by_j = {r.reason_index: r for r in (justify.reasons if justify else [])}
        for j, generation in sorted(individual.items()):
            row, own = generation.row, by_j.get(j)
            test = str(row.test or "SUF")
            inner, score = ("I_S", "RS") if test == "SUF" else ("I_N", "RN")
            child = node.add(
                Text(
                    f"{test} r{j + 1} → {row.decision}, C(Y{j + 1})={fmt(_metric(own, 'c_y'))}, "
                    f"{inner}={fmt(_metric(own, inner.lower()))}, "
                    f"{score}{j + 1}={fmt(_metric(own, score.lower()))}"
                ),
                data=NodeRef("individual", j),
            )
            _add_reason_leaves(child, generation.reasons, "s", "individual", j, None, width=40)


def _add_judgements(node: TreeNode[NodeRef | None], judgements: Sequence[Judgement]) -> None:
    """One node per judge run (the ``index``-th shows the ``index``-th judgement), a leaf per
    criterion under it."""
    for index, judgement in enumerate(judgements):
        ref = NodeRef(JUDGEMENT, index)
        child = node.add(judge_title(judgement), data=ref)
        for rated in judgement.criteria:
            child.add_leaf(criterion_text(rated, judgement), data=ref)


def _add_reason_leaves(
    node: TreeNode[NodeRef | None],
    reasons: Sequence[DetailRow],
    prefix: str,
    stage: str,
    sub_index: int,
    term: tuple[str, str] | None,
    *,
    width: int = 48,
) -> None:
    """One leaf per reason: "r1 text… (C=…, SoS term …)"; ``term`` is (label, metric column)."""
    for reason in reasons:
        index = int(reason.reason_index or 0)
        text = _short(reason.reason_text, width)
        extra = f", {term[0]} term {fmt(reason.metric(term[1]))}" if term else ""
        after = f" (C={fmt(reason.reason_confidence)}{extra})"
        leaf = node.add_leaf(
            Text(f"{prefix}{index + 1} {text}{after}"), data=NodeRef(stage, sub_index, index)
        )
        tree = node.tree
        if isinstance(tree, StanceTree):
            whole = " ".join(str(reason.reason_text or "").split())
            tree.full_texts[leaf.id] = f"{prefix}{index + 1} {whole}{after}"
