"""The judge method's run settings (``docs/methods/judge.md#3-prompts``,
``docs/methods/judge.md#4-toxicity-items``), stored under
``RunConfig.settings["judge"]``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from haf_tui.config import RunConfig
from haf_tui.methods.judge.core.prompts import Variant as JudgeVariant

NAME = "judge"


class JudgeSettings(BaseModel):
    """How the judge suite rates explanations (``docs/methods/judge.md#3-prompts``,
    ``docs/methods/judge.md#4-toxicity-items``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt: JudgeVariant = Field(
        "verbatim",
        description="the prompt's wording: verbatim = the human raters' guidelines "
        "(docs/methods/judge.md#3-prompts); default = the paper's Default instructions (a "
        "wording's name, not this option's default); nonsense, shuffled, paraphrased, verbose, "
        "repeated, swapped: invariance wordings "
        "(docs/methods/judge.md#55-prompt-wording: compare with haf judge meta "
        "--variant-run)",
        json_schema_extra={"metavar": "WORDING"},
    )
    mode: Literal["constrained", "free"] = Field(
        "constrained",
        description="constrained: each criterion's label by its labels' teacher-forced "
        "log-probabilities, slot by slot "
        "(docs/methods/judge.md#43-constrained-answers); free: a greedy "
        "answer, parsed (docs/methods/judge.md#42-free-answers)",
        json_schema_extra={"label": "answers"},
    )
    calls: Literal["compound", "single"] = Field(
        "compound",
        description="compound: all eight criteria in one answer (the paper's setting); "
        "single: one call per criterion, its prompt carrying only that criterion "
        "(docs/methods/judge.md#1-the-stage; default and verbatim prompts)",
    )
    max_new_tokens: int = Field(96, ge=8, le=4096, description="cap of a free answer")

    @model_validator(mode="after")
    def _single_calls_have_one_criterion_prompts(self) -> JudgeSettings:
        if self.calls == "single" and self.prompt not in ("default", "verbatim"):
            raise ValueError(
                f"single-criterion calls use the default or verbatim prompt, not {self.prompt}"
            )
        return self


def judge_settings(config: RunConfig) -> JudgeSettings:
    """The judge settings of ``config`` (defaults where it has none)."""
    return config.settings_for(NAME, JudgeSettings)
