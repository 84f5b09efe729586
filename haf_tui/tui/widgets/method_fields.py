"""One method's settings as wizard fields, drawn from its settings model's options
(:func:`haf_tui.methods.options.setting_options`): a heading with the method's title, then one
labelled field per option (a Select for a choice, a SelectionList for a list of known choices,
a Switch for a flag, an Input otherwise), each with its definition as a tooltip. Widget ids
come from the option's flag (``--toy-k`` → ``set-toy-k``). The labels and fields are the cells
of one two-column grid (:class:`FieldGrid`), not a container per row: the settings step's first
showing laid out and drew every row's container (issue 44 §2)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError
from textual.app import ComposeResult
from textual.containers import Grid, Vertical
from textual.widget import Widget
from textual.widgets import Input, Label, Select, SelectionList, Static, Switch

from haf_tui.methods.declare import Method
from haf_tui.methods.options import SettingOption, setting_options


def field_id(option: SettingOption) -> str:
    """The widget id of ``option``: ``set-`` and its flag without the dashes."""
    return "set-" + option.flag.removeprefix("--")


def definition_line(method: Method[Any], option: SettingOption) -> str:
    """``toy --toy-k: the k of Top-k (1–100); default 5``."""
    default = option.shown_default or "none"
    return f"{method.title} {option.flag}: {option.definition}; default {default}"


def option_widget(option: SettingOption) -> Widget:
    """The field that edits ``option``, holding its default."""
    widget_id = field_id(option)
    if option.kind == "choice":
        return Select(
            [(choice, choice) for choice in option.choices],
            value=str(option.default),
            allow_blank=False,
            id=widget_id,
        )
    if option.kind == "list" and option.choices:
        picked = {str(value) for value in option.default or ()}
        return SelectionList[str](
            *[(choice, choice, choice in picked) for choice in option.choices], id=widget_id
        )
    if option.kind == "flag":
        return Switch(bool(option.default), id=widget_id)
    placeholder = "blank: unset" if option.optional else ""
    return Input(option.shown_default, placeholder=placeholder, id=widget_id)


def option_value(option: SettingOption, widget: Widget) -> Any:
    """What ``widget`` holds, typed as ``option`` wants (text it cannot read is passed on
    as typed, for the settings model to say what is wrong with it)."""
    if isinstance(widget, SelectionList):
        return tuple(str(value) for value in widget.selected)
    if isinstance(widget, Select | Switch):
        return widget.value
    text = widget.value.strip() if isinstance(widget, Input) else ""
    try:
        return option.parse(text)
    except ValueError:
        return text


class FieldGrid(Grid):
    """Labelled fields as the cells of two columns, a label's 24 cells, then its field."""

    DEFAULT_CSS = """
    FieldGrid { grid-size: 2; grid-columns: 24 1fr; height: auto; }
    FieldGrid > .field-label { width: 24; padding: 1 1 0 1; }
    """


UNUSED_NOTE = "not picked in suites: its {count} settings show when it is"
"""Under the heading of a method not picked (its fields hidden: nothing to lay out or draw)."""


class MethodSettingsError(ValueError):
    """A method's settings are invalid: one line, and the field to mark (None: no field)."""

    def __init__(self, message: str, field: str | None) -> None:
        super().__init__(message)
        self.field = field


class MethodFields(Vertical):
    """The heading and fields of one method's settings (hidden while its suite is not
    picked: a line says so)."""

    DEFAULT_CSS = """
    MethodFields { height: auto; }
    MethodFields .method-heading {
        padding: 1 1 0 1; text-style: bold; text-wrap: nowrap; text-overflow: ellipsis;
    }
    MethodFields.-unused .method-heading { text-style: none; color: $text-muted; }
    MethodFields .method-unused { display: none; padding: 0 1; color: $text-muted; }
    MethodFields.-unused .method-unused { display: block; }
    MethodFields.-unused > FieldGrid { display: none; }
    """

    def __init__(self, method: Method[Any]) -> None:
        super().__init__(id=f"set-method-{method.name}", classes="method-fields")
        self.method = method
        self.options = setting_options(method)

    def compose(self) -> ComposeResult:
        """The heading (title and description), then a label and a field per option."""
        method = self.method
        yield Static(f"{method.title} — {method.description}", classes="method-heading")
        yield Static(UNUSED_NOTE.format(count=len(self.options)), classes="method-unused")
        with FieldGrid():
            for option in self.options:
                definition = definition_line(method, option)
                label = Label(option.title, classes="field-label")
                label.tooltip = definition
                yield label
                widget = option_widget(option)
                widget.tooltip = definition
                yield widget

    def definition_of(self, widget_id: str) -> str | None:
        """The definition of the field ``widget_id`` when it is one of this method's."""
        for option in self.options:
            if field_id(option) == widget_id:
                return definition_line(self.method, option)
        return None

    def values(self) -> dict[str, Any]:
        """The method's settings, validated by its settings model (defaults where it has no
        option); :class:`MethodSettingsError` when they are invalid."""
        model: type[BaseModel] | None = self.method.settings
        if model is None:
            return {}
        values = {
            option.field: option_value(option, self.query_one(f"#{field_id(option)}"))
            for option in self.options
        }
        try:
            return model.model_validate(values).model_dump(mode="json")
        except ValidationError as exc:
            raise self._error(exc) from exc

    def _error(self, exc: ValidationError) -> MethodSettingsError:
        error = exc.errors()[0]
        message = str(error["msg"]).removeprefix("Value error, ")
        where = [str(part) for part in error["loc"]]
        for option in self.options:
            if where and where[0] == option.field:
                return MethodSettingsError(
                    f"{self.method.title}: {option.title}: {message}", field_id(option)
                )
        place = f"{' '.join(where)}: " if where else ""
        return MethodSettingsError(f"{self.method.title}: {place}{message}", None)
