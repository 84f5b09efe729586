"""The rationales method's run settings (``docs/methods/rationales.md``), stored under
``RunConfig.settings["rationales"]``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from haf_tui.config import RunConfig
from haf_tui.methods.rationales.core.attribution import ATTRIBUTIONS, Attribution
from haf_tui.methods.rationales.core.prompts import Strategy, Variant

NAME = "rationales"
RATIONALE_PARALLEL = 32
"""Sequences a rationales run decodes together unless ``--parallel`` says otherwise: its texts
share their prompts up to the first word removed, and the more are in flight the more share
(``make bench --only rationales``: 8 → 32 cut a post's time by ~0.8× with the same logprobs)."""
DEFAULT_RANDOM_TOLERANCE = 0.05
"""A new run's RANDOM tolerance when none is given (see ``random_tolerance``)."""


class RationaleSettings(BaseModel):
    """How the rationales suite asks and perturbs (``docs/methods/rationales.md``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    variant: Variant = Field(
        "normal",
        description="prompt version (docs/methods/rationales.md#32-the-prompts)",
        json_schema_extra={"label": "prompt"},
    )
    strategy: Strategy = Field(
        "top_ratio",
        description="how many words a rationale holds: the model decides, the size of the "
        "human rationale, a share of the words, or k "
        "(docs/methods/rationales.md#33-selection-strategies)",
        json_schema_extra={"label": "how many"},
    )
    k: int = Field(
        5, ge=1, le=100, description="Top-k's k", json_schema_extra={"label": "Top-k's k"}
    )
    ratio: float | None = Field(
        None,
        gt=0.0,
        le=1.0,
        description="Top-Ratio's ratio (default: the dataset's mean |HARD|/n, worked out when "
        "the run is created)",
    )
    removal: Literal["delete", "underscore"] = Field(
        "delete",
        description="how removed words go (docs/methods/rationales.md#43-removing-words): "
        "deleted, or each replaced by _",
    )
    random_seeds: int = Field(
        100,
        ge=0,
        le=1000,
        description="random masks of the RANDOM flip baseline "
        "(docs/methods/rationales.md#62-faithfulness); with a tolerance, the "
        "most it asks",
        json_schema_extra={"flag": "--rationale-seeds", "label": "RANDOM masks"},
    )
    random_tolerance: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="adaptive RANDOM (an adaptation of P2's 100 seeds): masks are asked in "
        "rounds of random_min_seeds until the 95% half-width of the instance's RANDOM comp and "
        "flip means is at most this; 0: every seed (default: "
        f"{DEFAULT_RANDOM_TOLERANCE}, fixed when the run is created; a run stored without it "
        "used every seed)",
        json_schema_extra={"flag": "--rationale-tolerance", "label": "RANDOM tolerance"},
    )
    random_min_seeds: int = Field(
        10,
        ge=1,
        le=1000,
        description="adaptive RANDOM: the masks asked first and in each further round",
        json_schema_extra={"flag": "--rationale-min-seeds", "label": "RANDOM round"},
    )
    gold: Literal["hard", "union"] = Field(
        "hard",
        description="the annotators' gold of the hard metrics: marked by half of them, or by "
        "any (docs/methods/rationales.md#5-ground-truth)",
    )
    spans: Literal["runs", "tokens"] = Field(
        "runs",
        description="IoU-F1's predicted spans "
        "(docs/methods/rationales.md#61-plausibility): runs of consecutive tokens, or each "
        "token its own span (HateXplain's own evaluation)",
    )
    max_new_tokens: int = Field(64, ge=1, le=4096, description="cap of a prompted answer")
    attributions: tuple[Attribution, ...] | None = Field(
        None,
        description="the attribution rationales computed: leave-one-out (occlusion) and P2's "
        "attention, saliency and input_x_gradient (the run's GGUF in torch: one forward and "
        "one backward pass a post) (default: all four, fixed when the run is created; a run "
        "stored without it computed occlusion only)",
        json_schema_extra={
            "flag": "--rationale-attributions",
            "choices": list(ATTRIBUTIONS),
            "label": "attributions",
        },
    )

    @field_validator("attributions")
    @classmethod
    def _known_attributions(
        cls, chosen: tuple[Attribution, ...] | None
    ) -> tuple[Attribution, ...] | None:
        """In the reports' order, each once."""
        if chosen is None:
            return None
        return tuple(name for name in ATTRIBUTIONS if name in chosen)


def adaptive_random(settings: RationaleSettings) -> bool:
    """Whether RANDOM stops early (a tolerance above 0; None, a run stored before the
    tolerance existed, and 0 ask every seed)."""
    return bool(settings.random_tolerance)


def attributions_of(settings: RationaleSettings) -> tuple[Attribution, ...]:
    """The attribution sources a run computes (occlusion alone: a run stored before the
    setting existed)."""
    return ("occlusion",) if settings.attributions is None else settings.attributions


def rationale_settings(config: RunConfig) -> RationaleSettings:
    """The rationales settings of ``config`` (defaults where it has none)."""
    return config.settings_for(NAME, RationaleSettings)
