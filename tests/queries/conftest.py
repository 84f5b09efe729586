"""The hand-made store of tests/support/report_store.py as fixtures: built once per module,
each test on a private copy, reading the repository's queries/."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from haf_tui import reports
from haf_tui.store import (
    Store,
    open_store,
)
from tests.support.report_store import (
    build_store,
)


@pytest.fixture(autouse=True)
def builtin_queries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests read the repository's queries/, whatever the environment says."""
    monkeypatch.delenv(reports.QUERIES_ENV, raising=False)


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hand-made store, built once per module through the Store API."""
    path = tmp_path_factory.mktemp("reports") / "template.duckdb"
    with open_store(path) as opened:
        build_store(opened)
    return path


@pytest.fixture
def store(tmp_path: Path, template_db: Path) -> Iterator[Store]:
    """A private copy of the hand-made store (a test may change it)."""
    path = tmp_path / "haf.duckdb"
    shutil.copyfile(template_db, path)
    with open_store(path) as opened:
        yield opened
