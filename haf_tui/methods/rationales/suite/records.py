"""The rationales method's own table, ``rationales`` (its migration 1: one row per rationale of
an instance), and its row, :class:`RationaleRecord`. A file made before the table was the
method's own holds it already (core migration 6 made it): the migration creates it only where
it is missing, with the same columns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Final

from haf_tui.store.method_tables import MethodMigration

if TYPE_CHECKING:
    from haf_tui.methods.base import SuiteOutcome

TABLE: Final = "rationales"

MIGRATIONS: Final = (
    MethodMigration(
        1,
        "rationales: each rationale of an instance (prompted, occlusion, baselines) with its "
        "mask, scores, scored texts and plausibility, faithfulness and complexity",
        """
        CREATE TABLE IF NOT EXISTS rationales (
            run_id            VARCHAR NOT NULL,
            instance_id       VARCHAR NOT NULL,
            source            VARCHAR NOT NULL,
            seed              INTEGER NOT NULL,
            label_shown       VARCHAR,
            k                 INTEGER,
            mask              INTEGER[] NOT NULL,
            scores            DOUBLE[],
            words             VARCHAR[],
            out_of_text       VARCHAR[],
            size              INTEGER NOT NULL,
            text_without      VARCHAR,
            text_only         VARCHAR,
            p_full            DOUBLE,
            p_without         DOUBLE,
            p_only            DOUBLE,
            predicted_without VARCHAR,
            comp              DOUBLE,
            suff              DOUBLE,
            flip              INTEGER,
            token_f1          DOUBLE,
            token_f1_union    DOUBLE,
            auprc             DOUBLE,
            soft_auprc        DOUBLE,
            iou_precision     DOUBLE,
            iou_recall        DOUBLE,
            true_positives    INTEGER,
            gold_size         INTEGER,
            cpx_entropy       DOUBLE,
            cpx_entropy_norm  DOUBLE,
            spr_gini          DOUBLE,
            cpx_ratio         DOUBLE,
            spr_ratio         DOUBLE,
            n_nonpositive     INTEGER,
            PRIMARY KEY (run_id, instance_id, source, seed)
        );
        """,
    ),
)


@dataclass
class RationaleRecord:
    """One rationale of an instance (``docs/methods/rationales.md``) with every number it has.

    ``source``: ``prompt_gold`` / ``prompt_predicted`` (asked with the gold or the predicted
    label shown), ``occlusion`` (top-k by leave-one-out scores), ``human`` (HARD),
    ``random`` (one row per ``seed``) or ``everything``. Masks and scores are per word token;
    the texts are the ones actually scored without R and with only R.
    """

    run_id: str
    instance_id: str
    source: str
    seed: int = 0
    label_shown: str | None = None
    k: int | None = None
    mask: list[int] = field(default_factory=list)
    scores: list[float] | None = None
    words: list[str] | None = None
    out_of_text: list[str] | None = None
    size: int = 0
    text_without: str | None = None
    text_only: str | None = None
    p_full: float | None = None
    p_without: float | None = None
    p_only: float | None = None
    predicted_without: str | None = None
    comp: float | None = None
    suff: float | None = None
    flip: int | None = None
    token_f1: float | None = None
    token_f1_union: float | None = None
    auprc: float | None = None
    soft_auprc: float | None = None
    iou_precision: float | None = None
    iou_recall: float | None = None
    true_positives: int | None = None
    gold_size: int | None = None
    cpx_entropy: float | None = None
    cpx_entropy_norm: float | None = None
    spr_gini: float | None = None
    cpx_ratio: float | None = None
    spr_ratio: float | None = None
    n_nonpositive: int | None = None

    @classmethod
    def columns(cls) -> list[str]:
        """The column names, in table order."""
        return list(cls.__dataclass_fields__)

    def stored(self) -> dict[str, Any]:
        """Its columns as the suite hands them to the store (which adds the run and the
        instance)."""
        row = asdict(self)
        del row["run_id"], row["instance_id"]
        return row

    @classmethod
    def read(cls, row: dict[str, Any]) -> RationaleRecord:
        """A stored row (lists as lists: DuckDB may give tuples)."""
        values: dict[str, Any] = {k: list(v) if isinstance(v, tuple) else v for k, v in row.items()}
        return cls(**values)


def rows_of(outcome: SuiteOutcome) -> list[RationaleRecord]:
    """The rationales an instance's outcome hands the store, as records (no run or instance:
    the store adds them)."""
    return [
        RationaleRecord.read({"run_id": "", "instance_id": "", **row})
        for row in outcome.rows.get(TABLE, [])
    ]
