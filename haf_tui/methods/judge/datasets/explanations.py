"""A run's JUSTIFY explanations as a dataset, for a judge run
(``docs/methods/judge.md#41-the-item``): each instance keeps its text and gold label, and carries
the item the judge rates (the question with the TEXT, the choices toxic / not toxic, the reasons as
a numbered list without the decision sentence) and the stance the explanation argued for. An
explanation without reasons is skipped (there is nothing to rate).

With ``edits`` (``--dataset edits:RUN_ID``, §5.6) each explanation also comes edited: the
reasons of another text (``<id>~related``) and, for an explanation of more than 3 sentences,
its first sentence alone (``<id>~new_info``); a judge run over it gives the sensitivity
matrix (``haf judge sensitivity``)."""

from __future__ import annotations

from collections.abc import Sequence

from haf_tui.datasets.formats import RunDataset
from haf_tui.datasets.model import Dataset, DatasetError
from haf_tui.datasets.validation import SkippedRow
from haf_tui.methods.judge.core.prompts import toxicity_item
from haf_tui.methods.judge.core.sensitivity import Edit, borrowed, edited_id, truncated
from haf_tui.store import Store, StoreError
from haf_tui.store.readers import Explanation, run_explanations
from haf_tui.store.records import InstanceRecord

NO_REASONS = "the explanation lists no reasons"


def _instance(
    item: Explanation, reasons: Sequence[str], run_id: str, position: int,
    edit: Edit | None = None,
) -> InstanceRecord:  # fmt: skip
    extra: dict[str, object] = {
        "judge_item": toxicity_item(item.text, reasons).as_extra(),
        "stance": item.stance,
        "source_run": run_id,
    }
    if edit is not None:
        extra["judge_edit"] = {"edit": edit, "of": item.instance_id}
    return InstanceRecord(
        instance_id=item.instance_id if edit is None else edited_id(item.instance_id, edit),
        position=position,
        text=item.text,
        label=item.label,
        extra=extra,
    )


def explanations_dataset(
    store: Store, run_id: str, *, edits: bool = False, seed: int = 0
) -> Dataset:
    """The explanations of run ``run_id``, with ``edits`` their §5.6 edits after each one
    (``seed`` draws the borrowed reasons); a one-line error when there is no such run or it
    has no JUSTIFY answers."""
    try:
        record = store.get_run(run_id)
    except StoreError as exc:
        raise DatasetError(f"no run {run_id!r} to judge: {exc}") from exc
    explanations = run_explanations(store, record.run_id)
    if not explanations:
        raise DatasetError(f"run {record.run_id} has no JUSTIFY explanations to judge")
    skipped = [
        SkippedRow(number, NO_REASONS, item.text[:80])
        for number, item in enumerate(explanations, start=1)
        if not item.reasons
    ]
    kept = [item for item in explanations if item.reasons]
    others = (
        borrowed(
            {i.instance_id: i.reasons for i in kept},
            {i.instance_id: i.text for i in kept},
            seed,
        )
        if edits
        else {}
    )
    instances: list[InstanceRecord] = []
    for item in kept:
        instances.append(_instance(item, item.reasons, record.run_id, len(instances)))
        if not edits:
            continue
        if item.instance_id in others:
            instances.append(
                _instance(item, others[item.instance_id], record.run_id, len(instances), "related")
            )
        short = truncated(item.reasons)
        if short is not None:
            instances.append(_instance(item, short, record.run_id, len(instances), "new_info"))
    kind = "explanation-edits" if edits else "explanations"
    what = "explanations and their edits" if edits else "explanations"
    return Dataset(
        f"{kind}-{record.run_id}",
        f"{what} of run {record.run_id}",
        f"{'edits' if edits else 'run'}:{record.run_id}",
        instances,
        skipped,
        {"kind": kind, "source_run": record.run_id, "model": record.model_file, "seed": seed},
    )


def _explanations(store: Store, run_id: str, *, seed: int) -> Dataset:
    return explanations_dataset(store, run_id)  # (no draw: the seed is not the dataset's)


def _edits(store: Store, run_id: str, *, seed: int) -> Dataset:
    return explanations_dataset(store, run_id, edits=True, seed=seed)


EXPLANATIONS = RunDataset("run", "its explanations", _explanations)
"""``--dataset run:RUN_ID``: the JUSTIFY explanations of a run, for a judge run."""
EDITS = RunDataset("edits", "its explanations and their edits", _edits)
"""``--dataset edits:RUN_ID``: those explanations and their §5.6 edits (sensitivity)."""
