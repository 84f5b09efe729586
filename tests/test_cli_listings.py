"""``haf runs`` and ``haf models`` readable at 80 columns (issue 25 §3): one line per run with
the columns that matter, long names elided with "…"; every model file named in full, the
embedded default listed first as the new-run wizard lists it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from haf_tui.config import RunConfig
from haf_tui.inference.model_catalog import discover_models
from haf_tui.store import open_store
from haf_tui.store.annotations import set_run_label, set_run_tags
from haf_tui.store.records import RunRecord
from tests.test_inference_units import write_tiny_gguf

ROOT = Path(__file__).resolve().parents[1]
LONG_MODEL = "SmolLM2-135M-Instruct-with-a-rather-long-fine-tune-name.Q4_K_M.gguf"
RUN_IDS = ("20260101-120000-ab12", "20260102-120000-cd34", "20260103-120000-ef56")


def _haf(args: list[str], tmp_path: Path, **env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if k != "HAF_MODELS_PATH"}
    environment |= {"PYTHONPATH": str(ROOT), "COLUMNS": "80", **env}
    done = subprocess.run(
        [sys.executable, "-m", "haf_tui.cli", *args],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def runs_db(tmp_path: Path) -> Path:
    db = tmp_path / "haf.duckdb"
    with open_store(db) as store:
        for number, run_id in enumerate(RUN_IDS):
            store.create_run(
                RunRecord(
                    run_id=run_id,
                    status="finished",
                    dataset_id="civil_comments-0123456789abcdef",
                    n_planned=1024,
                    config_json=RunConfig().model_dump_json(),
                    model_file=f"/models/v{number}-{LONG_MODEL}",
                    similarity_model="sentence-transformers/all-MiniLM-L6-v2",
                    similarity_kind="bi-encoder",
                )
            )
        set_run_label(store, RUN_IDS[0], "llama baseline")
        set_run_tags(store, RUN_IDS[0], "q4, 8b")
    return db


def test_haf_runs_is_one_line_per_run_at_80_columns(runs_db: Path, tmp_path: Path) -> None:
    out = _haf(["--db", str(runs_db), "runs"], tmp_path)
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines)
    for run_id in RUN_IDS:  # each run on one line, its id whole, its model's name elided
        (line,) = [line for line in lines if run_id in line]
        assert "finished" in line and "v" in line and "…" in line and "0/1024" in line
    assert "v0-SmolLM2" in out  # not wrapped into 5-character cells ("SmolL/M2-13/5M-In")
    assert f"{RUN_IDS[0]} l" in out  # the label after the id, as far as it fits
    assert "not shown at this width: " in " ".join(out.split())


def test_haf_runs_shows_every_column_when_wide(runs_db: Path, tmp_path: Path) -> None:
    out = _haf(["--db", str(runs_db), "runs"], tmp_path, COLUMNS="250")
    assert f"v0-{LONG_MODEL.removesuffix('.gguf')}" in out
    assert "llama baseline #q4 #8b" in out and "all-MiniLM-L6-v2" in out
    assert "not shown" not in out


def test_haf_models_names_each_file_whole_and_the_embedded_default(tmp_path: Path) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    write_tiny_gguf(folder / LONG_MODEL)
    (folder / "broken.gguf").write_bytes(b"not a gguf")
    out = _haf(["models"], tmp_path, HAF_HOME=str(tmp_path / "home"))
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines if not line.endswith(".gguf"))  # (a path whole)
    files = [line.split("│")[1].strip() for line in lines if line.startswith("│")]
    assert f"models/{LONG_MODEL}" in "".join(files)  # folded whole, after its hyphens
    assert any(cell.endswith("-") for cell in files)
    embedded = discover_models([], embedded=True)[0]
    assert embedded.embedded
    assert embedded.label == files[0] + " " + files[1]  # first, as the wizard lists it
    assert "models/broken.gguf: not a GGUF file" in " ".join(out.split())
    assert "--model takes a file's path" in " ".join(out.split())
