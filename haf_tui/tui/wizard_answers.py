"""The new-run wizard's last answers, kept under the HAF home between sessions (as harlequin
keeps its buffers) and offered the next time the wizard opens.

The file is checked whole before a field is filled: a field id is a widget id (letters, digits,
``-`` and ``_``), a value is text, a switch or a list of picks, the dataset step's keys are its
own. One that fails is set aside (:mod:`haf_tui.store.side_files`) with a one-line notice, and
the wizard opens empty."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints

from haf_tui.defaults import haf_home
from haf_tui.store import write_text_atomically
from haf_tui.store.side_files import read_side_file

ANSWERS_FILE = "wizard-answers.json"
ANSWERS_LIMIT = 1 << 20
"""The largest answers file read (bytes)."""

FieldId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_-]*$", max_length=200)]
"""A widget id, as the settings form names its fields."""
Value = str | bool | list[str]


class DatasetAnswers(BaseModel):
    """The dataset step: its source, file path, column mapping, sample size and seed."""

    model_config = ConfigDict(extra="ignore")

    source: str = ""
    path: str = ""
    columns: dict[FieldId, str] = {}
    limit: str = ""
    seed: str = ""


class WizardAnswers(BaseModel):
    """What the wizard's steps held: picked model files, the dataset step, the settings."""

    models: list[str] = []
    dataset: DatasetAnswers = DatasetAnswers()
    settings: dict[FieldId, Value] = {}


def answers_path() -> Path:
    """``$HAF_HOME/wizard-answers.json``."""
    return haf_home() / ANSWERS_FILE


def load_answers() -> tuple[WizardAnswers | None, str | None]:
    """The last answers (None: none kept, or a file that cannot be read, set aside) and a
    one-line notice when it was set aside."""
    read = read_side_file(
        answers_path(),
        WizardAnswers.model_validate_json,
        what="the wizard's last answers",
        limit=ANSWERS_LIMIT,
    )
    return read.value, read.notice


def save_answers(answers: WizardAnswers) -> str | None:
    """Keep ``answers`` for the next session (a temporary file renamed into place); a home
    that cannot be written: not kept, and a one-line notice says so."""
    path = answers_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(path, answers.model_dump_json(indent=2))
    except OSError as exc:
        return f"the wizard's answers cannot be kept in {path}: {exc.strerror or exc}"
    return None
