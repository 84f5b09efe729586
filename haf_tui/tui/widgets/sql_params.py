"""The SQL screen's parameter form: an Input per ``$name`` of the SQL, shown between the editor
and the results (not a dialog: the editor and the result stay in sight, and it stays open to
change a value and run again); ``enter`` runs with the values, ``escape`` closes it."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Label, Static


@dataclass(frozen=True)
class ParamField:
    """One parameter the form asks for: its name, type, the text it starts with, and help."""

    name: str
    type: str
    value: str
    description: str = ""


@dataclass
class ParamsGiven(Message):
    """The form was sent: each parameter's text."""

    values: dict[str, str]


class ParamsForm(Vertical):
    """Hidden until :meth:`ask`; sends :class:`ParamsGiven` on ``enter``."""

    DEFAULT_CSS = """
    ParamsForm { display: none; height: auto; max-height: 12; overflow-y: auto;
        border: round $primary; padding: 0 1; }
    ParamsForm.-shown { display: block; }
    ParamsForm .params-title { text-style: bold; }
    ParamsForm .params-keys { color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.fields: list[ParamField] = []

    @property
    def shown(self) -> bool:
        """Whether the form is open."""
        return self.has_class("-shown")

    async def ask(self, title: str, fields: list[ParamField]) -> None:
        """Show a labelled Input per field (focused on the first)."""
        self.fields = fields
        await self.remove_children()
        widgets: list[Static | Input] = [Static(Text(title), classes="params-title")]
        for field in fields:
            about = f"${field.name} ({field.type})"
            widgets.append(
                Label(Text(about + (f": {field.description}" if field.description else "")))
            )
            widgets.append(Input(field.value, id=f"param-{field.name}", compact=True))
        keys = "lists: comma-separated · enter / ctrl+r run · esc close"
        widgets.append(Static(keys, classes="params-keys"))
        await self.mount_all(widgets)
        self.add_class("-shown")
        self.query(Input).first().focus()

    def values(self) -> dict[str, str]:
        """Each field's text."""
        return {f.name: self.query_one(f"#param-{f.name}", Input).value for f in self.fields}

    @on(Input.Submitted)
    def submit(self, event: Input.Submitted | None = None) -> None:
        """Send the values (the form stays open: change one and run again)."""
        if event is not None:
            event.stop()
        self.post_message(ParamsGiven(self.values()))

    def close(self) -> None:
        """Hide the form."""
        self.remove_class("-shown")
