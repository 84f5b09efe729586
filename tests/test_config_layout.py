"""Runs stored before methods were packages keep opening (issue 26): migration 8 moves each
suite's settings under ``config.settings`` by suite name, on a database laid out as the main
branch before it wrote one (schema 7, its ``RunConfig`` JSON verbatim), in the file and
through the read-only migrated copy; and a config of that layout given to ``RunConfig`` is
lifted the same way."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from haf_tui.config import RunConfig
from haf_tui.methods.haf.settings import haf_settings
from haf_tui.methods.judge.settings import judge_settings
from haf_tui.methods.rationales.settings import rationale_settings
from haf_tui.reports import run_named
from haf_tui.store import open_store
from haf_tui.store.migrations import MIGRATIONS

OLD_CONFIG = (
    '{"model":{"path":null,"chat_format":null,"n_ctx":4096,"n_gpu_layers":-1,"n_threads":null,'
    '"n_batch":512,"n_parallel":8,"extra_buffers":false,"servers":[]},"decoding":{"temperature"'
    ':0.6,"top_p":0.8,"top_k":50,"max_new_tokens":1024,"seed":17,"top_logprobs":5},"similarity"'
    ':{"model":"all-MiniLM-L6-v2","kind":"bi-encoder","device":"cpu"},"weights":{"sos_confidence"'
    ':0.8,"reliance_confidence":0.5},"dataset_id":"builtin-sample","limit":null,"prompting":'
    '"naive","stages":["justify","internal","external","individual"],"parse_rules":"reference",'
    '"rationales":{"variant":"normal","strategy":"top_ratio","k":3,"ratio":0.25,"removal":'
    '"delete","random_seeds":100,"gold":"hard","spans":"runs","max_new_tokens":64},"judge":'
    '{"prompt":"verbatim","mode":"constrained","calls":"compound","max_new_tokens":96},'
    '"suites":["haf","rationales"]}'
)
"""``RunConfig(suites=("haf", "rationales"), prompting="naive", rationales=RationaleSettings(k=3,
ratio=0.25)).model_dump_json()`` as the main branch wrote it at schema 7 (commit 4fdbe5f)."""


def _schema_7_file(path: Path) -> None:
    """A database as the main branch left it at schema 7, with one run of ``OLD_CONFIG``."""
    with duckdb.connect(str(path)) as con:
        con.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, description VARCHAR, "
            "applied_at TIMESTAMP DEFAULT current_timestamp)"
        )
        for version, description, sql in MIGRATIONS:
            if version > 7:
                break
            con.execute(sql)
            con.execute("INSERT INTO schema_migrations (version, description) VALUES (?, ?)",
                        [version, description])  # fmt: skip
        con.execute(
            "INSERT INTO runs (run_id, status, dataset_id, n_planned, config, model_file, "
            "similarity_model, similarity_kind) VALUES ('old', 'finished', 'builtin-sample', 3, "
            "?, 'SmolLM2.gguf', 'all-MiniLM-L6-v2', 'bi-encoder')",
            [OLD_CONFIG],
        )


def _check(config: RunConfig) -> None:
    assert config.suites == ("haf", "rationales")
    assert haf_settings(config).prompting == "naive"
    assert rationale_settings(config).k == 3 and rationale_settings(config).ratio == 0.25
    assert judge_settings(config).mode == "constrained"


def test_an_old_file_opens_read_only_through_a_migrated_copy(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    _schema_7_file(path)
    before = path.read_bytes()
    with open_store(path, read_only=True) as store:
        _check(RunConfig.model_validate_json(store.get_run("old").config_json))
        columns, rows = run_named(store, "rationale_summary", {"run_ids": ["old"]})
        assert "variant" in columns or rows == []  # the query reads the moved settings
    assert path.read_bytes() == before  # reading never writes


def test_an_old_file_is_migrated_in_place_when_written(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    _schema_7_file(path)
    with open_store(path) as store:
        stored = json.loads(store.get_run("old").config_json)
        _check(RunConfig.model_validate(stored))
        versions = store.connection.execute("SELECT max(version) FROM schema_migrations")
        assert versions.fetchone() == (MIGRATIONS[-1][0],)
    assert set(stored) >= {"settings", "suites"} and "rationales" not in stored
    assert stored["settings"]["haf"]["prompting"] == "naive"
    assert stored["settings"]["rationales"]["k"] == 3


def test_the_old_layout_given_to_run_config_is_lifted() -> None:
    _check(RunConfig.model_validate_json(OLD_CONFIG))
    lifted = RunConfig.model_validate_json(OLD_CONFIG)
    assert RunConfig.model_validate_json(lifted.model_dump_json()) == lifted


def test_the_old_keys_are_those_the_methods_declare(monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic import ValidationError

    from haf_tui import config
    from haf_tui.methods.registry import current

    monkeypatch.setattr(config, "LEGACY_SETTINGS", {})  # (a program that installed no method)
    with pytest.raises(ValidationError, match="rationales"):
        RunConfig.model_validate_json(OLD_CONFIG)
    _check(current().check_config(json.loads(OLD_CONFIG)))  # (the registry given lifts them)


def test_a_bad_setting_of_a_suite_is_refused() -> None:
    with pytest.raises(ValueError, match="k"):
        RunConfig(suites=("rationales",), settings={"rationales": {"k": 0}})
