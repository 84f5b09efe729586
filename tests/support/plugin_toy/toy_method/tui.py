"""The toy method's own part of the workbench: a "toy answer →" node in each instance's tree
that opens a pane of its own, showing the instance's row of the toy's table."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.widgets import Static

from haf_tui.methods.declare import Method
from haf_tui.store import Store
from haf_tui.tui.method_parts import ExplorerPart, NodeRef

if TYPE_CHECKING:
    from haf_tui.tui.tree_input import TreeInput
    from haf_tui.tui.widgets.stance_tree import StanceTree

NODE = "toy_answer"


class ToyAnswerView(Static):
    """The answer the toy stored for one instance, and its length."""

    def show(self, data: Any) -> None:
        """Show a row of ``toy_answers`` (None: none)."""
        if data is None:
            self.update("no toy answer")
            return
        answer, n_chars = data
        self.update(Text(f"toy answer: {answer!r} ({n_chars} characters)"))

    def show_message(self, text: str) -> None:
        """One line instead."""
        self.update(text)


def read(store: Store, run_id: str, instance_id: str, method: Method[Any]) -> object:
    """The instance's row of ``toy_answers`` (answer, n_chars), or None."""
    _, rows = store.query(
        "SELECT answer, n_chars FROM toy_answers WHERE run_id = ? AND instance_id = ?",
        [run_id, instance_id],
    )
    return tuple(rows[0]) if rows else None


def node(tree: StanceTree, method: Method[Any], shown: TreeInput) -> NodeRef:
    """The method's title over its metric lines, then a leaf that opens the toy's pane (the
    node the tree opens on)."""
    added = tree.root.add(Text(method.title), data=None)
    for line in method.node_lines(shown.node_input(method)):
        added.add_leaf(Text(line), data=None)
    added.add_leaf(Text("toy answer →"), data=NodeRef(NODE))
    return NodeRef(NODE)


EXPLORER = ExplorerPart(stage=NODE, pane=ToyAnswerView, read=read, node=node, noun="toy answer")
