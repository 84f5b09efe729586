"""Configuration records shared by the CLI, the pipeline and (later) the TUI wizard."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

DEFAULT_SIMILARITY_MODEL = "all-MiniLM-L6-v2"
MAX_N_CTX = 1 << 24
"""The largest context size (tokens) a run asks for: above any model's trained context, and
times 64 sequences still within llama.cpp's 32-bit context size."""
SettingsT = TypeVar("SettingsT", bound=BaseModel)


class DecodingSettings(BaseModel):
    """Sampling settings of a generation (defaults: the paper's, spec section 1)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    temperature: float = Field(0.6, ge=0.0, le=5.0)
    top_p: float = Field(0.8, gt=0.0, le=1.0)
    top_k: int = Field(50, ge=0, description="transformers' default, which the reference ran")
    max_new_tokens: int = Field(1024, ge=1, le=32768)
    seed: int = Field(17, ge=0)
    top_logprobs: int = Field(5, ge=0, le=20, description="alternatives kept per token")


class ModelSettings(BaseModel):
    """Which GGUF to run and how (``path=None``: the embedded default)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str | None = None
    chat_format: str | None = Field(None, description="None: the GGUF's template, else by arch")
    n_ctx: int = Field(4096, ge=256, le=MAX_N_CTX)
    n_gpu_layers: int = Field(-1, ge=-1, description="-1: all layers when offload is built in")
    n_threads: int | None = Field(None, ge=1)
    n_batch: int = Field(512, ge=1)
    n_parallel: int = Field(
        8,
        ge=1,
        le=64,
        description="sequences decoded together (batched); 1: one generation at a time",
    )
    extra_buffers: bool = Field(
        False, description="llama.cpp weight repacking/AMX buffers (crashed on AMX VMs here)"
    )
    servers: tuple[str, ...] = Field(
        (),
        description="OpenAI-compatible inference servers (URL or URL#N: N requests at once "
        "there) that generate instead of llama.cpp in process; the GGUF at path gives the chat "
        "template and the tokenizer",
    )


class SimilaritySettings(BaseModel):
    """The semantic similarity model g."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = DEFAULT_SIMILARITY_MODEL
    kind: Literal["bi-encoder", "cross-encoder"] = "bi-encoder"
    device: str = "cpu"


SettingsModels = Mapping[str, type[BaseModel]]
"""Each method's settings model, by method name."""

SETTINGS_MODELS: dict[str, type[BaseModel]] = {}
"""The settings models of the methods a program loaded: handed over whole by the method
registry it installed (:meth:`haf_tui.methods.registry.MethodRegistry.install` through
:func:`use_settings_models`); empty until then, when a config's settings stay plain data.
This module never loads a method (it is below them)."""


class HasSettingsModels(Protocol):
    """What a config's validation context ``{"methods": ...}`` gives: the methods' settings
    models (a :class:`~haf_tui.methods.registry.MethodRegistry`)."""

    @property
    def settings_models(self) -> SettingsModels:
        """Each method's settings model by name."""

    # (and, when it has them, ``legacy_settings``: the old top-level keys of the methods'
    # settings, see :data:`LEGACY_SETTINGS`; else those handed over are lifted)


def use_settings_models(models: SettingsModels) -> None:
    """Check ``RunConfig.settings[name]`` against ``models[name]`` from now on (and against
    nothing else: the models handed over before are forgotten)."""
    SETTINGS_MODELS.clear()
    SETTINGS_MODELS.update(models)


LegacySettings = Mapping[str, tuple[str, str | None]]
"""Where the settings of a config stored before methods were packages (store schema < 8) went:
old top-level key → (method, field; None: the whole settings table)."""

LEGACY_SETTINGS: dict[str, tuple[str, str | None]] = {}
"""The old top-level keys the program's methods declare (``Method.legacy_settings``), handed
over by the registry it installed (:func:`use_legacy_settings`); empty until then."""


def use_legacy_settings(legacy: LegacySettings) -> None:
    """Lift the old top-level keys of ``legacy`` from now on (and no others)."""
    LEGACY_SETTINGS.clear()
    LEGACY_SETTINGS.update(legacy)


def lift_legacy_settings(
    data: dict[str, Any], legacy: LegacySettings | None = None
) -> dict[str, Any]:
    """A config dict of the old layout (suite settings at the top) in the new one (under
    ``settings`` by method name), the old keys those of ``legacy`` (None: those handed over,
    :data:`LEGACY_SETTINGS`); a new-layout dict is returned unchanged."""
    legacy = LEGACY_SETTINGS if legacy is None else legacy
    if not any(key in data for key in legacy):
        return data
    data = dict(data)
    settings: dict[str, Any] = {k: dict(v or {}) for k, v in (data.get("settings") or {}).items()}
    for key, (method, name) in legacy.items():
        if key not in data:
            continue
        value = data.pop(key)
        if name is None:
            settings.setdefault(method, {}).update(_as_dict(value))
        else:
            settings.setdefault(method, {})[name] = value
    data["settings"] = settings
    return data


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, BaseModel):
        return value.model_dump()
    return dict(value or {})


class RunConfig(BaseModel):
    """Everything that decides what a run computes; stored with the run as JSON. The run's
    model, decoding, similarity model, dataset and suites, and each suite's own settings by
    suite name (``settings``: read them through the method, e.g. ``method.settings_of``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: ModelSettings = ModelSettings()
    decoding: DecodingSettings = DecodingSettings()
    similarity: SimilaritySettings = SimilaritySettings()
    dataset_id: str = "builtin-sample"
    limit: int | None = Field(None, ge=1)
    until_complete: int | None = Field(
        None,
        ge=1,
        description="evaluate the texts in order until this many went through every stage of "
        "the run (at most limit); the texts after them are left out of the run",
    )
    suites: tuple[str, ...] = Field(
        ("haf",),
        description="the evaluation suites run on every instance (a run stored "
        "before suites existed is HAF only)",
    )
    settings: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="each suite's settings, by suite name"
    )

    @model_validator(mode="before")
    @classmethod
    def _settings_by_suite(cls, data: Any, info: ValidationInfo) -> Any:
        """Each suite's settings checked by its method's model and given its defaults: the
        models of the validation context's ``methods`` when given
        (``RunConfig.model_validate(data, context={"methods": registry})``), else those the
        program's method registry handed over (:data:`SETTINGS_MODELS`)."""
        if not isinstance(data, dict):
            return data
        given = (info.context or {}).get("methods") if isinstance(info.context, dict) else None
        data = lift_legacy_settings(data, getattr(given, "legacy_settings", None))
        models: SettingsModels = given.settings_models if given is not None else SETTINGS_MODELS
        settings = {name: _as_dict(value) for name, value in (data.get("settings") or {}).items()}
        for name in (*data.get("suites", ("haf",)), *settings):
            model = models.get(name)
            if model is not None:
                settings[name] = model.model_validate(settings.get(name) or {}).model_dump(
                    mode="json"
                )
        return {**data, "settings": settings}

    @field_validator("suites")
    @classmethod
    def _some_suite(cls, suites: tuple[str, ...]) -> tuple[str, ...]:
        if not suites:
            raise ValueError("pick at least one suite")
        return tuple(dict.fromkeys(suites))

    def settings_for(self, name: str, model: type[SettingsT]) -> SettingsT:
        """Suite ``name``'s settings as ``model`` (its defaults where the config has none)."""
        return model.model_validate(self.settings.get(name) or {})

    def with_settings(self, name: str, **values: Any) -> RunConfig:
        """A copy with ``values`` set in suite ``name``'s settings."""
        settings = {k: dict(v) for k, v in self.settings.items()}
        settings.setdefault(name, {}).update(values)
        return RunConfig.model_validate({**self.model_dump(), "settings": settings})
