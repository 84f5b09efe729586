"""The GGUF models a user can pick: files found in the model folders (read from metadata only,
no weights loaded), the embedded default first, and downloads from the Hugging Face Hub."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from haf_tui.defaults import (
    EMBEDDED_MODEL_FILE,
    embedded_model_path,
    env_flag,
    model_search_dirs,
)
from haf_tui.inference.base import InferenceError
from haf_tui.inference.gguf import GGUFInfo, read_gguf_info

DownloadProgress = Callable[[int, int | None], None]
"""Called with (bytes done, bytes in all or None) while a file downloads."""


@dataclass(frozen=True)
class ModelEntry:
    """One GGUF file: its metadata, or why it cannot be read."""

    path: Path
    info: GGUFInfo | None
    error: str | None = None
    embedded: bool = False

    @property
    def label(self) -> str:
        """The file name, marked when it is the embedded default."""
        return f"{self.path.name} (embedded default)" if self.embedded else self.path.name


def _entry(path: Path, *, embedded: bool = False) -> ModelEntry:
    try:
        return ModelEntry(path, read_gguf_info(path), embedded=embedded)
    except InferenceError as exc:
        return ModelEntry(path, None, str(exc), embedded)


def discover_models(
    folders: list[Path] | None = None, *, embedded: bool = True
) -> list[ModelEntry]:
    """Every ``*.gguf`` in ``folders`` (default: :func:`model_search_dirs`), the embedded
    default first; unreadable files are listed with their error."""
    entries: list[ModelEntry] = []
    seen: set[Path] = set()
    if embedded:
        try:
            path = embedded_model_path()
        except Exception as exc:  # the package is missing or its chunks are broken
            entries.append(ModelEntry(Path(EMBEDDED_MODEL_FILE), None, str(exc), True))
        else:
            entries.append(_entry(path, embedded=True))
            seen.add(path.resolve())
    for folder in folders if folders is not None else model_search_dirs():
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.gguf")):
            if path.resolve() in seen:
                continue
            seen.add(path.resolve())
            entries.append(_entry(path))
    return entries


def hub_offline() -> bool:
    """Whether huggingface-hub is told to stay offline (``HF_HUB_OFFLINE``, or as it also
    reads, ``TRANSFORMERS_OFFLINE``)."""
    return env_flag("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


def hub_endpoint() -> str:
    """The Hub's address (``HF_ENDPOINT``, else huggingface.co)."""
    return os.environ.get("HF_ENDPOINT") or "https://huggingface.co"


def hub_reachable(endpoint_url: str | None = None, timeout: float = 3.0) -> bool:
    """Whether a TCP connection to the Hub's endpoint opens within ``timeout`` seconds
    (checked before a download, so that no network fails at once instead of after retries)."""
    endpoint = urlparse(endpoint_url or hub_endpoint())
    port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
    try:
        with socket.create_connection((endpoint.hostname or "", port), timeout=timeout):
            return True
    except OSError:
        return False


def _progress_class(callback: DownloadProgress) -> type[Any]:
    """A tqdm class that reports to ``callback`` instead of printing."""
    from tqdm.auto import tqdm  # type: ignore[import-untyped]

    class Progress(tqdm):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = False
            kwargs["file"] = open(os.devnull, "w")  # noqa: SIM115 - closed with the bar
            super().__init__(*args, **kwargs)
            callback(int(self.n), int(self.total) if self.total else None)

        def update(self, n: float | None = 1) -> bool | None:
            shown: bool | None = super().update(n)
            callback(int(self.n), int(self.total) if self.total else None)
            return shown

        def close(self) -> None:
            handle = self.fp
            super().close()
            handle.close()

    return Progress


def download_model(
    repo_id: str,
    filename: str,
    target_dir: Path,
    *,
    revision: str | None = None,
    progress: DownloadProgress | None = None,
    endpoint: str | None = None,
) -> Path:
    """Download ``filename`` of the Hub repository ``repo_id`` into ``target_dir``.

    Offline (``HF_HUB_OFFLINE``) or without a network it fails at once with one line that says
    what to fetch and where to put it.
    """
    repo_id, filename = repo_id.strip(), filename.strip()
    if not repo_id or "/" not in repo_id:
        raise InferenceError(f"repository {repo_id!r}: give it as owner/name")
    if not filename.endswith(".gguf"):
        raise InferenceError(f"file {filename!r}: pick a .gguf file of the repository")
    manual = (
        f"download {filename} from {endpoint or hub_endpoint()}/{repo_id} on a machine with "
        f"network and copy it into {target_dir}"
    )
    if hub_offline():
        raise InferenceError(f"offline (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set): {manual}")
    if not hub_reachable(endpoint):
        raise InferenceError(f"the Hub cannot be reached (no network?): {manual}")
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
    )

    target_dir.mkdir(parents=True, exist_ok=True)
    try:
        path = hf_hub_download(
            repo_id,
            filename,
            revision=revision,
            local_dir=target_dir,
            endpoint=endpoint,
            etag_timeout=5,
            tqdm_class=_progress_class(progress) if progress else None,
        )
    except LocalEntryNotFoundError:  # (a subclass of EntryNotFoundError: first)
        raise InferenceError(f"the Hub cannot be reached: {manual}") from None
    except RepositoryNotFoundError:
        raise InferenceError(f"no repository {repo_id} on the Hub (or it is private)") from None
    except EntryNotFoundError:
        raise InferenceError(f"{repo_id} has no file {filename}") from None
    except (HfHubHTTPError, OSError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InferenceError(f"download failed ({first}): {manual}") from None
    return Path(str(path))
