"""Writing many synthetic records at once: the rows :meth:`Store.save_generation` and
:meth:`Store.save_instance_result` would write, column by column through numpy scans, in one
transaction (``tests/test_bench_tui.py`` checks both give identical tables)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from haf_tui.store import GenerationRecord, InstanceResult, Store

GENERATION_COLUMNS = (
    "run_id instance_id stage sub_index test seed prompt_text prompt_tokens output_text "
    "output_tokens finish_reason decision decision_source decision_sentence decision_start "
    "decision_end decision_confidence seconds"
)
TOKEN_COLUMNS = (
    "run_id instance_id stage sub_index position token_id piece text byte_offset char_offset "
    "logprob top_ids top_logprobs top_texts"
)
REASON_COLUMNS = (
    "run_id instance_id stage sub_index reason_index text span_start span_end token_first "
    "token_count nll relevance confidence"
)
METRIC_COLUMNS = "run_id instance_id stage sub_index reason_index metric value"


def _null(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else value


def _objects(values: list[Any]) -> np.ndarray[Any, Any]:
    column = np.empty(len(values), dtype=object)
    column[:] = values
    return column


def _insert(store: Store, table: str, names: str, rows: list[tuple[Any, ...]]) -> None:
    """``INSERT INTO table (names)`` the rows through one scan of numpy object columns."""
    if rows:
        columns = names.split()
        frame = {
            n: _objects(list(v)) for n, v in zip(columns, zip(*rows, strict=True), strict=True)
        }
        _insert_frame(store, table, frame, columns, columns)


def _insert_frame(
    store: Store, table: str, frame: dict[str, Any], columns: list[str], values: list[str]
) -> None:
    store.connection.register("bench_frame", frame)
    try:
        store.connection.execute(
            f"INSERT INTO {table} ({', '.join(columns)}) "
            f"SELECT {', '.join(values)} FROM bench_frame"
        )
    finally:
        store.connection.unregister("bench_frame")


def _insert_tokens(
    store: Store, keys: list[tuple[str, str, str, int]], generations: list[GenerationRecord]
) -> None:
    """Every token of the generations: a column per field; when every token has k top-k
    alternatives, one column per rank that DuckDB turns into the lists (2× faster)."""
    tokens = [t for g in generations for t in g.tokens]
    if not tokens:
        return
    counts = [len(g.tokens) for g in generations]
    key_names = ("run_id", "instance_id", "stage", "sub_index")
    frame = {n: np.repeat(_objects([k[i] for k in keys]), counts) for i, n in enumerate(key_names)}
    frame["position"] = np.concatenate([np.arange(c) for c in counts])
    for name in ("token_id", "piece", "text", "byte_offset", "char_offset", "logprob"):
        frame[name] = _objects([getattr(t, name) for t in tokens])
    columns = TOKEN_COLUMNS.split()
    values = columns[:-3]
    k = len(tokens[0].top_ids)
    uniform = k and all(
        len(t.top_ids) == len(t.top_texts) == len(t.top_logprobs) == k for t in tokens
    )
    for name in columns[-3:]:
        if uniform:
            matrix = np.array([getattr(t, name) for t in tokens], dtype=object)
            frame.update({f"{name}{i}": matrix[:, i] for i in range(k)})
            values.append(f"[{', '.join(f'{name}{i}' for i in range(k))}]")
        else:
            frame[name] = _objects([list(getattr(t, name)) for t in tokens])
            values.append(name)
    _insert_frame(store, "tokens", frame, columns, values)


def write_records(
    store: Store, generations: list[GenerationRecord], results: list[InstanceResult]
) -> None:
    """In one transaction, the rows :meth:`Store.save_generation` and
    :meth:`Store.save_instance_result` write for these records (NaN stored as NULL alike)."""
    keys = [(g.run_id, g.instance_id, g.stage, g.sub_index) for g in generations]
    with store.transaction():
        _insert(store, "generations", GENERATION_COLUMNS, [
            (*k, g.test, g.seed, g.prompt_text, g.prompt_tokens, g.output_text, len(g.tokens),
             g.finish_reason, g.decision, g.decision_source, g.decision_sentence,
             g.decision_start, g.decision_end, _null(g.decision_confidence), g.seconds)
            for k, g in zip(keys, generations, strict=True)
        ])  # fmt: skip
        _insert_tokens(store, keys, generations)
        _insert(store, "reasons", REASON_COLUMNS, [
            (*k, r.reason_index, r.text, r.span_start, r.span_end, r.token_first, r.token_count,
             list(r.nll), list(r.relevance), _null(r.confidence))
            for k, g in zip(keys, generations, strict=True) for r in g.reasons
        ])  # fmt: skip
        _insert(store, "parse_diagnostics", "run_id instance_id stage sub_index kind detail", [
            (*k, kind, detail)
            for k, g in zip(keys, generations, strict=True) for kind, detail in g.diagnostics
        ])  # fmt: skip
        _insert(store, "instance_results", "run_id instance_id stance n_reasons stopped", [
            (r.run_id, r.instance_id, r.stance, r.n_reasons, r.stopped) for r in results
        ])  # fmt: skip
        _insert(store, "reason_metrics", METRIC_COLUMNS, [
            (r.run_id, r.instance_id, *m[:4], _null(m[4]))
            for r in results for m in r.reason_metrics
        ])  # fmt: skip
        _insert(store, "instance_metrics", "run_id instance_id metric value n", [
            (r.run_id, r.instance_id, m[0], _null(m[1]), m[2])
            for r in results for m in r.instance_metrics
        ])  # fmt: skip
