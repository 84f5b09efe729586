"""``python -m tests.support.scripted_cli ARGS``: the ``haf ARGS`` process with the scripted
demo model (``tests/test_demo_scripted.py``) in place of llama.cpp and a flat similarity model,
for tests that need ``haf`` as its own process (its output a pipe, not a terminal). Plain
progress lines come every ``HAF_TEST_PROGRESS_EVERY`` instances (default: the documented
number); with ``HAF_TEST_HOLD=MARKER:N`` the run holds once its N-th generation is stored
(``tests/support/held_run.py``: the run's id written to MARKER) until the process is killed."""

from __future__ import annotations

import os
import sys
from typing import Any

import haf_tui.cli.plain_progress as plain_progress
import haf_tui.pipeline.runs as runs
from haf_tui.cli import main
from haf_tui.pipeline.models import LoadedModels
from tests.test_demo_scripted import ScriptedDemoModel
from tests.test_scheduler import FlatSimilarity


def scripted_models(config: Any, similarity: Any = None) -> LoadedModels:
    """The scripted model and a flat g, whatever the config names."""
    return LoadedModels(ScriptedDemoModel(), FlatSimilarity())


if __name__ == "__main__":
    setattr(runs, "load_models", scripted_models)  # noqa: B010 (a test double in place)
    hold = os.environ.get("HAF_TEST_HOLD")
    if hold:
        from pathlib import Path

        from tests.support.held_run import Hold, install

        marker, after = hold.rsplit(":", 1)
        install(Hold(Path(marker), "save", int(after), "kill"))
    every = os.environ.get("HAF_TEST_PROGRESS_EVERY")
    if every:
        plain_progress.EVERY_INSTANCES = int(every)
    sys.exit(main(sys.argv[1:]))
