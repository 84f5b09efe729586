"""HAF's run settings: the prompting style, the stages a run holds, the parse rules and the
metric weights (``docs/methods/haf.md``), stored under ``RunConfig.settings["haf"]``."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from haf_tui.config import RunConfig
from haf_tui.vocabulary import STAGES, Prompting, Rules

NAME = "haf"
STAGE_NAMES: tuple[str, ...] = STAGES


class MetricWeights(BaseModel):
    """The weights of spec section 5 (defaults as the paper)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    sos_confidence: float = Field(0.8, ge=0.0, le=1.0)
    reliance_confidence: float = Field(0.5, ge=0.0, le=1.0)


class HafSettings(BaseModel):
    """How HAF asks, which of its stages run, how answers are read and weighed."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    prompting: Prompting = Field(
        "explicit",
        description="explicit: the paper's instruction to list reasons; naive: without it",
        json_schema_extra={"flag": "--prompting"},
    )
    stages: tuple[str, ...] = Field(
        STAGE_NAMES,
        description="the stages run (justify is required)",
        json_schema_extra={"flag": "--stages", "choices": list(STAGE_NAMES)},
    )
    parse_rules: Rules = Field(
        "reference",
        description="the reference parser's rules (reference), or whole-word keywords (strict)",
        json_schema_extra={"flag": "--parse-rules"},
    )
    weights: MetricWeights = MetricWeights()

    @field_validator("stages")
    @classmethod
    def _known_stages(cls, stages: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [s for s in stages if s not in STAGE_NAMES]
        if unknown:
            raise ValueError(f"unknown stage(s) {unknown}: choose from {list(STAGE_NAMES)}")
        if "justify" not in stages:
            raise ValueError("the justify stage is required: every other stage builds on it")
        return tuple(s for s in STAGE_NAMES if s in stages)


def haf_settings(config: RunConfig) -> HafSettings:
    """HAF's settings in ``config`` (defaults where it has none)."""
    return config.settings_for(NAME, HafSettings)
