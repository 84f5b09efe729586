"""The tree of one instance: a node (or several) per method of the run, each drawn by the
method's own part of the workbench (``Method.workbench``, its ``ExplorerPart.node``) or by the
explorer view it declares (``Method.view``, looked up in :data:`METHOD_VIEWS`; none: the
method's title over the lines of ``Method.node_lines``): HAF's stance tree (JUSTIFY,
UPHOLD-REASON internal and external, UPHOLD-STANCE), label scores; under JUSTIFY, each judge
run's ratings of the explanation (a run without HAF: at the top); each node carries the
generation (and reason) it stands for. Which stages belong to which method the registry says."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Self

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.css.styles import RenderStyles
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from haf_tui.methods.declare import Method
from haf_tui.methods.registry import MethodLoadError, method_named
from haf_tui.reports import format_number
from haf_tui.store.instance_readers import DetailRow
from haf_tui.tui.messages import FullValueRequested
from haf_tui.tui.method_parts import ExplorerPart, NodeRef, explorer_part
from haf_tui.tui.tree_input import Generation, TreeInput, group_detail, shown_methods
from haf_tui.tui.widgets.text_layout import FLAG as LOW_STYLE
from haf_tui.vocabulary import HafError


def fmt(value: Any, digits: int = 2) -> str:
    """A number to two decimals, or "—" when undefined (the report formatter's rule)."""
    return format_number(value, digits)


def _short(text: Any, width: int = 48) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _metric(row: DetailRow | None, name: str) -> float | None:
    """A reason metric of ``row`` (None: no such row)."""
    return None if row is None else row.metric(name)


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
        attached: Mapping[str, Sequence[object]] | None = None,
        *,
        metrics: Mapping[str, float | None] | None = None,
        text: str = "",
    ) -> None:
        """Rebuild the tree from the ``instance_detail`` rows of one instance (``suites``: the
        run's; None: told by the rows), its instance ``metrics`` and ``text`` (for the nodes of
        methods without a view of their own) and the items of related runs its methods' parts
        attach (``attached``, by method: under JUSTIFY; else at the top)."""
        self.clear()
        groups = group_detail(rows)
        attached = attached or {}
        # (a judge run's instances: the stance the judged explanation argued for)
        stance = stance or next(
            (s for items in attached.values() for i in items if (s := getattr(i, "stance", 0))),
            None,
        )
        self.root.set_label(Text(f"{instance_id}  stance: {stance or '—'}"))
        shown = TreeInput(instance_id, text, groups, attached, metrics or {})
        first: NodeRef | None = None
        for method in shown_methods(groups, suites):
            ref = _view_of(method)(self, method, shown)
            first = first or ref
        _attach(self.root, shown)
        self.root.data = first or _first_attached(shown)
        self.root.expand_all()
        self.move_cursor(self.root)

    def stances(self, method: Method[Any], shown: TreeInput) -> NodeRef:
        """HAF's stance tree: JUSTIFY (with the judgements under it), UPHOLD-REASON internal
        and external, UPHOLD-STANCE."""
        groups = shown.groups
        justify = groups.get(("justify", -1))
        node = self._justify(justify)
        _attach(self.root if node is None else node, shown)
        self._uphold_reason(groups, "internal", "uii", "UII")
        self._uphold_reason(groups, "external", "uei", "UEI")
        self._uphold_stance(groups, justify)
        return NodeRef("justify")

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
                Text(f"{test} r{j + 1} → {row.decision}"), data=NodeRef("individual", j)
            )
            child.add_leaf(  # (their own line: within 80 columns, unlike the node's end)
                Text(
                    f"C(Y{j + 1})={fmt(_metric(own, 'c_y'))}, "
                    f"{inner}={fmt(_metric(own, inner.lower()))}, "
                    f"{score}{j + 1}={fmt(_metric(own, score.lower()))}"
                ),
                data=NodeRef("individual", j),
            )
            _add_reason_leaves(child, generation.reasons, "s", "individual", j, None, width=40)


def _generic_node(tree: StanceTree, method: Method[Any], shown: TreeInput) -> NodeRef | None:
    """A method without a view of its own: its title over its node lines (its instance
    metrics by default); the node shows its first generation."""
    refs = [NodeRef(stage, sub_index) for stage, sub_index in shown.generations(method)]
    ref = refs[0] if refs else None
    node = tree.root.add(Text(method.title), data=ref)
    for line in method.node_lines(shown.node_input(method)):
        node.add_leaf(Text(line), data=ref)
    return ref


def _label_scores(tree: StanceTree, method: Method[Any], shown: TreeInput) -> NodeRef | None:
    """Forced label scores: the first node line as the title, then one line per generation of
    the method (each shows its generation); nothing when it has no lines."""
    lines = method.node_lines(shown.node_input(method))
    refs = [NodeRef(stage, sub_index) for stage, sub_index in shown.generations(method)]
    if not lines or not refs:
        return None
    title = Text(lines[0])
    title.highlight_regex(r"(?<=\d) low\b", LOW_STYLE)  # (a low label mass, as the judge's)
    node = tree.root.add(title, data=refs[0])
    for line, ref in zip(lines[1:], refs, strict=False):
        node.add_leaf(Text(line), data=ref)
    return refs[0]


MethodView = Callable[[StanceTree, Method[Any], TreeInput], NodeRef | None]
METHOD_VIEWS: dict[str, MethodView] = {
    "stances": StanceTree.stances,
    "label-scores": _label_scores,
}
"""The explorer views a method may declare (``Method.view``), by kind: each adds the
method's nodes under the root and says which node the tree opens on (the first method's
that says one); a kind not here: :func:`_generic_node`."""


def _view_of(method: Method[Any]) -> MethodView:
    """How ``method``'s nodes are drawn: its workbench part's node, else its view kind's (a
    part that cannot be loaded: the kind's; the explorer says why once)."""
    try:
        part = explorer_part(method)
    except MethodLoadError:
        part = None
    if part is not None and part.node is not None:
        return part.node
    return METHOD_VIEWS.get(method.view, _generic_node)


def _part_named(name: str) -> ExplorerPart | None:
    try:
        return explorer_part(method_named(name))
    except HafError:  # (a method gone since, or a part that cannot be loaded)
        return None


def _attach(node: TreeNode[NodeRef | None], shown: TreeInput) -> None:
    """Each method's items of related runs not placed yet, under ``node``, by its part."""
    for name, items in shown.attached.items():
        part = _part_named(name)
        if name in shown.placed or part is None or part.attach is None:
            continue
        part.attach(node, items)
        shown.placed.add(name)


def _first_attached(shown: TreeInput) -> NodeRef | None:
    """The node of the first attached item (a tree with no node of a method's own)."""
    for name, items in shown.attached.items():
        part = _part_named(name)
        if items and part is not None:
            return NodeRef(part.stage, 0)
    return None


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
    """One leaf per reason: "r1 (C=…, SoS term …) text…", the numbers before the text (after
    it they were off-screen at 80 columns); ``term`` is (label, metric column)."""
    for reason in reasons:
        index = int(reason.reason_index or 0)
        text = _short(reason.reason_text, width)
        extra = f", {term[0]} term {fmt(reason.metric(term[1]))}" if term else ""
        numbers = f"{prefix}{index + 1} (C={fmt(reason.reason_confidence)}{extra})"
        leaf = node.add_leaf(Text(f"{numbers} {text}"), data=NodeRef(stage, sub_index, index))
        tree = node.tree
        if isinstance(tree, StanceTree):
            whole = " ".join(str(reason.reason_text or "").split())
            tree.full_texts[leaf.id] = f"{numbers} {whole}"
