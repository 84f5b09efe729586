"""``haf query``'s output, printed as DuckDB reads the rows, and Ctrl-C stopping the statement.

CSV, JSON and markdown are written batch by batch (``haf query "SELECT * FROM range(1e9)"
--format csv | head`` ends at once, in bounded memory); a table shows the first
:data:`TABLE_ROWS` rows and says how many more there are (counted up to :data:`COUNT_LIMIT`)
and how to get them. Python runs a Ctrl-C handler only when the main thread is back from
DuckDB, so while a statement runs the signal is also read from a wakeup file descriptor by a
thread that calls DuckDB's ``interrupt()`` (:func:`ctrl_c_interrupts`).
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import textwrap
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import TYPE_CHECKING, Any

from rich.console import Console

from haf_tui import reports

if TYPE_CHECKING:
    from haf_tui.store import StatementInterrupt

TABLE_ROWS = 50
"""Rows a table shows; the other formats print every row."""
COUNT_LIMIT = 100_000
"""How many rows past the table are counted to say how many more there are."""

Batches = Iterator[list[tuple[Any, ...]]]
PrintTable = Callable[[list[str], list[tuple[Any, ...]]], None]


def print_rows(
    console: Console, columns: list[str], batches: Batches, fmt: str, print_table: PrintTable
) -> None:
    """Print a result in ``fmt`` as its batches arrive (a table: its first rows, then how
    many more there are and how to print them all)."""
    if fmt == "table":
        _print_first_rows(console, columns, batches, print_table)
    elif fmt == "json":
        _print_json(console, columns, batches)
    else:
        write = reports.to_csv if fmt == "csv" else reports.to_markdown
        header = True
        for rows in batches:
            console.out(write(columns, rows, header=header), end="")
            header = False
        if header:  # (no rows: the header alone)
            console.out(write(columns, [], header=True), end="")


def _print_first_rows(
    console: Console, columns: list[str], batches: Batches, print_table: PrintTable
) -> None:
    shown: list[tuple[Any, ...]] = []
    more = 0
    for rows in batches:
        room = TABLE_ROWS - len(shown)
        shown += rows[:room]
        more += max(len(rows) - room, 0)
        if more > COUNT_LIMIT:
            break
    print_table(columns, shown)
    if more:
        total = len(shown) + more
        of = f"more than {COUNT_LIMIT:,}" if more > COUNT_LIMIT else f"{total:,}"
        console.print(
            f"{len(shown)} of {of} rows shown: --format csv, json or markdown prints all",
            style="dim",
            highlight=False,
        )


def _print_json(console: Console, columns: list[str], batches: Batches) -> None:
    """The same text as :func:`reports.to_json` (a list of objects, indent 2), a batch at a
    time."""
    first = True
    for rows in batches:
        records = [
            json.dumps(record, ensure_ascii=False, indent=2, allow_nan=False)
            for record in reports.to_records(columns, rows)
        ]
        if records:
            text = textwrap.indent(",\n".join(records), "  ")
            console.out(("[\n" if first else ",\n") + text, end="")
            first = False
    console.out("[]" if first else "\n]")


@contextlib.contextmanager
def ctrl_c_interrupts(interrupt: StatementInterrupt) -> Iterator[None]:
    """While the block runs, Ctrl-C (SIGINT) stops the statement ``interrupt`` is attached to,
    even while the main thread waits inside DuckDB, instead of raising KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    receiver, sender = socket.socketpair()
    sender.setblocking(False)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        interrupt.interrupt()

    def watch() -> None:
        with contextlib.suppress(OSError):
            while data := receiver.recv(64):
                if signal.SIGINT in data:
                    interrupt.interrupt()

    previous_handler = signal.signal(signal.SIGINT, on_signal)
    previous_fd = signal.set_wakeup_fd(sender.fileno(), warn_on_full_buffer=False)
    watcher = threading.Thread(target=watch, name="haf-ctrl-c", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous_fd)
        signal.signal(signal.SIGINT, previous_handler)
        sender.close()  # (the watcher reads the end of the stream and stops)
        watcher.join(timeout=1)
        receiver.close()
