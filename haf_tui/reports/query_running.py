"""Running named queries (:mod:`haf_tui.reports.queries`) with their parameters: values
typed on a command line converted to the declared types, defaults filled, run-id prefixes
resolved; and the ``instances`` query's rows as the faces read them."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from haf_tui.reports.queries import NamedQuery, QueryError, QueryParam, Result, get_query
from haf_tui.store.errors import StoreError
from haf_tui.vocabulary import METRIC_LABELS

if TYPE_CHECKING:
    from haf_tui.store import Store

_RUN_PARAMS: Final = ("run_id", "run_ids")


def _coerce_scalar(value: Any, param_type: str, where: str) -> Any:
    if value is None:
        return None
    if param_type == "BOOLEAN":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "yes", "1", "on"):
            return True
        if text in ("false", "no", "0", "off"):
            return False
        raise QueryError(f"{where}: expected a boolean, got {value!r}")
    if param_type in ("INTEGER", "BIGINT"):
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise QueryError(f"{where}: expected an integer, got {value!r}")
        try:
            return int(value)
        except (TypeError, ValueError):
            raise QueryError(f"{where}: expected an integer, got {value!r}") from None
    if param_type == "DOUBLE":
        if isinstance(value, bool):
            raise QueryError(f"{where}: expected a number, got {value!r}")
        try:
            return float(value)
        except (TypeError, ValueError):
            raise QueryError(f"{where}: expected a number, got {value!r}") from None
    return str(value)


def coerce_param(param: QueryParam, value: Any, query: str = "") -> Any:
    """``value`` as ``param``'s declared type; text (``"0.7"``, ``"a,b"``) is converted."""
    where = f"parameter {param.name}" + (f" of {query}" if query else "")
    if param.type.endswith("[]"):
        if value is None:
            return []
        if isinstance(value, str):
            items: list[Any] = [v.strip() for v in value.split(",") if v.strip()]
        elif isinstance(value, list | tuple | set | frozenset):
            items = list(value)
        else:
            raise QueryError(f"{where}: expected a list, got {value!r}")
        return [_coerce_scalar(v, param.type[:-2], where) for v in items]
    return _coerce_scalar(value, param.type, where)


def resolve_run_id(store: Store, run_id: str) -> str:
    """A run id from an exact id or a unique prefix (QueryError otherwise)."""
    ids = store.run_ids_starting(run_id)
    if run_id in ids:
        return run_id
    if not ids:
        raise QueryError(f"no run {run_id!r} in {store.path}")
    if len(ids) > 1:
        shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
        raise QueryError(f"run id prefix {run_id!r} is ambiguous ({shown})")
    return ids[0]


def resolve_params(
    store: Store, query: NamedQuery, params: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The values ``query`` runs with: given ones converted, defaults filled, run ids resolved.

    QueryError for an undeclared parameter, a missing required one or a value of the wrong type.
    """
    given = dict(params or {})
    unknown = sorted(set(given) - set(query.params))
    if unknown:
        known = ", ".join(query.params) or "none"
        raise QueryError(
            f"query {query.name!r} takes no parameter {', '.join(unknown)} (it takes: {known})"
        )
    missing = [p.name for p in query.param_specs if p.required and given.get(p.name) is None]
    if missing:
        raise QueryError(f"query {query.name!r} needs parameter {', '.join(missing)}")
    values: dict[str, Any] = {}
    for param in query.param_specs:
        raw = given[param.name] if given.get(param.name) is not None else param.default
        value = coerce_param(param, raw, query.name)
        if param.name in _RUN_PARAMS and value is not None:
            value = (
                [resolve_run_id(store, v) for v in value]
                if isinstance(value, list)
                else resolve_run_id(store, value)
            )
        values[param.name] = value
    return values


def run_query(store: Store, query: NamedQuery, params: Mapping[str, Any] | None = None) -> Result:
    """Run a parsed named query with :func:`resolve_params`' values."""
    values = resolve_params(store, query, params)
    try:
        return store.query_user(query.sql, values)  # a file a user may have written
    except StoreError as exc:
        raise QueryError(f"query {query.name!r}: {exc}") from exc


def run_named(store: Store, name: str, params: Mapping[str, Any] | None = None) -> Result:
    """Run the named query ``name``; returns (column names, rows)."""
    return run_query(store, get_query(name), params)


def went_on(row: Mapping[str, Any]) -> bool:
    """Whether an instance (a row of the ``instances`` query) went on after JUSTIFY with
    reasons."""
    return bool(row.get("n_reasons")) and not row.get("stopped")


def first_with_reasons(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The first instance that :func:`went_on`: where the explorer opens, and what ``haf run``
    suggests to look at."""
    return next((str(r["instance_id"]) for r in rows if went_on(r)), None)


def went_on_said(rows: Sequence[Mapping[str, Any]]) -> str:
    """``N of M instances went on after JUSTIFY.``: how ``haf run`` and the workbench's
    monitor begin what they say of a finished run with HAF."""
    on = sum(1 for row in rows if went_on(row))
    return f"{on} of {len(rows)} instances went on after JUSTIFY."


def defined_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many instances (rows of the ``instances`` query) each HAF metric is defined on
    (a finite value: NULL and NaN are undefined), by its report name: what a number the run
    reports rests on."""
    return {
        name: sum(1 for r in rows if _finite(r.get(column)))
        for column, name in METRIC_LABELS.items()  # (the instances query's columns)
    }


def rests_on(rows: Sequence[Mapping[str, Any]]) -> str:
    """``Each HAF number rests on the instances it is defined for: SoS 3, …, RN 1``: what
    ``haf run`` says at its end, and the workbench's monitor when a run finishes."""
    counts = ", ".join(f"{name} {n}" for name, n in defined_counts(rows).items())
    return f"Each HAF number rests on the instances it is defined for: {counts}"


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def instance_rows(store: Store, run_id: str) -> list[dict[str, Any]]:
    """The ``instances`` query of one run, as dicts."""
    columns, rows = run_named(store, "instances", {"run_id": run_id})
    return [dict(zip(columns, row, strict=True)) for row in rows]
