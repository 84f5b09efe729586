"""Derived runs (``haf rescore``): a run re-scored with another similarity model g.

A derived run has a parent (``runs.parent_run_id``, migration 11): the run whose instances,
prompts, outputs and tokens it reads. None of those is copied: the derived run's
``generations`` rows hold only what g decides (the follow-up decision Y where similarity
decided it, the decision confidence) with ``prompt_text`` and ``output_text`` NULL; its
``reasons`` (relevance, confidence), ``parse_diagnostics``, ``instance_results`` and metrics
are its own. A reader that needs an output text or tokens of a run reads them from its
*generation source*: the parent of a derived run, else the run itself
(:func:`generation_source`; the explorer's readers and ``token_view`` do).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from haf_tui.inference.base import GeneratedToken
from haf_tui.store.db import Store
from haf_tui.store.errors import StoreError
from haf_tui.store.records import GenerationRecord, InstanceResult
from haf_tui.store.result_rows import (
    DIAGNOSTIC_COLUMNS,
    REASON_COLUMNS,
    diagnostic_rows,
    insert_columns,
    insert_instance_results,
    reason_rows,
)
from haf_tui.vocabulary import null_for_nan

_PARENT_SQL = "SELECT parent_run_id FROM runs WHERE run_id = $run_id"
_DERIVED_SQL = """
SELECT run_id, parent_run_id, similarity_model, similarity_kind, status
FROM runs WHERE parent_run_id IS NOT NULL ORDER BY created_at, run_id
"""
_CREATE_SQL = """
INSERT INTO runs (run_id, status, dataset_id, n_planned, config, model_file, model_size,
                  model_sha256, model_arch, model_quant, chat_format, similarity_model,
                  similarity_kind, offload_supported, n_gpu_layers, versions, parent_run_id,
                  writer_pid, writer_host)
SELECT $run_id, $status, dataset_id, $n_planned, $config, model_file, model_size,
       model_sha256, model_arch, model_quant, chat_format, $similarity_model,
       $similarity_kind, offload_supported, n_gpu_layers, $versions, run_id,
       $writer_pid, $writer_host
FROM runs WHERE run_id = $parent_run_id
RETURNING run_id
"""
_SOURCE_GENERATIONS_SQL = """
SELECT g.instance_id, g.stage, g.sub_index, g.test, g.seed, g.prompt_text, g.prompt_tokens,
       g.output_text, g.finish_reason, g.seconds,
       coalesce(list((t.token_id, t.piece, t.text, t.byte_offset, t.char_offset, t.logprob)
                     ORDER BY t.position) FILTER (WHERE t.position IS NOT NULL), []) AS tokens
FROM generations g
LEFT JOIN tokens t ON t.run_id = g.run_id AND t.instance_id = g.instance_id
     AND t.stage = g.stage AND t.sub_index = g.sub_index
WHERE g.run_id = $run_id AND list_contains($instance_ids::VARCHAR[], g.instance_id)
  AND list_contains($stages::VARCHAR[], g.stage)
GROUP BY ALL
ORDER BY g.instance_id, g.stage, g.sub_index
"""
_UNFINISHED_TABLES = ("reasons", "parse_diagnostics", "generations")


@dataclass(frozen=True)
class DerivedRun:
    """A re-scored run: its id, its parent's, its similarity model g and its status."""

    run_id: str
    parent_run_id: str
    similarity_model: str
    similarity_kind: str
    status: str


@dataclass(frozen=True)
class SourceGeneration:
    """A stored generation as a re-score reads it: the output, its tokens and what the
    record keeps of it (the prompt, its seed, how it ended)."""

    stage: str
    sub_index: int
    test: str | None
    seed: int
    prompt_text: str
    prompt_tokens: int
    output_text: str
    finish_reason: str
    seconds: float
    tokens: tuple[GeneratedToken, ...]


def parent_run(store: Store, run_id: str) -> str | None:
    """The parent of a derived run; None for a run that generated its own answers."""
    rows = store.query(_PARENT_SQL, {"run_id": run_id})[1]
    return str(rows[0][0]) if rows and rows[0][0] is not None else None


def generation_source(store: Store, run_id: str) -> str:
    """The run whose prompts, outputs and tokens ``run_id`` shows: its parent, or itself."""
    return parent_run(store, run_id) or run_id


def derived_runs(store: Store) -> list[DerivedRun]:
    """Every derived run, oldest first."""
    return [
        DerivedRun(str(r), str(p), str(m), str(k), str(s))
        for r, p, m, k, s in store.query(_DERIVED_SQL)[1]
    ]


def children_of(store: Store, run_id: str) -> list[DerivedRun]:
    """The runs derived from ``run_id``."""
    return [d for d in derived_runs(store) if d.parent_run_id == run_id]


def create_derived_run(
    store: Store,
    run_id: str,
    parent_run_id: str,
    *,
    config_json: str,
    similarity_model: str,
    similarity_kind: str,
    n_planned: int,
    versions: dict[str, str],
    running: bool = False,
) -> None:
    """A new derived run row: the parent's model identity, the new g, in one statement;
    ``running``: set running by this process (its writer) in that statement."""
    status = "running" if running else "created"
    writer_pid, writer_host = store.writer_for(run_id, status if running else None)
    params = {
        "run_id": run_id,
        "parent_run_id": parent_run_id,
        "config": config_json,
        "similarity_model": similarity_model,
        "similarity_kind": similarity_kind,
        "n_planned": n_planned,
        "versions": json.dumps(versions),
        "status": status,
        "writer_pid": writer_pid,
        "writer_host": writer_host,
    }
    with store.transaction() as con:
        if len(con.execute(_CREATE_SQL, params).fetchall()) != 1:
            raise StoreError(f"no run {parent_run_id!r} to derive from")


def source_generations_of(
    store: Store, run_id: str, instance_ids: Sequence[str], stages: tuple[str, ...]
) -> dict[str, list[SourceGeneration]]:
    """Each of ``instance_ids``' stored generations of ``stages`` with their tokens, in stage
    order, in one read (an instance with none is left out)."""
    params = {"run_id": run_id, "instance_ids": list(instance_ids), "stages": list(stages)}
    found: dict[str, list[SourceGeneration]] = {}
    for (
        instance_id,
        stage,
        sub_index,
        test,
        seed,
        prompt_text,
        prompt_tokens,
        output_text,
        finish_reason,
        seconds,
        tokens,
    ) in store.query(_SOURCE_GENERATIONS_SQL, params)[1]:
        found.setdefault(str(instance_id), []).append(
            SourceGeneration(
                str(stage),
                int(sub_index),
                None if test is None else str(test),
                int(seed),
                str(prompt_text or ""),
                int(prompt_tokens),
                str(output_text or ""),
                str(finish_reason),
                float(seconds),
                tuple(_token(t) for t in tokens),
            )
        )
    return found


def _token(value: object) -> GeneratedToken:
    """A stored token (a struct of the ``tokens`` row) as the suite scores it."""
    fields: list[Any] = list(value.values() if isinstance(value, dict) else value)  # type: ignore[call-overload]
    token_id, piece, text, byte_offset, char_offset, logprob = fields
    return GeneratedToken(
        int(token_id), bytes(piece), str(text), int(byte_offset), int(char_offset), float(logprob)
    )


def discard_unfinished(store: Store, run_id: str) -> None:
    """Drop the rescored generations of instances whose results are not stored (a re-score
    stopped inside an instance), so a resume scores them again whole."""
    with store.transaction() as con:
        for table in _UNFINISHED_TABLES:  # (fixed names)
            con.execute(
                f"DELETE FROM {table} WHERE run_id = ? AND instance_id NOT IN "
                "(SELECT instance_id FROM instance_results WHERE run_id = ?)",
                [run_id, run_id],
            )


RescoredInstance = tuple[Sequence[tuple[GenerationRecord, int]], InstanceResult]
"""A re-scored instance as it is stored: each generation (a record and its output's token
count) and the instance's results."""


def save_rescored_instances(
    store: Store, instances: Sequence[RescoredInstance], *, finished_after: float | None = None
) -> None:
    """Re-scored instances (a re-score's batch) in one transaction: each generation with its
    decision, confidence, reasons and diagnostics, without its prompt, output or tokens (the
    parent's), then each instance's results (which mark it finished); each table's rows of
    them all in one statement (a transaction and six statements an instance were most of a
    re-score's own time beside g's). All are stored or none: an instance is never half
    written, and a batch stopped while it is written is scored again whole on resume.
    ``finished_after``: the batch is the re-score's last, its run set finished with these
    seconds added in the same transaction."""
    rows: list[list[Any]] = []
    reasons: list[list[Any]] = []
    notes: list[list[Any]] = []
    for generations, _ in instances:
        for g, output_tokens in generations:
            key = [g.run_id, g.instance_id, g.stage, g.sub_index]
            rows.append(_rescored_generation_row(key, g, output_tokens))
            reasons.extend(reason_rows(key, g))
            notes.extend(diagnostic_rows(key, g))
    with store.transaction() as con:
        insert_columns(con, "generations", _RESCORED_GENERATION_COLUMNS, rows)
        insert_columns(con, "reasons", REASON_COLUMNS, reasons)
        insert_columns(con, "parse_diagnostics", DIAGNOSTIC_COLUMNS, notes)
        insert_instance_results(con, [result for _, result in instances])
        if finished_after is not None and instances:
            run_id = instances[0][1].run_id
            store.update_run_in(con, run_id, status="finished", seconds=finished_after)


_RESCORED_GENERATION_COLUMNS = (
    "VARCHAR", "VARCHAR", "VARCHAR", "INTEGER", "VARCHAR", "BIGINT", "=NULL", "INTEGER",
    "=NULL", "INTEGER", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "INTEGER", "INTEGER",
    "DOUBLE", "DOUBLE", "=current_timestamp",
)  # fmt: skip
"""A re-scored ``generations`` row's values: no prompt text, no output text."""


def _rescored_generation_row(key: list[Any], g: GenerationRecord, output_tokens: int) -> list[Any]:
    return [
        *key,
        g.test,
        g.seed,
        g.prompt_tokens,
        output_tokens,
        g.finish_reason,
        g.decision,
        g.decision_source,
        g.decision_sentence,
        g.decision_start,
        g.decision_end,
        null_for_nan(g.decision_confidence),
        0.0,
    ]
