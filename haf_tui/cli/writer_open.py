"""The database opened for writing by the commands that start long work (``haf run``, ``haf
rescore``, ``haf campaign run``), before any model loads: another process holding the file
is one line naming it (PID, command, what it does), or, with ``--wait``, that line once as
``waiting for haf.duckdb — held by …`` and the command starts by itself when the file frees;
Ctrl-C while waiting stops it, nothing started (:mod:`haf_tui.store.waiting`).

Light at import (the parser's ``--wait``): the store is imported when a command opens it."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING

from haf_tui.vocabulary import shown_text

if TYPE_CHECKING:
    from haf_tui.store import Store

WAIT_HELP = (
    "while another process writes the database, wait for it (one line says who holds it) "
    "and start when it is free; Ctrl-C stops waiting (default: one line naming it, exit 2)"
)


def add_wait_option(parser: argparse.ArgumentParser) -> None:
    """``--wait``: wait for a database another process writes instead of failing."""
    parser.add_argument("--wait", action="store_true", help=WAIT_HELP)


def open_writer(
    db: str | Path | None, *, wait: bool, command: str, purpose: str = "starting"
) -> Store:
    """The database open for writing (its note saying ``purpose``); while another process
    holds it, StoreLockedError (the one line, saying ``haf COMMAND --wait`` waits), or with
    ``wait`` the waiting line on stderr and the open once the file frees (StoppedWaitingError on
    Ctrl-C)."""
    from rich.console import Console

    from haf_tui.store import StoreLockedError, default_db_path, open_store
    from haf_tui.store.errors import StoppedWaitingError
    from haf_tui.store.holder import other_holder
    from haf_tui.store.waiting import held_error, wait_for_writer

    path = Path(db).expanduser() if db else default_db_path()
    if not (wait and other_holder(path) is not None):  # (a writer that says so: wait at once)
        try:
            return open_store(path, purpose=purpose)  # (readers let go within a few seconds)
        except StoreLockedError as exc:
            if not wait:
                raise held_error(path, exc, f"haf {command} --wait waits for it") from None
    said: list[str] = []
    err = Console(stderr=True, soft_wrap=True, highlight=False)

    def say(line: str) -> None:
        """The waiting line, again only for another holder (not when it says it moved on)."""
        pid = re.search(r"held by (PID \d+|another process)", line)
        who = pid.group(1) if pid else line
        if who not in said:
            said.append(who)
            err.print(shown_text(line), markup=False)

    try:
        return wait_for_writer(
            lambda: open_store(path, purpose=purpose, wait_seconds=0), path, on_waiting=say
        )
    except KeyboardInterrupt:
        raise StoppedWaitingError(f"stopped waiting for {path.name}: nothing was started") from None
