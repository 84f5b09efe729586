"""How the workbench stops: quitting (asking first when it would lose edits or a run started
here), the terminal closing or SIGHUP/SIGTERM (at once), and a screen being built ahead finished
first (:class:`~haf_tui.tui.screens_ahead.ScreensAhead`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import termios
from typing import TYPE_CHECKING, Any

from haf_tui.store.pending_annotations import pending, pending_path
from haf_tui.tui.app_runs import RunningApp
from haf_tui.tui.screens.confirm import ConfirmScreen

if TYPE_CHECKING:
    from rich.console import RenderableType

    from haf_tui.tui.screens_ahead import ScreensAhead

HANG_UP_SIGNALS = (signal.SIGHUP, signal.SIGTERM)
"""Signals that end the app at once (a closed terminal; a polite kill)."""


TERMINAL_CHECK_SECONDS = 1.0


def terminal_alive(stream: Any) -> bool | None:
    """Whether the terminal behind ``stream`` is still there (None: it is not a terminal)."""
    try:
        fd = stream.fileno()
        if not os.isatty(fd):
            return None
        termios.tcgetattr(fd)
    except (termios.error, OSError, ValueError, AttributeError):
        return False
    return True


class StoppingApp(RunningApp):
    """The app's ways to stop: ``q`` (asking first when edits or a run would be lost), a
    closed terminal and SIGHUP/SIGTERM, and waiting for a screen being built ahead."""

    ahead: ScreensAhead
    """The metrics, SQL and wizard screens, built before their keys (set by the app)."""

    def stop_on_hang_up(self) -> None:
        """A closed terminal (SIGHUP, or its attributes unreadable) or SIGTERM ends the app."""
        loop = asyncio.get_running_loop()
        for signum in HANG_UP_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, self.hang_up)
        if not self.is_headless and terminal_alive(sys.__stdin__) is not None:
            self.set_interval(TERMINAL_CHECK_SECONDS, self.check_terminal)

    def forget_hang_up(self) -> None:
        """The signal handlers of :meth:`stop_on_hang_up` taken back (the app has stopped)."""
        with contextlib.suppress(RuntimeError):
            loop = asyncio.get_running_loop()
            for signum in HANG_UP_SIGNALS:
                loop.remove_signal_handler(signum)

    def check_terminal(self) -> None:
        """A terminal can close without a SIGHUP reaching the app (it is not the process's
        controlling terminal): then its attributes can no longer be read, and the app ends."""
        if not terminal_alive(sys.__stdin__):  # (a hung-up terminal is no tty any more)
            self.hang_up()

    def hang_up(self) -> None:
        """The terminal is gone (SIGHUP) or the app is asked to stop (SIGTERM): cancel a run it
        runs (it stays resumable) and exit at once, asking nothing."""
        if self.session is not None and self.session.active:
            self.session.control.cancel()
        self.exit(return_code=129)

    def exit(
        self, result: Any = None, return_code: int = 0, message: RenderableType | None = None
    ) -> None:
        """Textual's, once a screen being built ahead is mounted (:meth:`ScreensAhead.stop`)."""
        if not self.ahead.building():
            self.ahead.stop_building()
            super().exit(result, return_code, message)
            return

        async def exit_once_built() -> None:
            await self.ahead.stop()
            super(StoppingApp, self).exit(result, return_code, message)

        self.call_later(exit_once_built)

    async def _shutdown(self) -> None:
        """Textual's, once a screen being built ahead is mounted (a test's app stops here,
        without :meth:`exit`)."""
        await self.ahead.stop()
        await super()._shutdown()

    def _exit_keeping_pending(self) -> None:
        """Exit; annotations still pending are kept, and a line after the app says so."""
        kept = pending(self.reader.path)
        if not kept:
            self.exit()
            return
        self.exit(
            message=f"{len(kept)} annotation{'s' if len(kept) > 1 else ''} pending (the "
            f"database was in use): kept in {pending_path()}, stored the next time the "
            "workbench opens it"
        )

    async def action_quit(self) -> None:
        """Quit; with text typed and not saved in a dialog, or while a run started here is
        going, ask first (quitting cancels the run and leaves it resumable)."""
        lost = [
            what
            for screen in self.screen_stack
            if callable(unsaved := getattr(screen, "unsaved_edits", None)) and (what := unsaved())
        ]
        if lost:
            if isinstance(self.screen, ConfirmScreen) and self.screen.quit_question:
                return  # (already asking)
            self.push_screen(
                ConfirmScreen(
                    "Quit and lose your edits?",
                    f"Quitting loses {lost[-1]}: it is not saved.",
                    yes="quit",
                    no="go back",
                    quit_question=True,
                ),
                self._quit_with_edits_answered,
            )
            return
        await self._quit_now()

    async def _quit_with_edits_answered(self, quit_now: bool | None) -> None:
        if quit_now:
            await self._quit_now()

    async def _quit_now(self) -> None:
        """Quit (the edits' question answered); while a run is going, ask about it."""
        for screen in self.screen_stack:  # (a screen that keeps its edits keeps them now)
            keep = getattr(screen, "keep_on_quit", None)
            if callable(keep):
                keep()
        session = self.session
        if session is None or not session.active or self._session_worker is None:
            self._exit_keeping_pending()
            return
        if isinstance(self.screen, ConfirmScreen):
            return
        question = (
            "Quitting stops the run going now; it stays resumable: R on the runs list (or "
            "haf run --resume RUN_ID) resumes it later."
        )
        self.push_screen(
            ConfirmScreen("Quit while a run is going?", question, yes="quit", no="keep running"),
            self._quit_answered,
        )

    async def _quit_answered(self, quit_now: bool | None) -> None:
        """Cancel the run (it stays resumable), wait for its worker, then exit."""
        if not quit_now:
            return
        session, worker = self.session, self._session_worker
        if session is not None and session.active and worker is not None:
            session.control.cancel()
            self.notify("cancelling the run: it stays resumable", timeout=3)
            await worker.wait()
        self._exit_keeping_pending()
