"""The judge method's part of the workbench (``Method.workbench``): in a run's explorer, the
judgements of the judge runs over its explanations (a judge run: its own), read with its
instances (:mod:`.data`), one node per judge run under the explanation judged (a run without
a stance tree: at the top), a leaf per criterion; the node opens the judge view (:mod:`.view`).
The one part of the method that imports Textual."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from textual.widgets.tree import TreeNode

from haf_tui.methods.declare import Method
from haf_tui.methods.judge.reports.readers import JudgeRun
from haf_tui.methods.judge.tui.data import Judgement, judges_shown, read_judgements
from haf_tui.methods.judge.tui.view import JUDGEMENT, JudgeView, criterion_text, judge_title
from haf_tui.store import Store
from haf_tui.tui.method_parts import ExplorerPart, NodeRef

if TYPE_CHECKING:
    from haf_tui.tui.tree_input import TreeInput
    from haf_tui.tui.widgets.stance_tree import StanceTree


def read_many(
    store: Store, runs: Sequence[object], ids: Sequence[str]
) -> Mapping[str, Sequence[object]]:
    """Instance id → its judgements by the judge runs ``runs``."""
    return read_judgements(store, [run for run in runs if isinstance(run, JudgeRun)], ids)


def attach(node: TreeNode[NodeRef | None], items: Sequence[object]) -> None:
    """One node per judge run (the ``index``-th shows the ``index``-th judgement), a leaf per
    criterion under it."""
    for index, judgement in enumerate(items):
        if not isinstance(judgement, Judgement):
            continue
        ref = NodeRef(JUDGEMENT, index)
        child = node.add(judge_title(judgement), data=ref)
        for rated in judgement.criteria:
            child.add_leaf(criterion_text(rated, judgement), data=ref)


def node(tree: StanceTree, method: Method[Any], shown: TreeInput) -> NodeRef | None:
    """A judge run's own judgements, at the top (unless a stance tree placed them)."""
    own = shown.attached.get(method.name, ())
    if method.name in shown.placed or not own:
        return None
    attach(tree.root, own)
    shown.placed.add(method.name)
    return NodeRef(JUDGEMENT, 0)


EXPLORER = ExplorerPart(
    stage=JUDGEMENT,
    pane=JudgeView,
    node=node,
    related=judges_shown,
    read_many=read_many,
    attach=attach,
    marks=("low", "≠ stance"),
)
"""What the judge method adds to the explorer."""
