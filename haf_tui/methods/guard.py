"""An installed method's suite (and its ``units`` and ``node`` functions), guarded: whatever
its code raises (in its plan, its record, its settle, reading an attribute) becomes one line
naming the method (:class:`MethodFailedError`, a :class:`~haf_tui.vocabulary.HafError`), so
every face reports it as it reports haf's own errors (``error: method 'toy' failed in its
plan: RuntimeError: …``) and the run stops as after any error: failed, resumable, with what
was stored kept. The built-in methods are not wrapped (a bug of haf's own keeps its traceback
for the tests)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from haf_tui.vocabulary import HafError, first_line

T = TypeVar("T")


class MethodFailedError(HafError, RuntimeError):
    """An installed method's own code raised."""


def _failed(method: str, where: str, error: Exception) -> MethodFailedError:
    return MethodFailedError(
        f"method {method!r} failed in its {where}: {type(error).__name__}: {first_line(error)}"
    )


def guarded(method: str, where: str, function: Callable[..., T]) -> Callable[..., T]:
    """``function`` (a third-party method's) with its errors made one line naming it."""

    def call(*args: Any, **kwargs: Any) -> T:
        try:
            return function(*args, **kwargs)
        except HafError:
            raise
        except Exception as error:  # a third-party method's own bug: one line naming it
            raise _failed(method, where, error) from error

    return call


class _Guarded:
    """Attribute reads and calls of ``target`` with a third-party method's errors made one
    line; what :data:`_WRAP` names is guarded in turn (a suite's plans)."""

    _WRAP: frozenset[str] = frozenset()

    def __init__(self, target: object, method: str) -> None:
        self._target = target
        self._method = method

    def __getattr__(self, name: str) -> Any:
        try:
            found = getattr(self._target, name)
        except AttributeError:
            raise
        except HafError:
            raise
        except Exception as error:  # a third-party method's own bug: one line naming it
            raise _failed(self._method, name, error) from error
        if not callable(found):
            return found
        return self._call(name, found)

    def _call(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        call = guarded(self._method, name, function)
        if name not in self._WRAP:
            return call
        return lambda *args, **kwargs: GuardedPlan(call(*args, **kwargs), self._method)

    def __repr__(self) -> str:
        return f"guarded({self._target!r})"


class GuardedPlan(_Guarded):
    """A third-party suite's plan of one instance, guarded."""


class GuardedSuite(_Guarded):
    """A third-party method's suite, guarded (its plans too)."""

    _WRAP = frozenset({"plan"})

    @property
    def unguarded(self) -> object:
        """The suite itself."""
        return self._target


__all__ = ["GuardedPlan", "GuardedSuite", "MethodFailedError", "guarded"]
