"""Records the store reads and writes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from haf_tui.inference.base import GeneratedToken


class InstanceRecord(BaseModel):
    """One text of a dataset."""

    model_config = ConfigDict(frozen=True)

    instance_id: str
    position: int
    text: str
    label: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


class RunRecord(BaseModel):
    """A run: what was asked (``config_json``) and what it ran on."""

    run_id: str
    status: str
    dataset_id: str
    n_planned: int
    config_json: str
    model_file: str
    model_size: int | None = None
    model_sha256: str | None = None
    model_arch: str | None = None
    model_quant: str | None = None
    chat_format: str | None = None
    similarity_model: str
    similarity_kind: str
    offload_supported: bool | None = None
    n_gpu_layers: int | None = None
    versions: dict[str, str] = Field(default_factory=dict)
    seconds_running: float = 0.0
    error: str | None = None

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> RunRecord:
        """From ``Store.get_run``'s column order."""
        names = [
            "run_id",
            "status",
            "dataset_id",
            "n_planned",
            "config_json",
            "model_file",
            "model_size",
            "model_sha256",
            "model_arch",
            "model_quant",
            "chat_format",
            "similarity_model",
            "similarity_kind",
            "offload_supported",
            "n_gpu_layers",
            "versions",
            "seconds_running",
            "error",
        ]
        values = dict(zip(names, row, strict=True))
        values["versions"] = json.loads(values["versions"]) if values["versions"] else {}
        if not isinstance(values["config_json"], str):
            values["config_json"] = json.dumps(values["config_json"])
        return cls(**values)


@dataclass(frozen=True)
class ReasonRecord:
    """A parsed reason with its tokens' NLL and relevance and its TokenSAR confidence."""

    reason_index: int
    text: str
    span_start: int
    span_end: int
    token_first: int | None
    token_count: int
    nll: tuple[float, ...]
    relevance: tuple[float, ...]
    confidence: float


@dataclass
class GenerationRecord:
    """One finished generation and what was parsed and scored from it."""

    run_id: str
    instance_id: str
    stage: str
    sub_index: int
    test: str | None
    seed: int
    prompt_text: str
    prompt_tokens: int
    output_text: str
    finish_reason: str
    decision: str
    decision_source: str | None
    decision_sentence: str | None
    decision_start: int | None
    decision_end: int | None
    decision_confidence: float
    seconds: float
    tokens: list[GeneratedToken] = field(default_factory=list)
    reasons: list[ReasonRecord] = field(default_factory=list)
    diagnostics: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class InstanceResult:
    """An instance's stance, why it stopped early (if it did), and its metrics.

    ``reason_metrics`` rows: (stage, sub_index, reason_index, metric, value);
    ``instance_metrics`` rows: (metric, value, n).
    """

    run_id: str
    instance_id: str
    stance: str | None
    n_reasons: int
    stopped: str | None = None
    reason_metrics: list[tuple[str, int, int, str, float]] = field(default_factory=list)
    instance_metrics: list[tuple[str, float, int]] = field(default_factory=list)
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Rows for the methods' own tables: table name → rows (column → value; the store fills
    in ``run_id`` and ``instance_id``)."""
