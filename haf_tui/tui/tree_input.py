"""What an instance's tree is drawn from, pure (no Textual): the ``instance_detail`` rows
grouped by generation, the instance's metrics, text and the items of related runs its methods'
parts attach (a judge run's ratings), and which methods' nodes it shows (the registry says
which stages belong to which method)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from haf_tui.config import RunConfig
from haf_tui.methods.declare import Method, NodeInput
from haf_tui.methods.registry import UnknownSuiteError, method_of_stage, methods
from haf_tui.store.instance_readers import DetailRow


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


@dataclass
class TreeInput:
    """What the method views of one instance's tree draw from (``attached``: each method's
    items of related runs, by method name; ``placed``: the methods whose items have their
    place already)."""

    instance_id: str
    text: str
    groups: dict[tuple[str, int], Generation]
    attached: Mapping[str, Sequence[object]] = field(default_factory=dict)
    metrics: Mapping[str, float | None] = field(default_factory=dict)
    placed: set[str] = field(default_factory=set)

    def generations(self, method: Method[Any]) -> list[tuple[str, int]]:
        """The (stage, sub-index) of each generation of ``method``, in query order."""
        return [key for key in self.groups if key[0] in method.suite.stages]

    def node_input(self, method: Method[Any]) -> NodeInput:
        """What ``method``'s node lines are drawn from."""
        generations = [
            {
                "stage": stage,
                "sub_index": sub_index,
                "test": self.groups[stage, sub_index].row.test,
                "decision": self.groups[stage, sub_index].row.decision,
                "decision_confidence": self.groups[stage, sub_index].row.decision_confidence,
            }
            for stage, sub_index in self.generations(method)
        ]
        return NodeInput(self.instance_id, self.text, self.metrics, generations)


def shown_methods(
    groups: Mapping[tuple[str, int], Generation], suites: Sequence[str] | None
) -> list[Method[Any]]:
    """The methods whose nodes a tree shows, in registry order: the run's (``suites``; None:
    a run with the default config unless the rows name others) and those with stored
    generations."""
    stored = set()
    for stage, _ in groups:
        try:
            stored.add(method_of_stage(stage).name)
        except UnknownSuiteError:
            continue
    names = (stored or set(RunConfig().suites)) if suites is None else stored.union(suites)
    return [method for name, method in methods().items() if name in names]
