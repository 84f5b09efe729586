"""``r`` on a finished run of the runs list: refresh the list, or re-score the run with another
similarity model g (``haf rescore``: a derived run, listed under its parent with its g).

The model is named in a one-line box (a Hugging Face id in the local cache or a folder;
``cross-encoder:NAME`` for a cross-encoder) and loaded there, so a model that cannot be loaded
is one line in the box, the text kept; the re-score then runs in a worker with the database
open for writing, its progress on the list's hint line."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on, work
from textual.message import Message
from textual.widgets import Static

from haf_tui.pipeline.rescore import load_rescore_similarity, rescore_run
from haf_tui.similarity import SimilarityKind, SimilarityModel
from haf_tui.store.readers import RunOverview
from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.tui.screens.run_admin import RunAdminScreen, RunChanged
from haf_tui.tui.screens.text_editor import TextEditorScreen
from haf_tui.tui.store_writes import write_store
from haf_tui.vocabulary import HafError

CROSS = "cross-encoder:"
"""The prefix that names a cross-encoder in the box."""


@dataclass
class RescoreProgress(Message):
    """Instances re-scored so far."""

    run_id: str
    done: int
    total: int


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

    def action_refresh(self) -> None:
        """On a finished run: refresh, or re-score it (asked); else refresh."""
        run_id = self.selected_run()
        if run_id is None or self.selected_status() != "finished":
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
        loaded: list[tuple[SimilarityModel, SimilarityKind]] = []

        def load(text: str) -> str:
            name, kind = similarity_named(text)
            if not name:
                raise HafError("name a similarity model (a Hugging Face id or a folder)")
            loaded.append((load_rescore_similarity(name, kind), kind))
            return name

        def loaded_then(name: str | None) -> None:
            if name and loaded:
                similarity, kind = loaded[-1]
                self.notify(f"re-scoring run {run_id} with {name} …")
                self.rescore_now(run_id, similarity, kind)

        box = TextEditorScreen(
            f"Re-score run {run_id} with the similarity model",
            "",
            load,
            hint="a Hugging Face id in the local cache, a folder, or cross-encoder:NAME",
        )
        self.app.push_screen(box, loaded_then)

    @work(thread=True, exclusive=True, exit_on_error=False, group="rescore")
    def rescore_now(self, run_id: str, similarity: SimilarityModel, kind: SimilarityKind) -> None:
        """Re-score (thread worker: posts messages, touches no widget)."""

        def progress(done: int, total: int) -> None:
            self.post_message(RescoreProgress(run_id, done, total))

        try:
            summary = write_store(
                self.reader,
                lambda store: rescore_run(store, run_id, similarity, kind, on_progress=progress),
                f"run {run_id}: re-scoring",
            )
        except HafError as exc:
            self.post_message(RunChanged(f"run {run_id} not re-scored: {exc}", failed=True))
            return
        self.post_message(
            RunChanged(
                f"run {run_id} re-scored with {similarity.name} as run {summary.run_id} "
                f"({summary.instances_done}/{summary.instances_total}, {summary.seconds:.1f} s)"
            )
        )

    @on(RescoreProgress)
    def rescore_progress(self, message: RescoreProgress) -> None:
        """The hint line says how far the re-score is."""
        self.query_one("#runs-hint", Static).update(
            f"re-scoring run {message.run_id}: {message.done}/{message.total} instances"
        )
