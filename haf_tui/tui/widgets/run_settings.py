"""The wizard's settings step: the suites, decoding, GPU layers, context size, batched
sequences and the similarity model, then each method's own settings drawn from its settings
model (:mod:`haf_tui.tui.widgets.method_fields`), validated by the same pydantic models as
``haf run``. With the embedded model alone, the seed and the answers' length start as the
demo's (``haf run --demo``), else as the paper's."""

from __future__ import annotations

import contextlib
from typing import Any

from pydantic import ValidationError
from textual import events, on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Input, Label, Select, SelectionList, Static, Switch
from textual.widgets.select import InvalidSelectValueError

from haf_tui.config import DecodingSettings, ModelSettings, RunConfig, SimilaritySettings
from haf_tui.methods.registry import default_suites, methods, preferred_parallel
from haf_tui.pipeline.demo import DEMO_DECODING as DEMO_FIELDS
from haf_tui.tui.widgets.marked_selection import MarkedSelectionList
from haf_tui.tui.widgets.method_fields import FieldGrid, MethodFields, MethodSettingsError

# (input id, section, field, label): the run's own settings (no method's)
NUMBER_FIELDS: tuple[tuple[str, str, str, str], ...] = (
    ("set-temperature", "decoding", "temperature", "temperature"),
    ("set-top-p", "decoding", "top_p", "top-p"),
    ("set-max-new", "decoding", "max_new_tokens", "max new tokens"),
    ("set-seed", "decoding", "seed", "seed"),
    ("set-gpu-layers", "model", "n_gpu_layers", "GPU layers (-1: all)"),
    ("set-n-ctx", "model", "n_ctx", "context size"),
    ("set-parallel", "model", "n_parallel", "sequences at once"),
)


PAPER_DECODING = {
    "set-seed": DecodingSettings().seed,
    "set-max-new": DecodingSettings().max_new_tokens,
    "set-temperature": DecodingSettings().temperature,
}
"""The paper's run seed, answer length and temperature (the form's defaults for any model but
the embedded)."""
DEMO_DECODING = {
    "set-seed": DEMO_FIELDS["seed"],
    "set-max-new": DEMO_FIELDS["max_new_tokens"],
    "set-temperature": DEMO_FIELDS["temperature"],
}
"""The demo's (``haf run --demo``'s, from the same fields): the form's defaults when the
embedded model runs alone."""


def _defaults() -> dict[tuple[str, str], Any]:
    sections: dict[str, Any] = {"decoding": DecodingSettings(), "model": ModelSettings()}
    return {
        (section, name): getattr(sections[section], name) for _, section, name, _ in NUMBER_FIELDS
    }


def _message(error: ValidationError) -> tuple[str, str | None]:
    """One line for the first error of the run's own settings, and the input to mark."""
    first = error.errors()[0]
    where = [str(part) for part in first["loc"]]
    text = str(first["msg"]).removeprefix("Value error, ")
    for input_id, _, name, label in NUMBER_FIELDS:
        if where and where[-1] == name:
            return f"{label}: {text}", input_id
    return f"{' '.join(where) or 'settings'}: {text}", None


class RunSettingsForm(VerticalScroll):
    """Every setting of a run, as inputs; :meth:`build` validates them into a RunConfig. The
    run's own settings come first, then each method's (:class:`MethodFields`, drawn from
    the registry: a method's fields are used when its suite is picked).

    Its scroll bar's column is kept from the start (``scrollbar-gutter: stable``): the form is
    taller than the screen at 80×24 and 200×60, and a bar appearing only after the first
    layout narrowed every row and drew all ~150 widgets a second time on the step's first
    showing (issue 44 §2). Its labels and fields are the cells of one grid (and one per
    method), not a container per row: fewer widgets to lay out and draw on that showing."""

    DEFAULT_CSS = """
    RunSettingsForm { height: 1fr; scrollbar-gutter: stable; }
    RunSettingsForm Input { width: 1fr; max-width: 40; }
    RunSettingsForm Select { width: 1fr; max-width: 40; }
    RunSettingsForm SelectionList { height: auto; max-height: 6; width: 1fr; max-width: 40; }
    RunSettingsForm #settings-error { color: $error; padding: 0 1; }
    RunSettingsForm #set-definition {
        dock: bottom; height: auto; max-height: 3; padding: 0 1; color: $text-muted;
        background: $surface;
    }
    """

    def __init__(self, *, offload_supported: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.offload_supported = offload_supported
        self._auto_parallel = ""  # the sequences at once the form last chose itself
        self._definition_said: str | None = None  # the focused field's definition shown

    def compose(self) -> ComposeResult:
        """The suites, the run's own settings, each method's, then the error line (and the
        focused method field's definition, at the bottom)."""
        chosen = default_suites()
        defaults = _defaults()
        defaults[("model", "n_parallel")] = self._auto_parallel = str(preferred_parallel(chosen))
        with FieldGrid(id="set-run-fields"):
            yield Label("suites (space)", classes="field-label")
            yield MarkedSelectionList[str](
                *[(name, name, name in chosen) for name in methods()], id="set-suites"
            )
            for input_id, section, name, label in NUMBER_FIELDS:
                yield Label(label, classes="field-label")
                yield Input(str(defaults[(section, name)]), id=input_id)
        yield Static("  llama.cpp: checking GPU offload …", id="set-offload", classes="hint")
        with FieldGrid(id="set-similarity-fields"):
            yield Label("similarity model", classes="field-label")
            yield Input(SimilaritySettings().model, id="set-similarity")
            yield Label("similarity kind", classes="field-label")
            yield Select(
                [("bi-encoder", "bi-encoder"), ("cross-encoder", "cross-encoder")],
                value="bi-encoder",
                allow_blank=False,
                id="set-similarity-kind",
            )
        for method in methods().values():
            if method.settings is not None:
                yield MethodFields(method).set_class(method.name not in chosen, "-unused")
        yield Static("", id="settings-error")
        definition = Static("", id="set-definition")
        definition.display = False
        yield definition

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Say the definition of a method's field as it takes the focus."""
        widget_id = event.widget.id or ""
        found = None
        for fields in self.query(MethodFields):
            found = found or fields.definition_of(widget_id)
        if found == self._definition_said:
            return  # (unchanged: an update would lay the screen out again, as on the step's
            # first showing, where the focus goes to the suites)
        self._definition_said = found
        line = self.query_one("#set-definition", Static)
        line.update(found or "")
        line.display = found is not None

    @on(SelectionList.SelectedChanged, "#set-suites")
    def _suites_changed(self) -> None:
        """Grey the settings of the methods not picked, and start the sequences at once at
        what the picked methods ask for (a value the user typed stays)."""
        picked = self._suites()
        for fields in self.query(MethodFields):
            fields.set_class(fields.method.name not in picked, "-unused")
        wanted = str(preferred_parallel(picked))
        field = self.query_one("#set-parallel", Input)
        if field.value.strip() == self._auto_parallel:
            field.value = wanted
        self._auto_parallel = wanted

    def follow_models(self, embedded_only: bool) -> None:
        """The seed, answer length and temperature the picked models start with: the demo's
        (greedy) for the embedded model alone, else the paper's (a field the user changed keeps
        its value)."""
        wanted = DEMO_DECODING if embedded_only else PAPER_DECODING
        other = PAPER_DECODING if embedded_only else DEMO_DECODING
        for input_id, value in wanted.items():
            field = self.query_one(f"#{input_id}", Input)
            if field.value.strip() == str(other[input_id]):
                field.value = str(value)

    def show_offload(self, supported: bool) -> None:
        """Say whether the llama.cpp build can offload layers to a GPU."""
        self.offload_supported = supported
        text = "built with GPU offload" if supported else "a CPU-only build: GPU layers unused"
        self.query_one("#set-offload", Static).update(f"  llama.cpp: {text}")

    def _number(self, input_id: str) -> Any:
        raw = self.query_one(f"#{input_id}", Input).value.strip()
        try:
            return int(raw)
        except ValueError:
            try:
                return float(raw)
            except ValueError:
                return raw  # pydantic says what is wrong with it

    def _suites(self) -> tuple[str, ...]:
        return tuple(str(s) for s in self.query_one("#set-suites", SelectionList).selected)

    def build(
        self,
        model_path: str | None,
        *,
        limit: int | None = None,
        until_complete: int | None = None,
    ) -> RunConfig:
        """The run's config for ``model_path`` (at most ``limit`` instances, until
        ``until_complete`` went through); ValidationError/ValueError when invalid (a
        method's settings: :class:`MethodSettingsError`, naming the field)."""
        values: dict[str, dict[str, Any]] = {"decoding": {}, "model": {}}
        for input_id, section, name, _ in NUMBER_FIELDS:
            values[section][name] = self._number(input_id)
        model = ModelSettings(path=model_path, **values["model"])
        decoding = DecodingSettings(**values["decoding"])
        similarity = SimilaritySettings(
            model=self.query_one("#set-similarity", Input).value.strip(),
            kind=self.query_one("#set-similarity-kind", Select).value,
        )
        suites = self._suites()
        settings = {
            fields.method.name: fields.values()
            for fields in self.query(MethodFields)
            if fields.method.name in suites
        }
        return RunConfig(
            model=model,
            decoding=decoding,
            similarity=similarity,
            limit=limit,
            until_complete=until_complete,
            suites=suites,
            settings=settings,
        )

    def answers(self) -> dict[str, Any]:
        """Every field's value by widget id (inputs: text, selects: value, lists: picks,
        switches: on or off)."""
        values: dict[str, Any] = {}
        for field in self.query("Input, Select, SelectionList, Switch"):
            if field.id is None:
                continue
            if isinstance(field, Input):
                values[field.id] = field.value
            elif isinstance(field, SelectionList):
                values[field.id] = [str(v) for v in field.selected]
            elif isinstance(field, Switch):
                values[field.id] = field.value
            elif isinstance(field, Select) and field.value is not Select.NULL:
                values[field.id] = str(field.value)
        return values

    def restore(self, values: dict[str, Any]) -> None:
        """Fill the fields from :meth:`answers` (unknown ids and values are skipped; the
        restored sequences at once stay as they were saved)."""
        self._auto_parallel = ""
        for field_id, value in values.items():
            found = self.query(f"#{field_id}")
            if not found:
                continue
            field = found.first()
            if isinstance(field, Input) and isinstance(value, str):
                field.value = value
            elif isinstance(field, SelectionList) and isinstance(value, list):
                field.deselect_all()
                for option in value:
                    with contextlib.suppress(Exception):  # (an option that no longer exists)
                        field.select(option)
            elif isinstance(field, Switch) and isinstance(value, bool):
                field.value = value
            elif isinstance(field, Select) and isinstance(value, str):
                with contextlib.suppress(InvalidSelectValueError):
                    field.value = value

    def validate(self) -> str | None:
        """Why the settings are invalid (also shown inline, the field marked), or None."""
        for field in self.query(".-invalid"):
            field.remove_class("-invalid")
        marked: str | None = None
        try:
            self.build(None)
        except MethodSettingsError as exc:
            message, marked = str(exc), exc.field
        except ValidationError as exc:
            message, marked = _message(exc)
        except ValueError as exc:
            message = str(exc)
        else:
            self.query_one("#settings-error", Static).update("")
            return None
        if marked is not None:
            self.query_one(f"#{marked}").add_class("-invalid")
        self.query_one("#settings-error", Static).update(message)
        return message
