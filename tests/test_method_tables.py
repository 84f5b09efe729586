"""A method's own tables, declared in its package (``Method.migrations``): created when a file
is opened, recorded in ``method_migrations`` and never applied twice, filled by a suite through
``SuiteOutcome.rows``, deleted with the run, confined to ``<method>_…`` tables, and read from
an older file through the migrated copy."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pytest

from haf_tui.config import RunConfig
from haf_tui.methods.declare import Method
from haf_tui.methods.registry import MethodLoadError, register_method
from haf_tui.pipeline.runner import HafRunner
from haf_tui.store import StoreError, open_store
from haf_tui.store import method_tables as store_method_tables
from haf_tui.store.annotations import delete_run
from haf_tui.store.method_tables import MethodMigration
from haf_tui.store.readers import schema_columns
from tests.support.toy_suite import ToySuite
from tests.test_scheduler import FlatSimilarity, ScriptedBackend, _store_with_run

SCORES = MethodMigration(
    1, "toy_scores", "CREATE TABLE toy_scores (run_id VARCHAR, instance_id VARCHAR, score DOUBLE)"
)


def toy(*migrations: MethodMigration) -> Method[RunConfig]:
    return Method(
        name="toy",
        title="Toy",
        description="an answer's length, in a table of its own",
        suite=ToySuite(),
        migrations=migrations,
    )


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


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


def test_rows_for_a_table_of_no_method_are_refused(tmp_path: Path) -> None:
    from haf_tui.store import InstanceResult

    with open_store(tmp_path / "h.duckdb") as store:
        result = InstanceResult("r", "i", None, 0, rows={"runs": [{"status": "x"}]})
        with pytest.raises(StoreError, match="not a table of a method"):
            store.save_instance_result(result)
        assert store.query("SELECT count(*) FROM instance_results")[1] == [(0,)]


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


def test_a_failing_migration_is_one_line_naming_the_method_and_version(tmp_path: Path) -> None:
    path = tmp_path / "h.duckdb"
    register_method(toy(SCORES, MethodMigration(2, "typo", "ALTER TABLE toy_scorez ADD x INT")))
    with pytest.raises(StoreError, match=r"^method 'toy', migration 2 \(typo\) failed: ") as e:
        open_store(path)
    assert "\n" not in str(e.value)
    with duckdb.connect(str(path), read_only=True) as con:  # the core schema rolled back too
        assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchall() == [(0,)]


def test_migrations_not_numbered_from_one_are_refused_when_the_method_loads() -> None:
    with pytest.raises(MethodLoadError, match="numbered 1, 2"):
        register_method(toy(MethodMigration(2, "toy_scores", SCORES.sql)))


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
        ("instance_results", "haf's own table instance_results"),
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


def test_a_migration_writing_a_table_by_another_case_is_still_checked(tmp_path: Path) -> None:
    path = tmp_path / "h.duckdb"
    open_store(path).close()
    register_method(
        toy(SCORES, MethodMigration(2, "rows", "INSERT INTO TOY_scores VALUES (1, 2, 3)"))
    )
    with open_store(path) as store:
        assert store.query("SELECT count(*) FROM toy_scores")[1] == [(1,)]


def _file_with_a_note(path: Path) -> dict[str, str]:
    """A store whose instance_notes holds one note; returns each table's exact SQL."""
    with open_store(path) as store:
        store.connection.execute(
            "INSERT INTO instance_notes (run_id, instance_id, note) VALUES ('r', 'i', 'kept')"
        )
        tables = store.query("SELECT table_name, sql FROM duckdb_tables()")[1]
    return {str(name): str(sql) for name, sql in tables}


@pytest.mark.parametrize(
    ("attack", "said"),
    [
        ("DROP TABLE instance_notes; {exact}", "not the table instance_notes"),
        (
            "ALTER TABLE instance_notes ALTER note SET DATA TYPE VARCHAR USING NULL",
            "not of the table instance_notes (rows before: 1, after: 1)",
        ),
        ("DROP TABLE skipped_rows; {skipped_rows}", "not the table skipped_rows"),  # (empty)
    ],
)
def test_a_migration_that_drops_a_haf_table_and_makes_it_again_is_refused_the_note_kept(
    tmp_path: Path, attack: str, said: str
) -> None:
    """The probe's attack (issue 42 §6): a plug-in migration drops instance_notes and makes it
    again with its exact SQL, so the schema reads the same afterwards (notes 1 -> 0)."""
    path = tmp_path / "h.duckdb"
    exact = _file_with_a_note(path)
    sql = attack.format(exact=exact["instance_notes"], skipped_rows=exact["skipped_rows"])
    register_method(toy(SCORES, MethodMigration(2, "wipe", sql)))
    with pytest.raises(StoreError) as refused:
        open_store(path)
    message = str(refused.value)
    assert "\n" not in message and said in message, message
    assert message.startswith("method 'toy', migration 2 (wipe) refused: ")
    register_method(toy())
    with open_store(path) as store:
        assert store.query("SELECT note FROM instance_notes")[1] == [("kept",)]


def test_a_migration_writing_only_its_own_rows_passes_the_data_check(tmp_path: Path) -> None:
    path = tmp_path / "h.duckdb"
    _file_with_a_note(path)
    copy = MethodMigration(
        2, "copy", "INSERT INTO toy_scores SELECT run_id, instance_id, 1.0 FROM instance_notes"
    )
    register_method(toy(SCORES, copy))
    with open_store(path) as store:
        assert store.query("SELECT count(*) FROM toy_scores")[1] == [(1,)]
        assert store.query("SELECT note FROM instance_notes")[1] == [("kept",)]
