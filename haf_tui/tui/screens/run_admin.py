"""What a researcher does to runs on the runs list: ``L`` labels (renames) the run under the
cursor, ``T`` tags it (comma-separated tags), ``D`` deletes it, every row of it in every table,
after a confirmation; a run being written is not deleted (one line says why).

:class:`RunAdminScreen` is the runs list's base: it holds these actions and their workers, and
needs from the list only the run under the cursor, its status and a way to re-read the list."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on, work
from textual.message import Message

from haf_tui.store.annotations import delete_run, parse_tags, run_label_and_tags
from haf_tui.store.pending_annotations import Kind, annotation, pending
from haf_tui.tui.screens.base import HafScreen
from haf_tui.tui.screens.confirm import ConfirmScreen
from haf_tui.tui.screens.text_editor import Save, TextEditorScreen
from haf_tui.tui.store_reader import StoreReader
from haf_tui.tui.store_writes import write_or_keep, write_store
from haf_tui.vocabulary import HafError


@dataclass
class RunNamesRead(Message):
    """A run's label and tags, read for the ``L`` or ``T`` box (``field``: which)."""

    run_id: str
    field: str
    label: str | None
    tags: tuple[str, ...]


@dataclass
class RunChanged(Message):
    """A run was labelled, tagged or deleted: ``summary`` says what (an error: ``failed``)."""

    summary: str
    failed: bool = False


PENDING_NOTE = "pending: stored once the process writing the database lets go"


def names_saver(reader: StoreReader, run_id: str, field: str) -> Save:
    """What the label (``field`` "label") or tags box does with its text (in a thread): stored,
    or kept pending while another process writes the database."""

    def save(text: str) -> str:
        kind: Kind = "label" if field == "label" else "tags"
        item = annotation(reader.path, kind, run_id, text=text)
        kept = write_or_keep(reader, item, f"run {run_id}: {kind}")
        if field == "label":
            label = " ".join(text.split())
            done = f"run {run_id} labelled {label!r}" if label else f"run {run_id}: no label"
        else:
            tags = parse_tags(text)
            done = f"run {run_id} tagged {', '.join(tags)}" if tags else f"run {run_id}: no tags"
        return f"{done} ({PENDING_NOTE})" if kept else done

    return save


class RunAdminScreen(HafScreen[None]):
    """The runs list's actions to label, tag and delete a run (see the module; the runs list
    binds L, T and D to them)."""

    def selected_run(self) -> str | None:
        """The run under the cursor (the runs list's)."""
        return None

    def selected_status(self) -> str | None:
        """The status of the run under the cursor (the runs list's)."""
        return None

    def load_runs(self) -> object:
        """Re-read the runs (the runs list's: a worker there)."""
        return None

    def _chosen(self) -> str | None:
        run_id = self.selected_run()
        if run_id is None:
            self.notify("no run under the cursor", severity="warning")
        return run_id

    # -- label and tags ----------------------------------------------------------------------

    def action_label_run(self) -> None:
        """Give the run under the cursor a label (blank: none)."""
        run_id = self._chosen()
        if run_id is not None:
            self.read_names(run_id, "label")

    def action_tag_run(self) -> None:
        """Tag the run under the cursor (comma-separated; blank: none)."""
        run_id = self._chosen()
        if run_id is not None:
            self.read_names(run_id, "tags")

    @work(thread=True, exclusive=True, exit_on_error=False, group="run-admin")
    def read_names(self, run_id: str, field: str) -> None:
        """Read the run's label and tags (thread worker: posts a message, touches no widget)."""
        with self.reader.reading() as store:
            label, tags = run_label_and_tags(store, run_id)
        for item in pending(self.reader.path):  # (kept while another process writes)
            if item.run_id == run_id and item.kind == "label":
                label = " ".join(item.text.split()) or None
            elif item.run_id == run_id and item.kind == "tags":
                tags = parse_tags(item.text)
        self.post_message(RunNamesRead(run_id, field, label, tags))

    @on(RunNamesRead)
    def edit_names(self, message: RunNamesRead) -> None:
        """Open the label or tags box on what the run has now."""
        run_id = message.run_id
        if message.field == "label":
            title, text, hint = f"Label run {run_id}", message.label or "", "a name for the run"
        else:
            title, text, hint = f"Tag run {run_id}", ", ".join(message.tags), "comma separated"
        save = names_saver(self.reader, run_id, message.field)
        self.app.push_screen(TextEditorScreen(title, text, save, hint=hint), self._names_saved)

    def _names_saved(self, summary: str | None) -> None:
        if summary:
            self.notify(summary)
            self.load_runs()

    # -- delete ------------------------------------------------------------------------------

    def action_delete_run(self) -> None:
        """Delete the run under the cursor, every row of it, once confirmed; not while it runs."""
        run_id = self._chosen()
        if run_id is None:
            return
        if self.selected_status() == "running":
            self.notify(
                f"run {run_id} is being written: cancel it first (C on its monitor)",
                severity="error",
            )
            return
        question = (
            f"Every row of run {run_id} (generations, tokens, reasons, metrics, notes) is "
            "deleted from the database. This cannot be undone."
        )
        self.app.push_screen(
            ConfirmScreen(f"Delete run {run_id}?", question, yes="delete", no="keep it"),
            lambda yes: self._delete_answered(run_id, yes),
        )

    def _delete_answered(self, run_id: str, yes: bool | None) -> None:
        if yes:
            self.delete_now(run_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="run-admin")
    def delete_now(self, run_id: str) -> None:
        """Delete the run (thread worker: posts a message, touches no widget)."""
        try:
            deleted = write_store(
                self.reader, lambda store: delete_run(store, run_id), f"run {run_id}: deleting"
            )
        except HafError as exc:
            self.post_message(RunChanged(f"run {run_id} not deleted: {exc}", failed=True))
            return
        rows = sum(deleted.values())
        self.post_message(RunChanged(f"run {run_id} deleted ({rows} rows)"))

    @on(RunChanged)
    def run_changed(self, message: RunChanged) -> None:
        """Say what happened; re-read the list."""
        self.notify(message.summary, severity="error" if message.failed else "information")
        if not message.failed:
            self.load_runs()
