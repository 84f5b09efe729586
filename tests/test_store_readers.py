"""The store's readers return typed rows: frozen dataclasses (or pydantic models) with named
fields, never tuples or ``Any``; each one read on a synthetic store gives its row type."""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from benchmarks.benchdata import build_bench_db
from haf_tui.methods.judge.reports.readers import (
    instance_judgements,
    judge_codes,
    judge_run,
    judge_runs_of,
)
from haf_tui.store import Store, open_store
from haf_tui.store import instance_readers as instance_readers_module
from haf_tui.store import readers as readers_module
from haf_tui.store.instance_readers import (
    DetailRow,
    GenerationRow,
    ReasonMetricRow,
    ReasonRow,
    TokenRow,
    detail_rows,
    instance_metric_values,
    instance_parts,
    instance_tokens,
    method_table_rows,
    run_instance,
    stage_answers,
)
from haf_tui.store.readers import (
    InstanceExtra,
    MetricValues,
    RunOverview,
    RunProgress,
    SchemaColumn,
    Stops,
    dataset_extras,
    defined_metric_values,
    run_explanations,
    run_overviews,
    run_progress,
    run_stops,
    schema_columns,
)

PLAIN = (str, int, float, bool, type(None))


def _readers() -> Iterator[tuple[str, Callable[..., Any]]]:
    """Every public function of the reader modules that reads a store."""
    for module in (readers_module, instance_readers_module):
        for name, function in inspect.getmembers(module, inspect.isfunction):
            first = next(iter(inspect.signature(function).parameters), "")
            if function.__module__ == module.__name__ and first == "store":
                yield f"{module.__name__}.{name}", function


def _untyped(hint: Any) -> list[str]:
    """What in a return annotation is not a named row: tuples, ``Any``, dicts of rows."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any or origin is tuple or hint is tuple:
        return [repr(hint)]
    if origin in (list, set, frozenset, typing.Union, types.UnionType):
        return [bad for arg in args for bad in _untyped(arg)]
    if origin is dict:  # a mapping of names (or indexes) to plain values
        key, value = args
        return [] if key in (str, int) and not _untyped_value(value) else [repr(hint)]
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        frozen = hint.__dataclass_params__.frozen  # type: ignore[attr-defined]
        record = hint.__module__ == "haf_tui.store.records"  # (what a run writes, read back)
        return [] if frozen or record else [f"{hint.__name__} is not frozen"]
    if isinstance(hint, type) and (issubclass(hint, BaseModel) or hint in PLAIN):
        return []
    return [repr(hint)]


def _untyped_value(hint: Any) -> bool:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_untyped_value(arg) for arg in args)
    if origin is dict:
        return bool(_untyped(hint))
    return hint not in PLAIN


def test_every_reader_is_annotated_with_named_rows() -> None:
    found = dict(_readers())
    assert len(found) >= 18
    for name, function in found.items():
        hint = typing.get_type_hints(function)["return"]
        assert _untyped(hint) == [], name


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, str]]:
    path = tmp_path_factory.mktemp("readers") / "readers.duckdb"
    (run_id,) = build_bench_db(path, n_instances=6, n_runs=1, seed=3)
    with open_store(path, read_only=True) as opened:
        yield opened, run_id


def _is_row(value: Any, row_type: type) -> bool:
    """``value`` is a ``row_type`` whose fields are named (a frozen dataclass or a model)."""
    if not isinstance(value, row_type):
        return False
    if dataclasses.is_dataclass(value):
        return bool(dataclasses.fields(value))
    return isinstance(value, BaseModel) and bool(type(value).model_fields)


def test_every_reader_returns_its_typed_row(store: tuple[Store, str]) -> None:
    db, run_id = store
    ids = [row.instance_id for row in instance_parts(db, run_id, ["t00000"]).generations]
    assert ids and {*ids} == {"t00000"}
    every = [f"t{i:05d}" for i in range(6)]
    parts = instance_parts(db, run_id, every)
    for rows, row_type in (
        (run_overviews(db), RunOverview),
        ([run_progress(db, run_id)], RunProgress),
        (parts.generations, GenerationRow),
        (parts.reasons, ReasonRow),
        (parts.reason_metrics, ReasonMetricRow),
        (instance_tokens(db, run_id, every), TokenRow),
        (detail_rows(parts.generations, parts.reasons, parts.reason_metrics), DetailRow),
        (defined_metric_values(db, ["sos", "rs"]), MetricValues),
        (schema_columns(db), SchemaColumn),
        ([run_stops(db, [run_id])], Stops),
        (dataset_extras(db, run_overviews(db)[0].dataset_id, every), InstanceExtra),
    ):
        assert rows, row_type
        assert all(_is_row(row, row_type) for row in rows), row_type
    explanations = run_explanations(db, run_id)
    assert explanations and explanations[0].instance_id in every
    assert run_instance(db, run_id, "t00000") is not None
    assert method_table_rows(db, "rationales", run_id, "t00000") == []  # (no rationales suite)
    assert method_table_rows(db, "runs", run_id, "t00000") == []  # (haf's own: not a method's)
    assert all(isinstance(v, float) for v in instance_metric_values(db, run_id, "t00000").values())
    assert stage_answers(db, run_id, "t00000", "justify") and not judge_runs_of(db, run_id)
    assert judge_run(db, run_id) is None and judge_codes(db, run_id, ["overall"]) == {}
    assert instance_judgements(db, [run_id], every) == []


def test_the_stops_reader_counts_stopped_instances(store: tuple[Store, str]) -> None:
    db, run_id = store
    stops = run_stops(db, [run_id])
    assert stops == run_stops(db, [])  # (one run: every run)
    assert 0 <= stops.stopped <= stops.total == 6
    assert run_stops(db, ["no-such-run"]) == Stops(0, 0, None)


def test_a_run_table_is_exported_by_name_only(store: tuple[Store, str], tmp_path: Path) -> None:
    from haf_tui.store.readers import export_run_table

    db, run_id = store
    target = tmp_path / "reasons.csv"
    n = export_run_table(db, "reasons", run_id, target, "csv")
    assert n > 0 and target.read_text().startswith("run_id,")
    with pytest.raises(ValueError, match="not a table of a run"):
        export_run_table(db, "runs; DROP TABLE runs", run_id, tmp_path / "x.csv", "csv")
