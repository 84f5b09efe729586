"""The new-run wizard's last answers, kept under the HAF home between sessions (as harlequin
keeps its buffers) and offered the next time the wizard opens."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from haf_tui.defaults import haf_home

ANSWERS_FILE = "wizard-answers.json"


class WizardAnswers(BaseModel):
    """What the wizard's steps held: picked model files, the dataset step, the settings."""

    models: list[str] = []
    dataset: dict[str, Any] = {}
    settings: dict[str, Any] = {}


def answers_path() -> Path:
    """``$HAF_HOME/wizard-answers.json``."""
    return haf_home() / ANSWERS_FILE


def load_answers() -> WizardAnswers | None:
    """The last answers, or None (none kept, or a file that cannot be read)."""
    path = answers_path()
    try:
        return WizardAnswers.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError):
        return None


def save_answers(answers: WizardAnswers) -> None:
    """Keep ``answers`` for the next session (a home that cannot be written: not kept)."""
    path = answers_path()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(answers.model_dump_json(indent=2), encoding="utf-8")
