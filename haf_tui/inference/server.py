"""Inference servers a run may use instead of llama.cpp in process (issue 16, first part):
which server an endpoint is, and whether its log-probabilities are the raw ones.

HAF's metrics read each sampled token's log-probability under the model's *raw* distribution.
A server that reports probabilities after its sampler chain (temperature, top-p, top-k:
llama-server with ``post_sampling_probs``, vLLM with ``--logprobs-mode processed_logprobs``)
would change every number silently, so an endpoint is probed before use: the same prompt's
first-token top log-probabilities are asked for at two temperatures; raw ones do not depend
on the temperature, processed ones do. A server that fails the probe is refused with one line
saying which flag to set.

llama-server (llama.cpp's own, issue 37) returns ``logprobs: {"content": [...]}``, one entry
per token with its id and bytes (read by :mod:`.server_content`); the probe keys its top-k by
id there.

Known here (llama-cpp-python 0.3.36's own server, ``python -m llama_cpp.server``): it returns
raw ``token_logprobs`` and ``top_logprobs`` (keyed by token text) on ``/v1/completions``; its
``echo`` log-probabilities of prompt tokens are read one position late (each token scored by
the row that follows it), so teacher-forced scoring cannot use them."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import httpx

from haf_tui.config import DecodingSettings
from haf_tui.defaults import API_KEY_VARIABLE
from haf_tui.inference.base import InferenceError
from haf_tui.inference.server_http import (
    START_BOUNDS,
    Bounds,
    OverBoundError,
    fetch_json,
)

DEFAULT_CONCURRENCY: Final = 4
"""Requests in flight on an endpoint unless its ``URL#N`` says otherwise."""
PROBE_PROMPT: Final = "The capital of France is"
PROBE_TEMPERATURES: Final = (1.0, 0.25)
PROBE_TOP_K: Final = 5
RAW_TOLERANCE: Final = 1e-3
"""Raw top log-probabilities at the two temperatures agree within this."""
FLAGS: Final[dict[str, str]] = {
    "llama-server": "use a llama-server that honours post_sampling_probs=false (its default)",
    "vllm": "start vLLM with --logprobs-mode raw_logprobs",
    "llama-cpp-python": "llama-cpp-python's server always returns raw log-probabilities",
}
"""What makes each kind of server return raw log-probabilities."""


class ServerError(InferenceError):
    """An endpoint that cannot serve a run: unreachable, not OpenAI-compatible, or returning
    processed log-probabilities."""


@dataclass(frozen=True)
class ServerInfo:
    """Who answers at ``url``: ``kind`` (llama-cpp-python, llama-server, vllm or
    openai-compatible), its version where it says, and the model it serves."""

    url: str
    kind: str
    version: str
    model: str

    def as_record(self) -> dict[str, str]:
        """What a run stores about the server."""
        return {"url": self.url, "kind": self.kind, "version": self.version, "model": self.model}


def server_base_url(url: str) -> str:
    """The base URL the tool adds ``/v1/...`` paths to: ``url`` without trailing slashes or
    a trailing ``/v1`` (vLLM's documentation gives ``http://host:8000/v1``; both forms name
    the same server)."""
    base = url.strip().rstrip("/")
    if base.endswith("/v1"):
        base = base.removesuffix("/v1").rstrip("/")
    return base


def _get(url: str, bounds: Bounds) -> Any | None:
    """A GET's JSON answer, or None (no answer, not 200, not JSON, or over its bounds)."""
    try:
        status, answer = fetch_json("GET", url, bounds)
    except (httpx.HTTPError, OverBoundError):
        return None
    return answer if status == 200 else None


def server_kind(models: Mapping[str, Any], version: Any | None, props: Any | None) -> str:
    """The kind of server from its ``/v1/models`` answer, ``/version`` and ``/props``."""
    owners = {str(m.get("owned_by", "")) for m in models.get("data", []) if isinstance(m, dict)}
    if "vllm" in owners:
        return "vllm"
    if "llamacpp" in owners or (isinstance(props, dict) and "default_generation_settings" in props):
        return "llama-server"
    if "me" in owners:
        return "llama-cpp-python"
    if isinstance(version, dict) and "version" in version:
        return "vllm"
    return "openai-compatible"


def served_model(models: Any) -> str:
    """The model a ``/v1/models`` answer names first (``{"data": [{"id": ...}, ...]}``);
    a :class:`ServerError` naming the shape otherwise."""
    data = models.get("data") if isinstance(models, dict) else None
    first = data[0] if isinstance(data, list) and data else None
    model = first.get("id") if isinstance(first, dict) else None
    if not isinstance(model, str) or not model:
        shown = json.dumps(models)[:80] if models is not None else "no JSON"
        raise ServerError(
            f"a /v1/models answer of another shape ({shown}): an OpenAI-compatible server "
            'answers {"data": [{"id": MODEL, ...}]}'
        )
    return model


def same_model(first: str, second: str) -> bool:
    """Whether two model names a server gives name the same model: the same last path part
    (two ``haf serve`` of one GGUF from different folders)."""
    return model_name(first) == model_name(second)


def model_name(model: str) -> str:
    """A served model's name without the folders before it."""
    return model.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def identify_server(url: str, bounds: Bounds = START_BOUNDS) -> ServerInfo:
    """Ask ``url`` who it is, each request within ``bounds``; a one-line
    :class:`ServerError` when it does not answer as an OpenAI-compatible server."""
    base = server_base_url(url)
    try:
        status, models = fetch_json("GET", f"{base}/v1/models", bounds)
    except OverBoundError as exc:
        raise ServerError(f"{base}: /v1/models {exc}") from exc
    except httpx.HTTPError:
        status, models = 0, None
    if status in (401, 403):
        raise ServerError(
            f"{base}: /v1/models answered {status}: the server wants an API key; set "
            f"{API_KEY_VARIABLE}=KEY (sent as 'Authorization: Bearer KEY')"
        )
    if status != 200 or models is None:
        raise ServerError(f"{base}: no OpenAI-compatible /v1/models answer (is a server there?)")
    try:
        model = served_model(models)
    except ServerError as exc:
        raise ServerError(f"{base}: {exc}") from exc
    version = _get(f"{base}/version", bounds)
    props = _get(f"{base}/props", bounds)
    kind = server_kind(models, version, props)
    found = ""
    if isinstance(version, dict):
        found = str(version.get("version", ""))
    elif isinstance(props, dict):
        found = str(props.get("build_info", ""))
    if kind == "llama-cpp-python" and not found:
        from importlib import metadata

        try:  # the server answers from this very package (loopback) or a twin of it
            found = f"client-side {metadata.version('llama-cpp-python')}"
        except metadata.PackageNotFoundError:
            found = ""
    return ServerInfo(base, kind, found or "unknown", model)


def first_top_logprobs(
    url: str, temperature: float, bounds: Bounds = START_BOUNDS
) -> dict[str, float]:
    """The top log-probabilities of the first generated token of :data:`PROBE_PROMPT`."""
    body = {
        "prompt": PROBE_PROMPT,
        "max_tokens": 1,
        "temperature": temperature,
        "top_p": 1.0,
        "seed": 0,
        "logprobs": PROBE_TOP_K,
        "n_probs": PROBE_TOP_K,
        "post_sampling_probs": False,
    }
    try:
        status, answer = fetch_json(
            "POST", f"{server_base_url(url)}/v1/completions", bounds, body=body
        )
    except (httpx.HTTPError, OverBoundError) as exc:
        raise ServerError(f"{url}: /v1/completions failed: {exc}") from exc
    if status != 200:
        raise ServerError(f"{url}: /v1/completions answered {status}")
    try:
        logprobs = answer["choices"][0]["logprobs"]
        if "content" in logprobs:  # llama-server: a list by token id (several share a text)
            listed = logprobs["content"][0]["top_logprobs"]
            return {f"#{int(t['id'])}": float(t["logprob"]) for t in listed[:PROBE_TOP_K]}
        top = logprobs["top_logprobs"][0]
        return {str(token): float(value) for token, value in top.items()}
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ServerError(f"{url}: /v1/completions returned no top_logprobs") from exc


def logprobs_are_raw(first: Mapping[str, float], second: Mapping[str, float]) -> bool:
    """Whether two temperatures' top log-probabilities agree (raw) on the tokens both list."""
    shared = [t for t in first if t in second]
    if not shared:
        return False
    finite = [t for t in shared if math.isfinite(first[t]) and math.isfinite(second[t])]
    return bool(finite) and all(abs(first[t] - second[t]) <= RAW_TOLERANCE for t in finite)


def check_raw_logprobs(info: ServerInfo, bounds: Bounds = START_BOUNDS) -> None:
    """Refuse (one-line :class:`ServerError`) a server whose log-probabilities depend on the
    sampling temperature: processed, not raw."""
    tops = [first_top_logprobs(info.url, t, bounds) for t in PROBE_TEMPERATURES]
    if not logprobs_are_raw(*tops):
        flag = FLAGS.get(info.kind, "make the server return raw (pre-sampling) log-probabilities")
        raise ServerError(
            f"{info.url} ({info.kind}) returns processed log-probabilities (they change with "
            f"the temperature): {flag}"
        )


@dataclass(frozen=True)
class Endpoint:
    """A server's base URL and how many requests it takes at once."""

    url: str
    concurrency: int = DEFAULT_CONCURRENCY


def parse_endpoint(spec: str) -> Endpoint:
    """``URL`` or ``URL#N`` (N requests in flight there), with or without ``/v1`` at the
    end; a one-line error otherwise."""
    url, _, count = spec.strip().partition("#")
    if not url.startswith(("http://", "https://")):
        raise ServerError(f"not a server URL: {spec!r} (http://HOST:PORT or http://HOST:PORT#N)")
    try:
        concurrency = int(count) if count else DEFAULT_CONCURRENCY
    except ValueError as exc:
        raise ServerError(f"{spec!r}: the number after # is how many requests at once") from exc
    if concurrency < 1:
        raise ServerError(f"{spec!r}: at least one request at once")
    return Endpoint(server_base_url(url), concurrency)


def completion_body(prompt: str, settings: DecodingSettings, max_new: int) -> dict[str, Any]:
    """The ``/v1/completions`` request of one generation: the in-process sampler's settings
    (no penalties, no min-p or typical-p) and raw log-probabilities asked for in the three
    dialects (OpenAI's ``logprobs``, llama-server's ``n_probs`` and ``post_sampling_probs``)."""
    top = max(1, settings.top_logprobs)
    return {
        "prompt": prompt,
        "max_tokens": max_new,
        "temperature": settings.temperature,
        "top_p": settings.top_p,
        "top_k": settings.top_k,
        "seed": settings.seed,
        # the in-process sampler's neutral settings (llama-cpp-python's server would
        # otherwise apply repeat_penalty 1.1 and min_p 0.05 by default)
        "min_p": 0.0,
        "typical_p": 1.0,
        "repeat_penalty": 1.0,
        "presence_penalty": 0.0,
        "frequency_penalty": 0.0,
        "logprobs": top,
        "n_probs": top,
        "post_sampling_probs": False,
        "stream": False,
    }
