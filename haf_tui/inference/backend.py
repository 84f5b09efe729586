"""The one interface the pipeline and the faces see of a generation backend.

A backend must generate; every other capability is a method with a default, which a backend
overrides where it can do more (after Inspect AI's ``ModelAPI``):

- ``score``: teacher-forced replies (default: refused with one line);
- ``concurrent``: an engine generating several requests at once (default: none, one at a time;
  ``engine`` picks what serves a run);
- ``tokens_needed``: the context a prompt takes (default: unknown, so not checked);
- ``servers`` and ``versions``: who generates, for the run's record (default: nobody else);
- ``close``: free what it holds now (default: nothing to free);
- where the model runs (``offload_supported``, ``n_gpu_layers``, ``offload_active``: default
  no GPU here).

Backends are registered by name in :mod:`haf_tui.inference.registry`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

from haf_tui.inference.base import ConcurrentBackend, InferenceError, RequestSource, TokenCallback

if TYPE_CHECKING:
    from haf_tui.config import DecodingSettings
    from haf_tui.inference.base import Generation
    from haf_tui.inference.gguf import GGUFInfo
    from haf_tui.inference.server import ServerInfo
    from haf_tui.messages import ChatMessage


class Backend(ABC):
    """A generation backend: tokens with raw log-probabilities, and what a run records of it."""

    name: str
    """How the backend is shown (the model file, and where it runs)."""
    info: GGUFInfo
    """The GGUF the model comes from: its file identifies the run's model."""
    chat_format: str
    """The chat format prompts are rendered in."""
    n_ctx: int
    """The context, in tokens, a prompt and its reply share."""
    offload_supported: bool = False
    """Whether the backend could put layers on a GPU here."""
    n_gpu_layers: int = 0
    """Layers asked for on the GPU (-1: all)."""

    @abstractmethod
    def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
    ) -> Generation:
        """Sample a reply to ``messages``; ``on_token`` sees each token as it comes."""

    def score(
        self,
        messages: Sequence[ChatMessage],
        forced: str,
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
        reply_prefix: str = "",
    ) -> Generation:
        """The raw logprobs of ``forced`` teacher-forced as the start of the reply, after
        ``reply_prefix`` (default: this backend cannot, one line says so)."""
        raise InferenceError(f"the {type(self).__name__} backend cannot score forced replies")

    def concurrent(self, n_parallel: int) -> ConcurrentBackend | None:
        """An engine generating up to ``n_parallel`` requests at once, or None (the default):
        this backend generates one at a time."""
        return None

    def engine(self, n_parallel: int) -> ConcurrentBackend:
        """What serves a run's requests: the concurrent engine when more than one at a time is
        asked for and the backend has one, else one request after another."""
        engine = self.concurrent(n_parallel) if n_parallel > 1 else None
        return engine if engine is not None else OneAtATime(self)

    def tokens_needed(
        self, messages: Sequence[ChatMessage], replies: Sequence[str] = ()
    ) -> int | None:
        """Tokens the prompt of ``messages`` takes with the longest of ``replies`` forced after
        it; None (the default): this backend cannot count them, the context is not checked."""
        return None

    def servers(self) -> list[ServerInfo]:
        """The servers that generate for this backend (default: none, it runs here)."""
        return []

    def versions(self) -> dict[str, str]:
        """What the run records of who generates, as ``versions`` entries (default: each
        server's kind, version, model and URL)."""
        return {
            f"server {n}": f"{s.kind} {s.version} · {s.model} · {s.url}"
            for n, s in enumerate(self.servers(), start=1)
        }

    @property
    def offload_active(self) -> bool:
        """Whether layers really run on a GPU here (offload supported and layers asked for)."""
        return self.offload_supported and self.n_gpu_layers != 0

    def close(self) -> None:
        """Free the model and what it holds now (default: nothing to free)."""
        return None


class OneAtATime:
    """Serves a :class:`RequestSource` with a plain backend, one request after another."""

    n_parallel = 1

    def __init__(self, backend: Backend):
        self.backend = backend

    def serve(self, source: RequestSource) -> None:
        """Generate each request in turn."""
        while requests := source.take(1, wait=True):
            for request in requests:
                if request.forced is not None:
                    generation = self.backend.score(
                        request.messages,
                        request.forced,
                        request.settings,
                        on_token=request.on_token,
                        reply_prefix=request.reply_prefix,
                    )
                else:
                    generation = self.backend.generate(
                        request.messages, request.settings, on_token=request.on_token
                    )
                source.finished(request, generation)
