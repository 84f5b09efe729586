"""A method's settings as options: each field of its pydantic settings model, declared once
(type, choices, range, default, description), becomes a ``haf run`` flag and a wizard field
(harlequin's idea: one option declaration, several faces).

A field names its own flag with ``json_schema_extra={"flag": "--x"}``; otherwise the flag is
``--<method.flag_prefix>-<field>``. ``"label"`` gives its short name in the wizard (else the
field's name), ``"choices"`` the values a tuple field picks from (a list of known choices).
Nested models (HAF's weights) are not options: they are kept at their defaults or set in a
config file.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any, Literal

from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from haf_tui.methods.declare import Method

OptionKind = Literal["choice", "int", "float", "text", "flag", "list"]


@dataclass(frozen=True)
class SettingOption:
    """One settings field as an option of one method."""

    method: str
    field: str
    flag: str
    kind: OptionKind
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    optional: bool = False
    metavar: str | None = None
    label: str = ""

    @property
    def title(self) -> str:
        """The short name a form shows (``label``, else the field's name in words)."""
        return self.label or self.field.replace("_", " ")

    @property
    def definition(self) -> str:
        """The description with its range: ``Top-k's k (1–100)``."""
        bounds = self.range_text()
        return f"{self.help} ({bounds})" if bounds else self.help

    @property
    def dest(self) -> str:
        """The argparse destination (unique across methods)."""
        return f"setting__{self.method}__{self.field}"

    @property
    def shown_default(self) -> str:
        """The default as a user types it (a list comma-separated; None as empty)."""
        if self.default is None:
            return ""
        if isinstance(self.default, tuple | list):
            return ",".join(str(v) for v in self.default)
        return str(self.default)

    def range_text(self) -> str:
        """``1–100``, ``≥ 0``, or nothing."""
        low, high = self.minimum, self.maximum
        if low is not None and high is not None:
            return f"{_num(low)}–{_num(high)}"
        if low is not None:
            return f"≥ {_num(low)}"
        if high is not None:
            return f"≤ {_num(high)}"
        return ""

    def parse(self, text: str) -> Any:
        """A typed value from what a user typed (ValueError with one line when it is not
        one); an empty text is None for an optional field."""
        text = text.strip()
        if not text and self.optional:
            return None
        if self.kind == "int":
            return int(text)
        if self.kind == "float":
            return float(text)
        if self.kind == "list":
            return tuple(part.strip() for part in text.split(",") if part.strip())
        if self.kind == "flag":
            return text.lower() in ("1", "true", "yes", "on")
        if self.kind == "choice" and text not in self.choices:
            raise ValueError(f"{self.flag}: {text!r} is not one of {', '.join(self.choices)}")
        return text


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _kind(annotation: Any) -> tuple[OptionKind | None, tuple[str, ...], bool]:
    """(kind, choices, optional) of a field's annotation; kind None: not an option."""
    optional = False
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        optional = len(args) < len(typing.get_args(annotation))
        if len(args) != 1:
            return None, (), optional
        annotation = args[0]
        origin = typing.get_origin(annotation)
    if origin is Literal:
        return "choice", tuple(str(a) for a in typing.get_args(annotation)), optional
    if origin is tuple:
        return "list", (), optional
    if annotation is bool:
        return "flag", (), optional
    if annotation is int:
        return "int", (), optional
    if annotation is float:
        return "float", (), optional
    if annotation is str:
        return "text", (), optional
    return None, (), optional


def _bounds(info: FieldInfo) -> tuple[float | None, float | None]:
    low = high = None
    for item in info.metadata:
        if isinstance(item, Ge | Gt):
            low = float(item.ge if isinstance(item, Ge) else item.gt)  # type: ignore[arg-type]
        if isinstance(item, Le | Lt):
            high = float(item.le if isinstance(item, Le) else item.lt)  # type: ignore[arg-type]
    return low, high


def field_options(name: str, prefix: str, model: type[BaseModel]) -> list[SettingOption]:
    """The options of settings model ``model`` of method ``name``."""
    options = []
    for field, info in model.model_fields.items():
        kind, choices, optional = _kind(info.annotation)
        if kind is None:
            continue
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        flag = str(extra.get("flag") or f"--{prefix or name}-{field.replace('_', '-')}")
        low, high = _bounds(info)
        listed = extra.get("choices")
        if kind == "list" and isinstance(listed, list | tuple):
            choices = tuple(str(choice) for choice in listed)
        options.append(
            SettingOption(
                method=name,
                field=field,
                flag=flag,
                kind=kind,
                default=info.get_default(call_default_factory=True),
                help=info.description or field.replace("_", " "),
                choices=choices,
                minimum=low,
                maximum=high,
                optional=optional,
                metavar=str(extra["metavar"]) if "metavar" in extra else None,
                label=str(extra.get("label") or ""),
            )
        )
    return options


def setting_options(method: Method[Any]) -> list[SettingOption]:
    """The options of one method's settings (none when it has no settings)."""
    if method.settings is None:
        return []
    return field_options(method.name, method.flag_prefix, method.settings)
