"""Configuration records shared by the CLI, the pipeline and (later) the TUI wizard."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from haf_tui.judge.prompts import Variant as JudgeVariant
from haf_tui.rationales.prompts import Strategy, Variant
from haf_tui.vocabulary import STAGES, Prompting, Rules

DEFAULT_SIMILARITY_MODEL = "all-MiniLM-L6-v2"


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
    n_ctx: int = Field(4096, ge=256)
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


STAGE_NAMES: tuple[str, ...] = STAGES


class MetricWeights(BaseModel):
    """The weights of spec section 5 (defaults as the paper)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    sos_confidence: float = Field(0.8, ge=0.0, le=1.0)
    reliance_confidence: float = Field(0.5, ge=0.0, le=1.0)


class RationaleSettings(BaseModel):
    """How the rationales suite asks and perturbs (spec ``RATIONALES.md`` §3–§6)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    variant: Variant = Field("normal", description="prompt version (§3.2)")
    strategy: Strategy = Field("top_ratio", description="how many words a rationale holds (§3.3)")
    k: int = Field(5, ge=1, le=100, description="Top-k's k")
    ratio: float | None = Field(
        None,
        gt=0.0,
        le=1.0,
        description="Top-Ratio's ratio; None: the dataset's mean |HARD|/n, set at run creation",
    )
    removal: Literal["delete", "underscore"] = Field(
        "delete", description="how removed words go (§4.3): deleted, or each replaced by _"
    )
    random_seeds: int = Field(100, ge=0, le=1000, description="RANDOM baseline masks (§6.2)")
    gold: Literal["hard", "union"] = Field("hard", description="gold of the hard metrics (§5)")
    spans: Literal["runs", "tokens"] = Field(
        "runs",
        description="IoU-F1's predicted spans (§6.1): runs of consecutive tokens, or each "
        "token its own span (HateXplain's own evaluation)",
    )
    max_new_tokens: int = Field(64, ge=1, le=4096, description="cap of a prompted answer")


class JudgeSettings(BaseModel):
    """How the judge suite rates explanations (spec ``JUDGE.md`` §3–§4)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt: JudgeVariant = Field(
        "verbatim",
        description="the Default instructions, the human guidelines verbatim (§3), or one of "
        "the invariance wordings of §5.5 (nonsense, shuffled, paraphrased, verbose, repeated, "
        "swapped)",
    )
    mode: Literal["constrained", "free"] = Field(
        "constrained",
        description="constrained: each criterion's label by its labels' teacher-forced "
        "log-probabilities, slot by slot (§4.3); free: a greedy answer, parsed (§4.2)",
    )
    calls: Literal["compound", "single"] = Field(
        "compound",
        description="compound: all eight criteria in one answer (the paper's setting); "
        "single: one call per criterion, its prompt carrying only that criterion (§1, §3; "
        "default and verbatim prompts)",
    )
    max_new_tokens: int = Field(96, ge=8, le=4096, description="cap of a free answer")

    @model_validator(mode="after")
    def _single_calls_have_one_criterion_prompts(self) -> JudgeSettings:
        if self.calls == "single" and self.prompt not in ("default", "verbatim"):
            raise ValueError(
                f"single-criterion calls use the default or verbatim prompt, not {self.prompt}"
            )
        return self


class RunConfig(BaseModel):
    """Everything that decides what a run computes; stored with the run as JSON."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: ModelSettings = ModelSettings()
    decoding: DecodingSettings = DecodingSettings()
    similarity: SimilaritySettings = SimilaritySettings()
    weights: MetricWeights = MetricWeights()
    dataset_id: str = "builtin-sample"
    limit: int | None = Field(None, ge=1)
    prompting: Prompting = "explicit"
    stages: tuple[str, ...] = STAGE_NAMES
    parse_rules: Rules = "reference"
    rationales: RationaleSettings = RationaleSettings()
    judge: JudgeSettings = JudgeSettings()
    suites: tuple[str, ...] = Field(
        ("haf",),
        description="the evaluation suites run on every instance (a run stored "
        "before suites existed is HAF only)",
    )

    @field_validator("suites")
    @classmethod
    def _some_suite(cls, suites: tuple[str, ...]) -> tuple[str, ...]:
        if not suites:
            raise ValueError("pick at least one suite")
        return tuple(dict.fromkeys(suites))

    @field_validator("stages")
    @classmethod
    def _known_stages(cls, stages: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [s for s in stages if s not in STAGE_NAMES]
        if unknown:
            raise ValueError(f"unknown stage(s) {unknown}: choose from {list(STAGE_NAMES)}")
        if "justify" not in stages:
            raise ValueError("the justify stage is required: every other stage builds on it")
        return tuple(s for s in STAGE_NAMES if s in stages)
