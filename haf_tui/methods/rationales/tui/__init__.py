"""The rationales method's part of the workbench (``Method.workbench``): a "rationales →" node
in an instance's tree that opens the rationale view (:mod:`.view`) of what :func:`read` gathers
(:mod:`.data`). The one part of the method that imports Textual."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

from haf_tui.methods.declare import Method
from haf_tui.methods.rationales.suite.records import TABLE, RationaleRecord
from haf_tui.methods.rationales.tui.data import RationaleData, rationale_data
from haf_tui.methods.rationales.tui.view import RationaleView
from haf_tui.store import Store
from haf_tui.store.instance_readers import (
    method_table_rows,
    metric_values_of,
    run_instance,
    stage_answers,
)
from haf_tui.tui.method_parts import ExplorerPart, NodeRef

if TYPE_CHECKING:
    from haf_tui.tui.tree_input import TreeInput
    from haf_tui.tui.widgets.stance_tree import StanceTree

NODE = "rationales"
"""The stage of the node that shows an instance's rationales (no generation of its own)."""


def instance_rationales(store: Store, run_id: str, instance_id: str) -> list[RationaleRecord]:
    """The rationales of one instance of a run, ordered by source, then seed (RANDOM has one
    per seed); none when the run has none for it."""
    stored = method_table_rows(store, TABLE, run_id, instance_id)
    rows = [RationaleRecord.read(row.values) for row in stored]
    return sorted(rows, key=lambda row: (row.source, row.seed))


def read(store: Store, run_id: str, instance_id: str, method: Method[Any]) -> RationaleData:
    """An instance's rationales with its word tokens, its annotators' gold, the method's
    metrics and the answers of its second stage, its prompts (none when the run's dataset
    lacks the instance)."""
    instance = run_instance(store, run_id, instance_id)
    if instance is None:
        return RationaleData(instance_id, ())
    names = [spec.name for spec in method.metrics]
    asked = method.suite.stages[1]
    return rationale_data(
        instance_id,
        instance.text,
        instance.extra,
        instance_rationales(store, run_id, instance_id),
        metric_values_of(store, run_id, names, [instance_id]).get(instance_id, {}),
        stage_answers(store, run_id, instance_id, asked),
    )


def node(tree: StanceTree, method: Method[Any], shown: TreeInput) -> NodeRef:
    """Rationales: the first node line as the title (the node shows the rationale view),
    then one line per generation of the method's second stage, its prompts (the token view);
    "not run" when it has no lines."""
    lines = method.node_lines(shown.node_input(method))
    if not lines:
        tree.root.add_leaf(Text(f"{method.title} — not run"), data=None)
        return NodeRef(NODE)
    added = tree.root.add(Text(lines[0]), data=NodeRef(NODE))
    asked = method.suite.stages[1:2]
    refs = [NodeRef(stage, sub) for stage, sub in shown.generations(method) if stage in asked]
    for line, ref in zip(lines[1:], refs, strict=False):
        added.add_leaf(Text(line), data=ref)
    return NodeRef(NODE)


EXPLORER = ExplorerPart(
    stage=NODE, pane=RationaleView, read=read, node=node, noun="rationales", short_tree=True
)
"""What the rationales method adds to the explorer."""
