"""What kept a closed screen, or its widgets' drawn lines, alive (the metrics screen left ~15k
live objects behind at each close), let go:

- Textual's thread workers set ``active_worker`` in the pool thread's own context, never reset:
  each pool thread kept the last worker it ran, and through it that worker's screen. The
  event loop's thread pool here runs each job in a copy of its caller's context (as
  ``asyncio.to_thread`` does).
- ``StylesCache.get_inner_outer`` is an ``lru_cache`` on a method: it kept the closed screen's
  widgets' styles caches, their drawn lines in them, for 1,024 calls. Emptied at each close
  (it refills from two colours in a few calls).
- ``watch(app, ...)`` (a Header on the app's title, a TextArea such as the SQL editor on the
  theme) is dropped only when that attribute next changes. Dropped at each close.

Private APIs used, each because no public one reaches what holds the screen (Textual 8.2):
``textual._styles_cache.StylesCache`` (the class whose cache is emptied), the app's
``"__watchers"`` attribute that ``textual.reactive._watch`` fills and a node's ``_closing``
(the very test Textual applies when the watched attribute changes), and asyncio's
``loop._default_executor`` (read only: a plain pool made before is shut down, not left with its
threads; ``set_default_executor`` does not)."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

from textual._styles_cache import StylesCache
from textual.app import App

Params = ParamSpec("Params")
Result = TypeVar("Result")


class JobContextExecutor(ThreadPoolExecutor):
    """A thread pool whose jobs each run in a fresh copy of the submitter's context."""

    def submit(
        self, fn: Callable[Params, Result], /, *args: Params.args, **kwargs: Params.kwargs
    ) -> Future[Result]:
        context = contextvars.copy_context()

        def in_context() -> Result:
            return context.run(fn, *args, **kwargs)

        return super().submit(in_context)


def job_context_executor(loop: asyncio.AbstractEventLoop) -> None:
    """Make ``loop``'s default thread pool a :class:`JobContextExecutor` (once; a plain one
    there before is shut down, its queued jobs still run; threads named as asyncio's own)."""
    before = getattr(loop, "_default_executor", None)
    if isinstance(before, JobContextExecutor):
        return
    loop.set_default_executor(JobContextExecutor(thread_name_prefix="asyncio"))
    if isinstance(before, ThreadPoolExecutor):
        before.shutdown(wait=False)


def forget_closed(app: App[Any]) -> None:
    """A screen closed: empty Textual's styles lookup cache and drop the app's watchers that
    belong to closed widgets (Textual's own rule when the attribute changes)."""
    StylesCache.get_inner_outer.cache_clear()
    watched: dict[str, list[tuple[Any, Any]]] = getattr(app, "__watchers", {})
    for watchers in watched.values():
        watchers[:] = [(node, callback) for node, callback in watchers if not node._closing]
