"""Opening a GGUF with llama-cpp-python: llama.cpp's log lines kept in memory instead of on
stderr, llama-cpp-python's own messages not shown, its extra buffer types off unless asked for,
and a load failure as one line.

Models are loaded with ``verbose=True``. At ``verbose=False`` llama-cpp-python silences a load
(``suppress_stdout_stderr``) by pointing file descriptors 1 and 2 and ``sys.stdout`` and
``sys.stderr`` at /dev/null for the whole process while it lasts: whatever another thread
printed meanwhile was lost (a campaign lane's line, a workbench frame Textual wrote while a
worker loaded a model). At ``verbose=True`` nothing is redirected; llama.cpp's own lines go to
the log collector (:func:`recent_llama_log`), and llama-cpp-python's Python messages (the
system info, the metadata, the chat format it guessed, its cache and state notes) go to
:func:`_unshown_print` instead of stderr (:func:`quiet_llama_cpp`)."""

from __future__ import annotations

import ctypes
import sys
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
        if level in (3, 4):  # GGML_LOG_LEVEL_WARN, GGML_LOG_LEVEL_ERROR (ggml's: INFO is 2)
            _LLAMA_LOG.append(text.decode("utf-8", errors="replace").strip())

    _LOG_CALLBACK = _collect  # keep a reference: llama.cpp calls it later
    llama_cpp.llama_log_set(_collect, ctypes.c_void_p(0))


LLAMA_CPP_MODULES_THAT_PRINT = (
    "llama_cpp.llama",
    "llama_cpp.llama_chat_format",
    "llama_cpp.server.model",
)
"""llama-cpp-python's modules with ``print`` calls under ``if self.verbose`` (or
``llama.verbose``, ``settings.verbose``): at ``verbose=True`` they would reach stderr or stdout.
``tests/test_llama_load_quiet.py`` reads the installed package for any other."""


def _unshown_print(*values: object, **options: object) -> None:
    """Stands for ``print`` in :data:`LLAMA_CPP_MODULES_THAT_PRINT`: their messages are
    llama-cpp-python's diagnostics, not haf's, and are not shown."""


def quiet_llama_cpp() -> None:
    """llama.cpp's log lines kept in memory and llama-cpp-python's own messages not shown,
    so that a model loaded with ``verbose=True`` (no descriptor redirected) prints nothing.
    Call it before a load, after importing the modules that load (the server's model module
    is quieted once imported); safe to call again."""
    import llama_cpp

    _quiet_llama_logs(llama_cpp.llama_cpp)
    for name in LLAMA_CPP_MODULES_THAT_PRINT:
        module = sys.modules.get(name)
        if module is not None:
            module.print = _unshown_print  # type: ignore[attr-defined]  # (shadows the builtin)


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
    llama.cpp's last error line (one that says "error", e.g. "unknown model architecture",
    before the "failed to load model" after it), else its last warning or error line."""
    if "llama_context" in str(exc):
        trained = (
            f" (the model was trained with {info.context_length})" if info.context_length else ""
        )
        return InferenceError(
            f"the context of {n_ctx} tokens does not fit in memory: lower --n-ctx{trained}"
        )
    said = [line for line in log if line]
    named = [line for line in said if "error" in line.lower()]
    detail = (named or said or [str(exc)])[-1]
    return InferenceError(f"llama.cpp could not load {info.path}: {detail}")


def open_llama(model_path: str | Path, *, extra_buffers: bool = False, **kwargs: Any) -> Any:
    """``llama_cpp.Llama(model_path, **kwargs)`` with llama.cpp's ``use_extra_bufts`` set
    (off unless asked for: :func:`extra_buffer_types`), loaded with ``verbose=True`` and
    quiet (:func:`quiet_llama_cpp`; ``kwargs`` cannot name ``verbose``)."""
    import llama_cpp

    quiet_llama_cpp()
    with extra_buffer_types(extra_buffers):
        return llama_cpp.Llama(model_path=str(model_path), verbose=True, **kwargs)


def gpu_offload_supported() -> bool:
    """Whether the installed llama.cpp was built with GPU offload (no model loaded)."""
    import llama_cpp

    return bool(llama_cpp.llama_supports_gpu_offload())
