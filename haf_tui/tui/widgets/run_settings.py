"""The wizard's settings step: the suites, prompting, HAF's stages, decoding, GPU layers,
context size, batched sequences, the rationales and judge suites' settings and the similarity
model, validated by the same pydantic models as ``haf run``. With the embedded model alone, the
seed and the answers' length start as the demo's (``haf run --demo``), else as the paper's."""

from __future__ import annotations

import contextlib
from typing import Any

from pydantic import ValidationError
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Input, Label, Select, SelectionList, Static
from textual.widgets.select import InvalidSelectValueError

from haf_tui.config import DecodingSettings, ModelSettings, RunConfig, SimilaritySettings
from haf_tui.defaults import DEMO_MAX_NEW_TOKENS, DEMO_SEED
from haf_tui.methods.haf.settings import STAGE_NAMES
from haf_tui.methods.judge.core.prompts import VARIANTS as JUDGE_VARIANTS
from haf_tui.methods.judge.settings import JudgeSettings
from haf_tui.methods.rationales.core.prompts import VARIANTS
from haf_tui.methods.rationales.settings import RationaleSettings
from haf_tui.methods.registry import SUITES, default_suites

# (input id, section, field, label)
NUMBER_FIELDS: tuple[tuple[str, str, str, str], ...] = (
    ("set-temperature", "decoding", "temperature", "temperature"),
    ("set-top-p", "decoding", "top_p", "top-p"),
    ("set-max-new", "decoding", "max_new_tokens", "max new tokens"),
    ("set-seed", "decoding", "seed", "seed"),
    ("set-gpu-layers", "model", "n_gpu_layers", "GPU layers (-1: all)"),
    ("set-n-ctx", "model", "n_ctx", "context size"),
    ("set-parallel", "model", "n_parallel", "sequences at once"),
    ("set-rationale-k", "rationales", "k", "rationales: Top-k's k"),
    ("set-rationale-seeds", "rationales", "random_seeds", "rationales: RANDOM masks"),
)
# (select id, field, label, options): the rationales suite's choices (spec RATIONALES.md)
RATIONALE_CHOICES: tuple[tuple[str, str, str, tuple[tuple[str, str], ...]], ...] = (
    ("set-rationale-variant", "variant", "rationales: prompt", tuple((v, v) for v in VARIANTS)),
    (
        "set-rationale-strategy",
        "strategy",
        "rationales: how many",
        (
            ("unbound (the model decides)", "unbound"),
            ("top-var (human size)", "top_var"),
            ("top-ratio (share of words)", "top_ratio"),
            ("top-k", "top_k"),
        ),
    ),
    (
        "set-rationale-removal",
        "removal",
        "rationales: removal",
        (("delete the words", "delete"), ("replace each by _", "underscore")),
    ),
)


# (select id, field, label, options): the judge suite's choices (spec JUDGE.md)
JUDGE_CHOICES: tuple[tuple[str, str, str, tuple[tuple[str, str], ...]], ...] = (
    ("set-judge-prompt", "prompt", "judge: prompt", tuple((v, v) for v in JUDGE_VARIANTS)),
    (
        "set-judge-mode",
        "mode",
        "judge: answers",
        (("constrained (label log-probs)", "constrained"), ("free (parsed)", "free")),
    ),
    (
        "set-judge-calls",
        "calls",
        "judge: calls",
        (("all criteria at once", "compound"), ("one per criterion", "single")),
    ),
)


PAPER_DECODING = {
    "set-seed": DecodingSettings().seed,
    "set-max-new": DecodingSettings().max_new_tokens,
}
"""The paper's run seed and answer length (the form's defaults for any model but the embedded)."""
DEMO_DECODING = {"set-seed": DEMO_SEED, "set-max-new": DEMO_MAX_NEW_TOKENS}
"""The demo's (``haf run --demo``): the form's defaults when the embedded model runs alone."""


def _defaults() -> dict[tuple[str, str], Any]:
    sections = {
        "decoding": DecodingSettings(),
        "model": ModelSettings(),
        "rationales": RationaleSettings(),
    }
    return {
        (section, name): getattr(sections[section], name) for _, section, name, _ in NUMBER_FIELDS
    }


class RunSettingsForm(VerticalScroll):
    """Every setting of a run, as inputs; :meth:`build` validates them into a RunConfig."""

    DEFAULT_CSS = """
    RunSettingsForm { height: 1fr; }
    RunSettingsForm > Horizontal { height: auto; }
    RunSettingsForm .field-label { width: 24; padding: 1 1 0 1; }
    RunSettingsForm Input { width: 1fr; max-width: 40; }
    RunSettingsForm Select { width: 1fr; max-width: 40; }
    RunSettingsForm SelectionList { height: auto; max-height: 6; width: 1fr; max-width: 40; }
    RunSettingsForm #settings-error { color: $error; padding: 0 1; }
    """

    def __init__(self, *, offload_supported: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.offload_supported = offload_supported

    def compose(self) -> ComposeResult:
        """One labelled row per setting, then the error line."""
        with Horizontal():
            yield Label("suites (space)", classes="field-label")
            yield SelectionList[str](
                *[(name, name, name in default_suites()) for name in SUITES], id="set-suites"
            )
        with Horizontal():
            yield Label("prompting", classes="field-label")
            yield Select(
                [("explicit (the paper's)", "explicit"), ("naive", "naive")],
                value="explicit",
                allow_blank=False,
                id="set-prompting",
            )
        with Horizontal():
            yield Label("stages (space)", classes="field-label")
            yield SelectionList[str](*[(name, name, True) for name in STAGE_NAMES], id="set-stages")
        defaults = _defaults()
        for input_id, section, name, label in NUMBER_FIELDS:
            with Horizontal():
                yield Label(label, classes="field-label")
                yield Input(str(defaults[(section, name)]), id=input_id)
        yield Static("  llama.cpp: checking GPU offload …", id="set-offload", classes="hint")
        rationale = RationaleSettings()
        for select_id, name, label, options in RATIONALE_CHOICES:
            with Horizontal():
                yield Label(label, classes="field-label")
                yield Select(
                    list(options), value=getattr(rationale, name), allow_blank=False, id=select_id
                )
        with Horizontal():
            yield Label("rationales: ratio", classes="field-label")
            yield Input("", placeholder="the dataset's (blank)", id="set-rationale-ratio")
        judge = JudgeSettings()
        for select_id, name, label, options in JUDGE_CHOICES:
            with Horizontal():
                yield Label(label, classes="field-label")
                yield Select(
                    list(options), value=getattr(judge, name), allow_blank=False, id=select_id
                )
        with Horizontal():
            yield Label("similarity model", classes="field-label")
            yield Input(SimilaritySettings().model, id="set-similarity")
        with Horizontal():
            yield Label("similarity kind", classes="field-label")
            yield Select(
                [("bi-encoder", "bi-encoder"), ("cross-encoder", "cross-encoder")],
                value="bi-encoder",
                allow_blank=False,
                id="set-similarity-kind",
            )
        yield Static("", id="settings-error")

    def follow_models(self, embedded_only: bool) -> None:
        """The seed and answer length the picked models start with: the demo's for the embedded
        model alone, else the paper's (a field the user changed keeps its value)."""
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

    def build(self, model_path: str | None, *, limit: int | None = None) -> RunConfig:
        """The run's config for ``model_path``; ValidationError/ValueError when invalid."""
        values: dict[str, dict[str, Any]] = {
            "decoding": {}, "model": {}, "rationales": {}, "judge": {},
        }  # fmt: skip
        for input_id, section, name, _ in NUMBER_FIELDS:
            values[section][name] = self._number(input_id)
        for select_id, name, _, _ in RATIONALE_CHOICES:
            values["rationales"][name] = self.query_one(f"#{select_id}", Select).value
        for select_id, name, _, _ in JUDGE_CHOICES:
            values["judge"][name] = self.query_one(f"#{select_id}", Select).value
        ratio = self.query_one("#set-rationale-ratio", Input).value.strip()
        values["rationales"]["ratio"] = self._number("set-rationale-ratio") if ratio else None
        stages = tuple(self.query_one("#set-stages", SelectionList).selected)
        similarity_kind = self.query_one("#set-similarity-kind", Select).value
        suites = tuple(str(s) for s in self.query_one("#set-suites", SelectionList).selected)
        return RunConfig(
            model=ModelSettings(path=model_path, **values["model"]),
            decoding=DecodingSettings(**values["decoding"]),
            similarity=SimilaritySettings(
                model=self.query_one("#set-similarity", Input).value.strip(),
                kind=similarity_kind,
            ),
            limit=limit,
            suites=suites,
            settings={
                name: values
                for name, values in {
                    "haf": {
                        "prompting": self.query_one("#set-prompting", Select).value,
                        "stages": stages,
                    },
                    "rationales": RationaleSettings(**values["rationales"]).model_dump(),
                    "judge": JudgeSettings(**values["judge"]).model_dump(),
                }.items()
                if name in suites
            },
        )

    def answers(self) -> dict[str, Any]:
        """Every field's value by widget id (inputs: text, selects: value, lists: picks)."""
        values: dict[str, Any] = {}
        for field in self.query("Input, Select, SelectionList"):
            if field.id is None:
                continue
            if isinstance(field, Input):
                values[field.id] = field.value
            elif isinstance(field, SelectionList):
                values[field.id] = [str(v) for v in field.selected]
            elif isinstance(field, Select) and field.value is not Select.NULL:
                values[field.id] = str(field.value)
        return values

    def restore(self, values: dict[str, Any]) -> None:
        """Fill the fields from :meth:`answers` (unknown ids and values are skipped)."""
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
            elif isinstance(field, Select) and isinstance(value, str):
                with contextlib.suppress(InvalidSelectValueError):
                    field.value = value

    def validate(self) -> str | None:
        """Why the settings are invalid (also shown inline, the field marked), or None."""
        for input_id, *_ in NUMBER_FIELDS:
            self.query_one(f"#{input_id}", Input).remove_class("-invalid")
        try:
            self.build(None)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = [str(part) for part in error["loc"]]
            message = f"{' '.join(where) or 'settings'}: {error['msg']}"
            field = where[-1] if where else ""
            for input_id, _, name, label in NUMBER_FIELDS:
                if name == field:
                    self.query_one(f"#{input_id}", Input).add_class("-invalid")
                    message = f"{label}: {error['msg']}"
            if "stages" in where or "justify" in error["msg"]:
                message = f"stages: {error['msg'].removeprefix('Value error, ')}"
            if not where:  # a model-level rule (e.g. the judge's single calls)
                message = error["msg"].removeprefix("Value error, ")
            if "suites" in where:
                message = f"suites: {error['msg'].removeprefix('Value error, ')}"
        except ValueError as exc:
            message = str(exc)
        else:
            self.query_one("#settings-error", Static).update("")
            return None
        self.query_one("#settings-error", Static).update(message)
        return message
