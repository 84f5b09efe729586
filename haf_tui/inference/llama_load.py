"""Opening a GGUF with llama-cpp-python: llama.cpp's log lines kept in memory instead of on
stderr, its extra buffer types off unless asked for, and a load failure as one line."""

from __future__ import annotations

import ctypes
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from haf_tui.inference.base import InferenceError
from haf_tui.inference.gguf import GGUFInfo

_LLAMA_LOG: deque[str] = deque(maxlen=50)
_LOG_CALLBACK: Any = None


def _quiet_llama_logs(llama_cpp: Any) -> None:
    """Keep llama.cpp's log lines (warnings and errors) in memory instead of on stderr."""
    global _LOG_CALLBACK
    if _LOG_CALLBACK is not None:
        return

    @llama_cpp.llama_log_callback  # type: ignore[untyped-decorator]
    def _collect(level: int, text: bytes, user_data: Any) -> None:
        if level in (2, 3):  # GGML_LOG_LEVEL_WARN, GGML_LOG_LEVEL_ERROR
            _LLAMA_LOG.append(text.decode("utf-8", errors="replace").strip())

    _LOG_CALLBACK = _collect  # keep a reference: llama.cpp calls it later
    llama_cpp.llama_log_set(_collect, ctypes.c_void_p(0))


def recent_llama_log() -> list[str]:
    """llama.cpp's latest warning and error lines (for diagnostics)."""
    return list(_LLAMA_LOG)


@contextmanager
def extra_buffer_types(enabled: bool) -> Iterator[None]:
    """Models loaded inside the block have llama.cpp's ``use_extra_bufts`` set to ``enabled``.

    Extra buffer types (weight repacking, AMX) crashed llama.cpp's first decode with a
    segmentation fault on this project's Xeon VMs (AMX present); they are off unless asked for.
    ``Llama`` does not expose the parameter, so its default-params call is wrapped meanwhile.
    """
    import llama_cpp

    c_api = llama_cpp.llama_cpp
    original = c_api.llama_model_default_params

    def patched() -> Any:
        params = original()
        params.use_extra_bufts = enabled
        return params

    c_api.llama_model_default_params = patched
    try:
        yield
    finally:
        c_api.llama_model_default_params = original


def load_error(
    exc: BaseException, info: GGUFInfo, n_ctx: int, log: Sequence[str]
) -> InferenceError:
    """One line for llama-cpp-python failing to open a model: a context it could not make
    (llama.cpp cannot allocate its memory) says what to lower; anything else gives
    llama.cpp's last warning or error line."""
    if "llama_context" in str(exc):
        trained = (
            f" (the model was trained with {info.context_length})" if info.context_length else ""
        )
        return InferenceError(
            f"the context of {n_ctx} tokens does not fit in memory: lower --n-ctx{trained}"
        )
    detail = next((line for line in reversed(log) if line), str(exc))
    return InferenceError(f"llama.cpp could not load {info.path}: {detail}")


def open_llama(model_path: str | Path, *, extra_buffers: bool = False, **kwargs: Any) -> Any:
    """``llama_cpp.Llama(model_path, **kwargs)`` with llama.cpp's ``use_extra_bufts`` set
    (off unless asked for: :func:`extra_buffer_types`)."""
    import llama_cpp

    _quiet_llama_logs(llama_cpp.llama_cpp)
    with extra_buffer_types(extra_buffers):
        return llama_cpp.Llama(model_path=str(model_path), **kwargs)


def gpu_offload_supported() -> bool:
    """Whether the installed llama.cpp was built with GPU offload (no model loaded)."""
    import llama_cpp

    return bool(llama_cpp.llama_supports_gpu_offload())
