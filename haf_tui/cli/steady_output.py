"""A console that keeps printing while llama.cpp loads a model in another thread.

llama-cpp-python silences a model's load (``verbose=False``: ``suppress_stdout_stderr``) by
pointing file descriptor 1 and ``sys.stdout`` at ``/dev/null``, for the whole process. A
campaign loads a model in one lane while another lane prints its cell's line: that line went to
``/dev/null`` (``haf campaign run`` lost "a × sample: run … (resuming)" under load). While
:func:`steady_output` is entered, the console writes to its own copy of the descriptor, which
the load's redirection does not touch."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator

from rich.console import Console


@contextlib.contextmanager
def steady_output(console: Console) -> Iterator[None]:
    """``console`` writes to a copy of standard output's descriptor while entered (as it was
    when there is no descriptor to copy: a test's captured output)."""
    try:
        sys.stdout.flush()
        copied = os.dup(sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        yield
        return
    steady = os.fdopen(copied, "w", encoding="utf-8", errors="replace", buffering=1)
    console.file = steady
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            steady.flush()
        console.file = sys.stdout
        with contextlib.suppress(OSError):
            steady.close()
