"""A method's own part of the workbench: what it adds to the explorer (its node in the
instance tree, the pane that node opens in place of the token view, and what that pane reads),
declared in its package (``haf_tui/methods/<name>/tui``: the one part of a method that may
import Textual) and named by ``Method.workbench``. The explorer asks :func:`explorer_part` for
each method; it names none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from haf_tui.methods.declare import Method
from haf_tui.methods.declared_parts import workbench_of
from haf_tui.methods.registry import MethodLoadError
from haf_tui.store import Store

if TYPE_CHECKING:
    from textual.widget import Widget
    from textual.widgets.tree import TreeNode

    from haf_tui.tui.tree_input import TreeInput
    from haf_tui.tui.widgets.stance_tree import StanceTree


@dataclass(frozen=True)
class NodeRef:
    """Which generation (stage, sub_index) a node of an instance's tree stands for and, for a
    reason, which one (or, by a part's ``stage``, that its node opens the part's pane)."""

    stage: str
    sub_index: int = -1
    reason_index: int | None = None


class DetailPane(Protocol):
    """A pane the explorer shows in place of the token view: what was read, or a message."""

    def show(self, data: Any) -> None:
        """Show what the part's ``read`` returned for one instance."""

    def show_message(self, text: str) -> None:
        """Show one line instead (loading, or why nothing can be shown)."""


MethodNode = Callable[["StanceTree", Method[Any], "TreeInput"], NodeRef | None]
"""A method's nodes in an instance's tree: added under the root, returning the node the tree
opens on (None: none of its own)."""
PaneReader = Callable[[Store, str, str, Method[Any]], object]
"""What a pane shows of one instance of a run: ``read(store, run_id, instance_id, method)``,
called in a worker thread."""
RelatedReader = Callable[[Store, str, Sequence[str]], tuple[object, ...]]
"""The other runs whose items a run's explorer shows: ``related(store, run_id, suites)``."""
ManyReader = Callable[[Store, Sequence[object], Sequence[str]], Mapping[str, Sequence[object]]]
"""Instance id → its items by the related runs: ``read_many(store, related, ids)``, read with
the instances."""
AttachedReader = Callable[[Store, Sequence[str]], Mapping[str, Sequence[object]]]
"""Instance id → a method's items of related runs, for the instances asked for (its
``read_many`` bound to those runs)."""
Attach = Callable[["TreeNode[NodeRef | None]", Sequence[object]], None]
"""Add one instance's items under a node of its tree (the ``index``-th item's node carries
``NodeRef(stage, index)``: its pane shows that item)."""


@dataclass(frozen=True)
class ExplorerPart:
    """What a method adds to the explorer. ``stage``: the ``NodeRef.stage`` of its nodes
    that open its pane (a name no generation's stage has); ``pane``: builds that pane (a
    :class:`DetailPane` widget); ``node``: draws its nodes (None: the method's ``view`` kind,
    else its title over its node lines); ``read``: what the pane shows of an instance, read
    when its node is first shown and kept; ``noun``: what the pane shows, for "loading the
    … of <id>"; ``short_tree``: in a run without a stance tree, the tree keeps to its lines
    and the pane takes the rest. Items of other runs (a judge run's ratings of the run's
    explanations): ``related`` names those runs, ``read_many`` reads their items with the
    instances, ``attach`` adds an instance's items to its tree (under the explanation judged,
    by a stance tree, else at the top) and the pane shows the item under the cursor (no
    ``read``); ``marks``: the legend marks its nodes use when there are such runs."""

    stage: str
    pane: Callable[[], Widget]
    read: PaneReader | None = None
    node: MethodNode | None = None
    noun: str = ""
    short_tree: bool = False
    related: RelatedReader | None = None
    read_many: ManyReader | None = None
    attach: Attach | None = None
    marks: tuple[str, ...] = ()


def explorer_part(method: Method[Any]) -> ExplorerPart | None:
    """``method``'s part of the explorer (None: it declares none, or what it declares is
    no :class:`ExplorerPart`)."""
    found = workbench_of(method)
    if found is None:
        return None
    if not isinstance(found, ExplorerPart):
        raise MethodLoadError(
            f"method {method.name!r}: its workbench part {method.workbench} is a "
            f"{type(found).__name__}, not an ExplorerPart"
        )
    return found


def explorer_parts(
    every: Iterable[Method[Any]],
) -> tuple[dict[str, ExplorerPart], list[str]]:
    """The parts of the explorer the methods ``every`` declare, by method name, and one line
    for each that could not be loaded (that method's nodes are then drawn as if it declared
    none)."""
    parts: dict[str, ExplorerPart] = {}
    problems: list[str] = []
    for method in every:
        try:
            part = explorer_part(method)
        except MethodLoadError as error:
            problems.append(str(error))
            continue
        if part is not None:
            parts[method.name] = part
    return parts, problems


def related_runs(
    store: Store, run_id: str, suites: Sequence[str], parts: Mapping[str, ExplorerPart]
) -> dict[str, tuple[object, ...]]:
    """By method: the other runs whose items its part of the explorer shows with run
    ``run_id``'s instances (its ``related``; a part with none is left out)."""
    return {
        name: part.related(store, run_id, suites)
        for name, part in parts.items()
        if part.related is not None
    }


def attached_readers(
    parts: Mapping[str, ExplorerPart], related: Mapping[str, tuple[object, ...]]
) -> dict[str, AttachedReader]:
    """By method: the reader of its items of its ``related`` runs for the instances asked for
    (the parts with such runs and a ``read_many``)."""
    return {
        name: _bound(read_many, runs)
        for name, runs in related.items()
        if runs and (read_many := parts[name].read_many) is not None
    }


def _bound(read_many: ManyReader, runs: Sequence[object]) -> AttachedReader:
    """``read_many`` of the related runs ``runs``."""
    return lambda store, ids: read_many(store, runs, ids)
