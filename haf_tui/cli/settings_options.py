"""``haf run``'s options of every method's settings, drawn from the settings models
(:mod:`haf_tui.methods.options`): one argument group per method with settings."""

from __future__ import annotations

import argparse
from typing import Any

from haf_tui.methods.options import SettingOption, setting_options
from haf_tui.methods.registry import methods


def _type(option: SettingOption) -> Any:
    def parse(text: str) -> Any:
        try:
            return option.parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    parse.__name__ = {"int": "integer", "float": "number"}.get(option.kind, option.kind)
    return parse


REFUSED_FLAGS: list[str] = []
"""One line per method flag left out because ``haf run`` has it already (a plug-in's)."""


def add_setting_options(parser: argparse.ArgumentParser) -> None:
    """A group of flags per method with settings (``--suites`` names the methods a run
    holds; a method's flags only count when it is one of them); a flag ``haf run`` has
    already is left out (the setting keeps its default), and :data:`REFUSED_FLAGS` says so."""
    REFUSED_FLAGS.clear()
    for method in methods().values():
        options = setting_options(method)
        if not options:
            continue
        group = parser.add_argument_group(
            f"the {method.title} suite (--suites …,{method.name})", method.description
        )
        for option in options:
            try:
                _add_option(group, option)
            except argparse.ArgumentError as error:
                REFUSED_FLAGS.append(
                    f"method {method.name!r}: its flag {option.flag} is left out ({error}); "
                    "the setting keeps its default"
                )


def _add_option(group: argparse._ArgumentGroup, option: SettingOption) -> None:
    help_text = option.help
    if option.range_text():
        help_text = f"{help_text} ({option.range_text()})"
    extra: dict[str, Any] = {}
    if option.kind == "choice":
        extra["choices"] = option.choices
    if option.kind == "flag":
        group.add_argument(
            option.flag,
            dest=option.dest,
            action=argparse.BooleanOptionalAction,
            default=option.default,
            help=help_text,
        )
        return
    group.add_argument(
        option.flag,
        dest=option.dest,
        type=_type(option),
        default=option.default if option.kind != "list" else option.shown_default,
        metavar=_metavar(option),
        help=help_text,
        **extra,
    )


METAVARS = {"int": "N", "float": "X", "list": "A,B", "text": "TEXT"}


def _metavar(option: SettingOption) -> str | None:
    if option.metavar:
        return option.metavar
    if option.kind == "choice":
        return option.field.upper() if len(", ".join(option.choices)) > 40 else None
    return METAVARS.get(option.kind)


def settings_from_args(
    args: argparse.Namespace, suites: tuple[str, ...]
) -> dict[str, dict[str, Any]]:
    """Each run suite's settings as given on the command line (defaults where not given)."""
    found: dict[str, dict[str, Any]] = {}
    for name, method in methods().items():
        if name not in suites:
            continue
        options = setting_options(method)
        if not options:
            continue
        values: dict[str, Any] = {}
        for option in options:
            value = getattr(args, option.dest, option.default)
            if option.kind == "list" and isinstance(value, str):
                value = option.parse(value)
            values[option.field] = value
        found[name] = values
    return found
