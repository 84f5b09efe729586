"""A method's own tables, declared in its package (``Method.migrations``): created when a file
is opened, recorded in ``method_migrations`` and never applied twice, filled by a suite through
``SuiteOutcome.rows``, deleted with the run, confined to ``<method>_…`` tables, and read from
an older file through the migrated copy."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import ClassVar

import duckdb
import pytest

from haf_tui.config import RunConfig
from haf_tui.inference.base import Generation
from haf_tui.messages import ChatMessage
from haf_tui.methods import registry
from haf_tui.methods.base import Answer, Reply, SuiteContext, SuiteOutcome, Task, unparsed_record
from haf_tui.methods.declare import Method
from haf_tui.methods.registry import MethodLoadError, methods, register_method
from haf_tui.pipeline.runner import HafRunner
from haf_tui.store import StoreError, open_store
from haf_tui.store import method_tables as store_method_tables
from haf_tui.store.annotations import delete_run
from haf_tui.store.method_tables import MethodMigration
from haf_tui.store.readers import schema_columns
from haf_tui.store.records import GenerationRecord, InstanceRecord
from tests.test_scheduler import FlatSimilarity, ScriptedBackend, _store_with_run

SCORES = MethodMigration(
    1, "toy_scores", "CREATE TABLE toy_scores (run_id VARCHAR, instance_id VARCHAR, score DOUBLE)"
)


class ToyPlan:
    """One prompt per instance, nothing after."""

    def __init__(self, text: str) -> None:
        self.text = text

    def start(self) -> Sequence[Task]:
        return [Task("toy_echo", -1, None, (ChatMessage("user", f"Repeat: {self.text}"),))]

    def advance(self, task: Task, reply: Reply) -> tuple[Sequence[Task], object]:
        return [], None

    def planned(self) -> dict[str, int]:
        return {"toy_echo": 1}


class ToySuite:
    """Stores each answer's length in its method's own table."""

    name = "toy"
    stages = ("toy_echo",)
    titles: ClassVar[dict[str, str]] = {"toy_echo": "toy echo"}

    def run_stages(self, config: RunConfig) -> tuple[str, ...]:
        return self.stages

    def plan(self, instance: InstanceRecord, config: RunConfig) -> ToyPlan:
        return ToyPlan(instance.text)

    def record(
        self,
        context: SuiteContext,
        instance: InstanceRecord,
        task: Task,
        seed: int,
        generation: Generation,
        carried: object,
    ) -> GenerationRecord:
        return unparsed_record(
            context, instance, task, seed, generation, decision="echoed", decision_source="toy"
        )

    def finish(
        self, context: SuiteContext, instance: InstanceRecord, answers: Sequence[Answer]
    ) -> SuiteOutcome:
        (answer,) = answers
        return SuiteOutcome(
            instance_metrics=[("toy_length", float(len(answer.text)), 1)],
            rows={"toy_scores": [{"score": float(len(answer.text))}]},
        )


def toy(*migrations: MethodMigration) -> Method[RunConfig]:
    return Method(
        name="toy",
        title="Toy",
        description="an answer's length, in a table of its own",
        suite=ToySuite(),
        migrations=migrations,
    )


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The registry and the store's migrations as they are, restored after the test."""
    monkeypatch.setattr(registry, "_loaded", dict(methods()))
    monkeypatch.setattr(
        store_method_tables, "METHOD_MIGRATIONS", dict(store_method_tables.METHOD_MIGRATIONS)
    )
    yield


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.usefixtures("fresh_registry")
def test_a_method_table_is_created_on_open_recorded_and_not_applied_again(
    tmp_path: Path,
) -> None:
    register_method(toy(SCORES))
    path = tmp_path / "h.duckdb"
    with open_store(path) as store:
        assert store.query("SELECT count(*) FROM toy_scores")[1] == [(0,)]
        recorded = store.query(
            "SELECT method, version, description FROM method_migrations WHERE method = 'toy'"
        )[1]
        assert recorded == [("toy", 1, "toy_scores")]
        (applied_at,) = store.query(
            "SELECT applied_at FROM method_migrations WHERE method = 'toy'"
        )[1][0]
        assert not store.needs_migration()
    with open_store(path) as store:  # nothing applied twice
        assert store.query("SELECT applied_at FROM method_migrations WHERE method = 'toy'")[1] == [
            (applied_at,)
        ]
        # haf query and the SQL screen's schema browser see it
        assert store.query_user("SELECT * FROM toy_scores")[0] == [
            "run_id",
            "instance_id",
            "score",
        ]
        tables = {c.table for c in schema_columns(store)}
        assert {"toy_scores", "method_migrations"} <= tables
    # the next version of the method adds its migration 2 only
    add = MethodMigration(2, "toy_scores.note", "ALTER TABLE toy_scores ADD COLUMN note VARCHAR")
    register_method(toy(SCORES, add))
    with open_store(path) as store:
        versions = store.query(
            "SELECT version FROM method_migrations WHERE method = 'toy' ORDER BY version"
        )[1]
        assert versions == [(1,), (2,)]
        assert "note" in store.query_user("SELECT * FROM toy_scores")[0]


@pytest.mark.usefixtures("fresh_registry")
def test_a_suite_s_rows_are_stored_with_the_instance_and_deleted_with_the_run(
    tmp_path: Path,
) -> None:
    register_method(toy(SCORES))
    store, config = _store_with_run(tmp_path / "toy.duckdb", 3, 2)
    config = config.model_copy(update={"suites": ("toy",)})
    assert HafRunner(store, ScriptedBackend(), FlatSimilarity(), config).run("run").status == (
        "finished"
    )
    rows = store.query("SELECT run_id, instance_id, score FROM toy_scores ORDER BY ALL")[1]
    lengths = store.query(
        "SELECT instance_id, value FROM instance_metrics WHERE metric = 'toy_length' ORDER BY 1"
    )[1]
    assert rows == [("run", instance, value) for instance, value in lengths]
    assert len(rows) == 3
    deleted = delete_run(store, "run")
    assert deleted["toy_scores"] == 3
    assert store.query("SELECT count(*) FROM toy_scores")[1] == [(0,)]
    store.close()


@pytest.mark.usefixtures("fresh_registry")
def test_rows_for_a_table_of_no_method_are_refused(tmp_path: Path) -> None:
    from haf_tui.store import InstanceResult

    with open_store(tmp_path / "h.duckdb") as store:
        result = InstanceResult("r", "i", None, 0, rows={"runs": [{"status": "x"}]})
        with pytest.raises(StoreError, match="not a table of a method"):
            store.save_instance_result(result)
        assert store.query("SELECT count(*) FROM instance_results")[1] == [(0,)]


@pytest.mark.usefixtures("fresh_registry")
@pytest.mark.parametrize(
    ("sql", "said"),
    [
        ("ALTER TABLE runs ADD COLUMN toy_score DOUBLE", "not the table runs"),
        ("CREATE INDEX toy_by_run ON runs (status)", "not the index toy_by_run on runs"),
        ("DROP TABLE instance_notes", "not the table instance_notes"),
        ("CREATE TABLE toy_ok (x INT); CREATE VIEW runs_too AS SELECT 1", "not the view runs_too"),
        ("INSERT INTO runs (run_id) VALUES ('x')", "only write rows into tables named toy_"),
        ("UPDATE runs SET label = 'x'", "only write rows into tables named toy_"),
        ("CREATE TABLE toy_x (run_id VARCHAR REFERENCES runs (run_id))", "would pin a haf table"),
        ("COMMIT", "a TRANSACTION statement"),
    ],
)
def test_a_migration_outside_the_method_s_tables_is_refused_and_changes_nothing(
    tmp_path: Path, sql: str, said: str
) -> None:
    path = tmp_path / "h.duckdb"
    open_store(path).close()
    before = _digest(path)
    register_method(toy(SCORES, MethodMigration(2, "reach out", sql)))
    with pytest.raises(StoreError) as refused:
        open_store(path)
    message = str(refused.value)
    assert "\n" not in message and said in message
    assert "method 'toy', migration 2 (reach out) refused" in message
    assert _digest(path) == before  # not even migration 1, nor the holder note left
    assert [p.name for p in tmp_path.iterdir()] == ["h.duckdb"]
    register_method(toy())
    with open_store(path) as store:
        assert store.query("SELECT count(*) FROM method_migrations WHERE method = 'toy'")[1] == [
            (0,)
        ]
        tables = {c.table for c in schema_columns(store)}
        assert not {"toy_scores", "toy_ok", "toy_x", "runs_too"} & tables


@pytest.mark.usefixtures("fresh_registry")
def test_a_failing_migration_is_one_line_naming_the_method_and_version(tmp_path: Path) -> None:
    path = tmp_path / "h.duckdb"
    register_method(toy(SCORES, MethodMigration(2, "typo", "ALTER TABLE toy_scorez ADD x INT")))
    with pytest.raises(StoreError, match=r"^method 'toy', migration 2 \(typo\) failed: ") as e:
        open_store(path)
    assert "\n" not in str(e.value)
    with duckdb.connect(str(path), read_only=True) as con:  # the core schema rolled back too
        assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchall() == [(0,)]


@pytest.mark.usefixtures("fresh_registry")
def test_migrations_not_numbered_from_one_are_refused_when_the_method_loads() -> None:
    with pytest.raises(MethodLoadError, match="numbered 1, 2"):
        register_method(toy(MethodMigration(2, "toy_scores", SCORES.sql)))


@pytest.mark.usefixtures("fresh_registry")
def test_an_older_file_opens_read_only_through_the_migrated_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from haf_tui.store import db as store_db
    from haf_tui.store.migrations import LATEST_VERSION, MIGRATIONS

    path = tmp_path / "old.duckdb"
    with monkeypatch.context() as older:
        older.setattr(store_db, "MIGRATIONS", MIGRATIONS[:8])
        older.setattr(store_db, "LATEST_VERSION", 8)
        register_method(toy(SCORES))  # (no method_migrations yet: nothing of the method)
        open_store(path).close()
    before = _digest(path)
    with open_store(path, read_only=True) as store:
        assert store.copied and store.schema_version() == LATEST_VERSION
        assert store.query_user("SELECT count(*) FROM toy_scores")[1] == [(0,)]
        assert store.query("SELECT method, version FROM method_migrations WHERE method = 'toy'")[
            1
        ] == [("toy", 1)]
    assert _digest(path) == before
    # a current file that lacks the method's migration reads through the copy too
    register_method(toy())
    open_store(path).close()
    register_method(toy(SCORES))
    with open_store(path, read_only=True) as store:
        assert store.copied
        assert store.query_user("SELECT count(*) FROM toy_scores")[1] == [(0,)]
    with open_store(path, read_only=True) as store:  # still not written in place
        assert store.copied


@pytest.mark.parametrize(
    ("name", "taken"),
    [
        ("instance", "haf's own table instance_"),
        ("INSTANCE", "haf's own table instance_"),
        ("campaign", "haf's own table campaign_cells"),
        ("method", "haf's own table method_migrations"),
        ("parse", "haf's own table parse_diagnostics"),
        ("reason", "haf's own table reason_metrics"),
        ("skipped", "haf's own table skipped_rows"),
        ("schema", "haf's own table schema_migrations"),
        ("instance_results", "haf's instance_… tables"),
        ("run", "haf's run_… tables"),
        ("Note_x", "haf's note_… tables"),
    ],
)
def test_a_method_whose_tables_could_be_haf_s_is_refused(name: str, taken: str) -> None:
    with pytest.raises(store_method_tables.MethodTableError) as refused:
        store_method_tables.check_method_name(name)
    assert f"method {name!r}: its tables ({name}_…) could be {taken}" in str(refused.value)


@pytest.mark.parametrize("name", ["haf", "classify", "rationales", "judge", "toy", "runner"])
def test_the_built_in_and_other_names_are_accepted(name: str) -> None:
    store_method_tables.check_method_name(name, others=["haf", "classify", "rationales"])


@pytest.mark.parametrize(("name", "other"), [("toy_x", "toy"), ("toy", "toy_x"), ("Toy", "toy")])
def test_a_method_whose_tables_could_be_another_method_s_is_refused(name: str, other: str) -> None:
    with pytest.raises(store_method_tables.MethodTableError, match=f"the method {other!r}"):
        store_method_tables.check_method_name(name, others=[other])


def test_every_core_table_is_named_as_the_reserved_words_say() -> None:
    """A later core migration that names a table outside the rule fails here: add its
    leading word to RESERVED_WORDS (a method of that name is then refused)."""
    for table in store_method_tables.core_tables():
        word = table.split("_", 1)[0]
        if "_" in table:
            assert word in store_method_tables.RESERVED_WORDS, table
        else:
            assert table in store_method_tables.EXACT_CORE_NAMES, table
    assert {"instance_notes", "campaign_cells", "schema_migrations"} <= (
        store_method_tables.core_tables()
    )


@pytest.mark.usefixtures("fresh_registry")
def test_a_migration_writing_a_table_by_another_case_is_still_checked(tmp_path: Path) -> None:
    path = tmp_path / "h.duckdb"
    open_store(path).close()
    register_method(
        toy(SCORES, MethodMigration(2, "rows", "INSERT INTO TOY_scores VALUES (1, 2, 3)"))
    )
    with open_store(path) as store:
        assert store.query("SELECT count(*) FROM toy_scores")[1] == [(1,)]
