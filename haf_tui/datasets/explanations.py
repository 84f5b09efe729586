"""A run's JUSTIFY explanations as a dataset, for a judge run (spec ``JUDGE.md`` §4.1): each
instance keeps its text and gold label, and carries the item the judge rates (the question
with the TEXT, the choices toxic / not toxic, the reasons as a numbered list without the
decision sentence) and the stance the explanation argued for. An explanation without reasons
is skipped (there is nothing to rate)."""

from __future__ import annotations

from haf_tui.datasets.model import Dataset, DatasetError
from haf_tui.datasets.validation import SkippedRow
from haf_tui.judge.prompts import toxicity_item
from haf_tui.store import Store, StoreError
from haf_tui.store.readers import run_explanations
from haf_tui.store.records import InstanceRecord

NO_REASONS = "the explanation lists no reasons"


def explanations_dataset(store: Store, run_id: str) -> Dataset:
    """The explanations of run ``run_id`` (a one-line error when there is no such run or it
    has no JUSTIFY answers)."""
    try:
        record = store.get_run(run_id)
    except StoreError as exc:
        raise DatasetError(f"no run {run_id!r} to judge: {exc}") from exc
    explanations = run_explanations(store, record.run_id)
    if not explanations:
        raise DatasetError(f"run {record.run_id} has no JUSTIFY explanations to judge")
    instances: list[InstanceRecord] = []
    skipped: list[SkippedRow] = []
    for number, item in enumerate(explanations, start=1):
        if not item.reasons:
            skipped.append(SkippedRow(number, NO_REASONS, item.text[:80]))
            continue
        judged = toxicity_item(item.text, item.reasons)
        instances.append(
            InstanceRecord(
                instance_id=item.instance_id,
                position=len(instances),
                text=item.text,
                label=item.label,
                extra={
                    "judge_item": judged.as_extra(),
                    "stance": item.stance,
                    "source_run": record.run_id,
                },
            )
        )
    return Dataset(
        f"explanations-{record.run_id}",
        f"explanations of run {record.run_id}",
        f"run:{record.run_id}",
        instances,
        skipped,
        {"kind": "explanations", "source_run": record.run_id, "model": record.model_file},
    )
