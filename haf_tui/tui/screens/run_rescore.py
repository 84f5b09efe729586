"""``r`` on a finished run of the runs list: refresh the list, or re-score the run with another
similarity model g (``haf rescore``: a derived run, listed under its parent with its g).

The model is named in a one-line box (a Hugging Face id in the local cache or a folder;
``cross-encoder:NAME`` for a cross-encoder) and loaded there, so a model that cannot be loaded
is one line in the box, the text kept; the re-score then runs in a worker with the database
open for writing. Where it stands stays on the list's work line (``#runs-work``) after the box
closes: waiting for the database, loading g, instances re-scored, done, or failed with the
whole reason.

While another process writes the database (issue 43 §2) the box loads nothing: the lock is
checked before g loads. The re-score waits, queued, its line saying "waiting for haf.duckdb —
held by PID … (…)", and starts by itself when the file frees (g loaded then); ``C`` stops the
wait."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from textual import on, work
from textual.message import Message

from haf_tui.pipeline.rescore import load_rescore_similarity, rescore_run
from haf_tui.similarity import SimilarityKind, SimilarityModel
from haf_tui.store.errors import StoppedWaitingError
from haf_tui.store.holder import other_holder
from haf_tui.store.readers import RunOverview
from haf_tui.store.waiting import wait_for_writer
from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.tui.screens.run_admin import RunAdminScreen, RunChanged
from haf_tui.tui.screens.text_editor import TextEditorScreen
from haf_tui.vocabulary import HafError, first_line

CROSS = "cross-encoder:"
"""The prefix that names a cross-encoder in the box."""


@dataclass
class RescoreState(Message):
    """Where the re-score asked for on the list stands, in full (``ended``: done, stopped or
    failed; ``failed``: it failed)."""

    text: str
    ended: bool = False
    failed: bool = False


def similarity_named(text: str) -> tuple[str, SimilarityKind]:
    """The model and its kind from the box's text (``cross-encoder:NAME`` or ``NAME``)."""
    name = text.strip()
    if name.startswith(CROSS):
        return name.removeprefix(CROSS).strip(), "cross-encoder"
    return name, "bi-encoder"


def nested(overviews: list[RunOverview], parents: dict[str, str]) -> list[tuple[RunOverview, str]]:
    """The runs in their order, each derived run right under its parent (a parent not listed:
    it stays where it is), with the indent its title gets."""
    children: dict[str, list[RunOverview]] = {}
    listed = {o.run_id for o in overviews}
    for overview in overviews:
        parent = parents.get(overview.run_id)
        if parent is not None and parent in listed:
            children.setdefault(parent, []).append(overview)
    out: list[tuple[RunOverview, str]] = []
    for overview in overviews:
        if parents.get(overview.run_id) in listed:
            continue
        out.append((overview, ""))
        out += [(child, "└ ") for child in children.get(overview.run_id, [])]
    return out


class RunRescoreScreen(RunAdminScreen):
    """The runs list's ``r``: see the module."""

    _rescore_stop: threading.Event | None = None
    """Set to stop the re-score waiting for the database (None: no re-score going)."""

    def action_refresh(self) -> None:
        """On a finished run: refresh, or re-score it (asked); else refresh."""
        run_id = self.selected_run()
        if run_id is None or self.selected_status() != "finished":
            self.refresh_list()
            return
        if self._rescore_stop is not None:
            self.notify("a re-score is going (see above the list): wait for it", severity="warning")
            self.refresh_list()
            return
        question = (
            f"Re-score run {run_id} with another similarity model g (a new run beside it, "
            "from its stored answers and tokens: nothing is generated), or refresh the list?"
        )
        self.app.push_screen(
            ConfirmScreen(f"Run {run_id}", question, yes="re-score", no="refresh"),
            lambda yes: self._rescore_answered(run_id, yes),
        )

    def refresh_list(self) -> None:
        """Re-read the database (the runs list's)."""

    def _rescore_answered(self, run_id: str, yes: bool | None) -> None:
        if not yes:
            self.refresh_list()
            return
        loaded: list[SimilarityModel | None] = []

        def load(text: str) -> str:
            name, kind = similarity_named(text)
            if not name:
                raise HafError("name a similarity model (a Hugging Face id or a folder)")
            if other_holder(self.reader.path) is not None:  # (held: g loads once it frees)
                loaded.append(None)
            else:
                loaded.append(load_rescore_similarity(name, kind))
            return text

        def loaded_then(text: str | None) -> None:
            if text and loaded:
                name, kind = similarity_named(text)
                self.start_rescore(run_id, name, kind, loaded[-1])

        box = TextEditorScreen(
            f"Re-score run {run_id} with the similarity model",
            "",
            load,
            hint="a Hugging Face id in the local cache, a folder, or cross-encoder:NAME",
        )
        self.app.push_screen(box, loaded_then)

    def start_rescore(
        self, run_id: str, name: str, kind: SimilarityKind, similarity: SimilarityModel | None
    ) -> None:
        """Re-score ``run_id`` with g ``name`` (loaded already, or None: loaded once the
        database is free), its state on the work line."""
        self._rescore_stop = threading.Event()
        self.show_work(f"re-score of run {run_id} with {name}: starting …")
        self.rescore_now(run_id, name, kind, similarity, self._rescore_stop)

    def action_cancel(self) -> None:
        """Stop the re-score waiting for the database (one going on is left to finish)."""
        if self._rescore_stop is not None:
            self._rescore_stop.set()

    @work(thread=True, exclusive=True, exit_on_error=False, group="rescore")
    def rescore_now(
        self,
        run_id: str,
        name: str,
        kind: SimilarityKind,
        similarity: SimilarityModel | None,
        stop: threading.Event,
    ) -> None:
        """Wait for the database, load g (if not yet), re-score (thread worker: posts
        :class:`RescoreState` messages, touches no widget)."""
        what = f"re-score of run {run_id} with {name}"

        def say(text: str, *, ended: bool = False, failed: bool = False) -> None:
            self.post_message(RescoreState(f"{what}: {text}", ended=ended, failed=failed))

        try:
            store = wait_for_writer(
                lambda: self.reader.writable(f"run {run_id}: re-scoring", wait_seconds=0),
                self.reader.path,
                on_waiting=lambda line: say(
                    f"{line} It starts by itself when the file frees · C stops waiting"
                ),
                stop=stop,
                poll_seconds=self.haf_app.wait_poll_seconds,
            )
        except StoppedWaitingError:
            say("stopped waiting for the database; nothing was re-scored", ended=True)
            return
        except Exception as exc:  # (one line, in full, on the work line)
            say(f"failed: {first_line(exc)}", ended=True, failed=True)
            return
        try:
            if similarity is None:
                say(f"loading {name} …")
                similarity = load_rescore_similarity(name, kind)
            summary = rescore_run(
                store,
                run_id,
                similarity,
                kind,
                on_progress=lambda done, total: say(f"{done}/{total} instances re-scored"),
            )
        except Exception as exc:
            say(f"failed: {first_line(exc)}", ended=True, failed=True)
            return
        finally:
            self.reader.release_writer()
        say(
            f"done as run {summary.run_id} ({summary.instances_done}/{summary.instances_total} "
            f"instances, {summary.seconds:.1f} s)",
            ended=True,
        )
        self.post_message(RunChanged(f"run {run_id} re-scored with {name}"))

    @on(RescoreState)
    def rescore_state(self, message: RescoreState) -> None:
        """The work line says where the re-score stands; an ended one lets the next begin."""
        if message.ended:
            self._rescore_stop = None
        self.show_work(message.text, failed=message.failed)

    def show_work(self, text: str, *, failed: bool = False) -> None:
        """The list's work line (the runs list's: it wraps, so the whole line shows)."""
