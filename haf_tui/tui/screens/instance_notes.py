"""What a researcher keeps while exploring a run: ``b`` bookmarks the instance under the
cursor, ``w`` writes a note on it (a dialog), ``y`` copies the instance's text, the reason or
the note under the tree's cursor to the clipboard. Notes and bookmarks are stored in the
database (``instance_notes``; the ``notes`` query lists them), marked ★ in the instance list
and shown as a "note:" line in the stance tree.

:class:`InstanceNotesScreen` is the explorer's base: it holds these actions and their workers, and
needs from the explorer only the run, the instance under the cursor, the rows by id and the
instance cache."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual import on, work
from textual.message import Message

from haf_tui.store.annotations import InstanceNote
from haf_tui.store.pending_annotations import PendingAnnotation, annotation, pending
from haf_tui.tui.instance_reader import InstanceCache
from haf_tui.tui.method_parts import NodeRef
from haf_tui.tui.screens.base import HafScreen
from haf_tui.tui.screens.text_editor import TextEditorScreen
from haf_tui.tui.store_writes import write_or_keep
from haf_tui.tui.widgets.stance_tree import StanceTree
from haf_tui.vocabulary import HafError, first_line

NOT_SAVED = "notes cannot be saved now"
PENDING = "kept: pending, stored once the process writing the database lets go"


def add_notes(rows: list[dict[str, Any]], notes: dict[str, InstanceNote]) -> list[dict[str, Any]]:
    """Put each instance's bookmark and note in its row (``bookmarked``, ``note``, and
    ``pending`` while kept to be stored later)."""
    for row in rows:
        kept = notes.get(str(row["instance_id"]))
        row["bookmarked"] = bool(kept and kept.bookmarked)
        row["note"] = kept.note if kept else None
        row["pending"] = bool(kept and kept.pending)
    return rows


def notes_and_pending(
    notes: dict[str, InstanceNote], run_id: str, db_path: Path
) -> dict[str, InstanceNote]:
    """The run's stored notes with those pending for ``db_path`` (kept while another process
    writes it) over them, marked pending."""
    for item in pending(db_path):
        instance_id = item.instance_id
        if instance_id is None or item.run_id != run_id:
            continue
        now = notes.get(instance_id) or InstanceNote(run_id=run_id, instance_id=instance_id)
        if item.kind == "note":
            change: dict[str, Any] = {"note": item.text.strip() or None}
        else:
            change = {"bookmarked": item.bookmarked}
        notes[instance_id] = now.model_copy(update={**change, "pending": True})
    return notes


@dataclass
class NoteChanged(Message):
    """An instance's note or bookmark was stored."""

    note: InstanceNote


@dataclass
class NoteNotSaved(Message):
    """A bookmark could not be stored (one line; ``pending``: it is kept, stored later)."""

    reason: str
    pending: bool = False


class InstanceNotesScreen(HafScreen[None]):
    """The explorer's actions for notes, bookmarks and copying (see the module; the explorer
    binds b, w, y and * to them)."""

    run_id: str
    current: str | None
    by_id: dict[str, dict[str, Any]]
    cache: InstanceCache

    def fill_table(self, keep: str | None = None, rows: list[dict[str, Any]] | None = None) -> None:
        """Refill the instance list (the explorer's)."""

    def current_row(self) -> dict[str, Any] | None:
        """The row of the instance under the cursor (None: no instance shown)."""
        return self.by_id.get(self.current) if self.current else None

    # -- bookmark ----------------------------------------------------------------------------------

    def action_bookmark(self) -> None:
        """Bookmark the instance under the cursor, or take its bookmark off."""
        row = self.current_row()
        if row is None:
            self.notify("no instance under the cursor", severity="warning")
            return
        self.store_bookmark(str(row["instance_id"]), not row.get("bookmarked"), dict(row))

    @work(thread=True, exclusive=True, exit_on_error=False, group="instance-notes")
    def store_bookmark(self, instance_id: str, bookmarked: bool, row: dict[str, Any]) -> None:
        """Store the bookmark, or keep it pending while another process writes the database
        (thread worker: posts a message, touches no widget)."""
        run_id = self.run_id
        item = annotation(self.reader.path, "bookmark", run_id, instance_id, bookmarked=bookmarked)
        try:
            kept = write_or_keep(self.reader, item, "keeping notes")
        except HafError as exc:
            self.post_message(NoteNotSaved(f"{NOT_SAVED}: {first_line(exc)}"))
            return
        note = InstanceNote(
            run_id=run_id,
            instance_id=instance_id,
            note=row.get("note"),
            bookmarked=bookmarked,
            pending=kept or bool(row.get("pending")),
        )
        self.post_message(NoteChanged(note))
        if kept:
            self.post_message(NoteNotSaved(f"bookmark on {instance_id} {PENDING}", pending=True))

    @on(NoteNotSaved)
    def note_not_saved(self, message: NoteNotSaved) -> None:
        """Say why in one line."""
        self.notify(message.reason, severity="warning" if message.pending else "error")

    @on(NoteChanged)
    def note_changed(self, message: NoteChanged) -> None:
        """Show the stored note and bookmark in the list and the tree."""
        note = message.note
        row = self.by_id.get(note.instance_id)
        if row is None or note.run_id != self.run_id:
            return
        row["bookmarked"], row["note"], row["pending"] = note.bookmarked, note.note, note.pending
        self.fill_table()  # (the ★ mark; with the bookmark filter on, the rows shown)
        if self.current == note.instance_id:
            tree = self.query_one(StanceTree)
            tree.show_note(note.note, bookmarked=note.bookmarked, pending=note.pending)

    def pending_stored(self, stored: list[PendingAnnotation]) -> None:
        """Pending notes and bookmarks were stored (the app's): no longer marked pending."""
        for item in stored:
            row = self.by_id.get(item.instance_id or "")
            if item.run_id == self.run_id and row is not None and row.get("pending"):
                note = InstanceNote(
                    run_id=self.run_id,
                    instance_id=str(row["instance_id"]),
                    note=row.get("note"),
                    bookmarked=bool(row.get("bookmarked")),
                )
                self.note_changed(NoteChanged(note))

    # -- note --------------------------------------------------------------------------------------

    def action_note(self) -> None:
        """Write or edit the note of the instance under the cursor (ctrl+s saves)."""
        row = self.current_row()
        if row is None:
            self.notify("no instance under the cursor", severity="warning")
            return
        run_id, instance_id = self.run_id, str(row["instance_id"])
        reader = self.reader

        bookmarked, was_pending = bool(row.get("bookmarked")), bool(row.get("pending"))

        def save(text: str) -> str:
            item = annotation(reader.path, "note", run_id, instance_id, text=text)
            try:
                kept = write_or_keep(reader, item, "keeping notes")
            except HafError as exc:
                raise HafError(f"{NOT_SAVED}: {first_line(exc)}") from exc
            note = InstanceNote(
                run_id=run_id,
                instance_id=instance_id,
                note=text.strip() or None,
                bookmarked=bookmarked,
                pending=kept or was_pending,
            )
            self.post_message(NoteChanged(note))
            done = "saved" if note.note else "removed"
            return f"note on {instance_id} {PENDING}" if kept else f"note on {instance_id} {done}"

        editor = TextEditorScreen(
            f"Note on {instance_id} (run {run_id})",
            str(row.get("note") or ""),
            save,
            multiline=True,
            hint="blank removes the note",
        )
        self.app.push_screen(editor, self._note_closed)

    def _note_closed(self, summary: str | None) -> None:
        if summary:
            self.notify(summary)

    # -- copy --------------------------------------------------------------------------------------

    def action_copy(self) -> None:
        """Copy what is under the cursor: in the tree a reason (or the note), else the
        instance's text."""
        row = self.current_row()
        if row is None:
            self.notify("nothing to copy", severity="warning")
            return
        what, text = "the instance text", str(row.get("text") or "")
        tree = self.query_one(StanceTree)
        node = tree.cursor_node
        if self.focused is tree and node is not None:
            if node is tree.note_node and row.get("note"):
                what, text = "the note", str(row["note"])
            elif isinstance(node.data, NodeRef) and node.data.reason_index is not None:
                reason = self._reason_text(node.data)
                if reason is not None:
                    what, text = f"reason {node.data.reason_index + 1}", reason
        self.app.copy_to_clipboard(text)
        self.notify(f"copied {len(text)} characters ({what})")

    def _reason_text(self, ref: NodeRef) -> str | None:
        """The whole text of the reason a tree node stands for."""
        data = self.cache.get(self.current or "")
        if data is None:
            return None
        for row in data.detail:
            if (row.stage, row.sub_index, row.reason_index) == (
                ref.stage,
                ref.sub_index,
                ref.reason_index,
            ):
                return str(row.reason_text or "")
        return None
