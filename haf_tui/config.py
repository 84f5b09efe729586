"""Configuration records shared by the CLI, the pipeline and (later) the TUI wizard."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_SIMILARITY_MODEL = "all-MiniLM-L6-v2"


class DecodingSettings(BaseModel):
    """Sampling settings of a generation (defaults: the paper's, spec section 1)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

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


class SimilaritySettings(BaseModel):
    """The semantic similarity model g."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = DEFAULT_SIMILARITY_MODEL
    kind: Literal["bi-encoder", "cross-encoder"] = "bi-encoder"
    device: str = "cpu"
