"""Fetching a paper dataset's files from the Hugging Face Hub, through its local cache.

The files land in huggingface-hub's cache (``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
``~/.cache/huggingface/hub``), laid out as the Hub lays them out
(``datasets--ORG--NAME/snapshots/REVISION/...``), so a cache filled elsewhere (``hf download``)
works here too. Offline (``HF_HUB_OFFLINE``, or ``offline=True``) only that cache is read, and a
dataset missing from it fails at once with one line that says what to download and how to
point ``--file`` at it.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from haf_tui.datasets.model import DatasetError
from haf_tui.defaults import env_flag


@dataclass(frozen=True)
class HubSource:
    """Where a dataset lives on the Hub: repository, pinned revision, and the files used."""

    repo_id: str
    revision: str
    patterns: tuple[str, ...]
    gated: bool = False

    def download_command(self) -> str:
        """The ``hf download`` command that fills the cache with what is needed."""
        include = " ".join(f"--include '{p}'" for p in self.patterns)
        return (
            f"hf download {self.repo_id} --repo-type dataset --revision {self.revision} {include}"
        )


def hub_offline() -> bool:
    """Whether huggingface-hub is told to stay offline (``HF_HUB_OFFLINE``)."""
    if env_flag("HF_HUB_OFFLINE"):
        return True
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def hub_cache_dir() -> Path:
    """The huggingface-hub cache read and filled: ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``,
    else huggingface-hub's default."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def matching_files(folder: Path, patterns: tuple[str, ...]) -> list[Path]:
    """The files under ``folder`` matching any of ``patterns`` (Hub globs), sorted by path."""
    found: dict[str, Path] = {}
    for path in folder.rglob("*"):
        relative = path.relative_to(folder).as_posix()
        if path.is_file() and any(fnmatch.fnmatch(relative, p) for p in patterns):
            found[relative] = path
    return [found[k] for k in sorted(found)]


def missing_message(
    title: str, key: str, source: HubSource, cache: Path, why: str, *, file_hint: str = ""
) -> str:
    """One line: the dataset is not cached, why, what to download, and the --file way."""
    hint = f" ({file_hint})" if file_hint else ""
    return (
        f"{title} ({source.repo_id} at revision {source.revision}) is not in the Hugging Face "
        f"cache {cache} and {why}: download it where the Hub is reachable "
        f"(`{source.download_command()}`) and copy that cache here or set HF_HUB_CACHE to it, "
        f"or point --file at the downloaded files{hint}: "
        f"`haf datasets import {key} --file PATH`"
    )


def fetch(
    title: str,
    key: str,
    source: HubSource,
    *,
    cache_dir: str | Path | None = None,
    offline: bool | None = None,
    file_hint: str = "",
    tqdm_class: Any = None,
) -> list[Path]:
    """The local paths of a dataset's files, downloaded into the cache when online
    (``tqdm_class``: huggingface-hub's progress bars, e.g. to report or cancel a download)."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        IncompleteSnapshotError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    cache = Path(cache_dir).expanduser() if cache_dir else hub_cache_dir()
    local_only = hub_offline() if offline is None else offline
    why = "the Hub is offline (HF_HUB_OFFLINE)" if local_only else "the Hub could not be reached"
    try:
        folder = snapshot_download(
            source.repo_id,
            repo_type="dataset",
            revision=source.revision,
            cache_dir=cache,
            allow_patterns=list(source.patterns),
            local_files_only=local_only,
            tqdm_class=tqdm_class,
        )
    except GatedRepoError as exc:
        raise DatasetError(
            f"{title} ({source.repo_id}) is gated: accept its terms on huggingface.co and log in "
            f"(`hf auth login`), or point --file at its files: `haf datasets import {key} --file "
            "PATH`"
        ) from exc
    except (RepositoryNotFoundError, RevisionNotFoundError) as exc:
        raise DatasetError(
            f"{title}: {source.repo_id} at revision {source.revision} is not on the Hub "
            f"({type(exc).__name__}); point --file at its files instead"
        ) from exc
    except (LocalEntryNotFoundError, IncompleteSnapshotError) as exc:
        raise DatasetError(
            missing_message(title, key, source, cache, why, file_hint=file_hint)
        ) from exc
    except HfHubHTTPError as exc:
        raise DatasetError(
            missing_message(title, key, source, cache, f"the Hub answered {exc}".splitlines()[0])
        ) from exc
    files = matching_files(Path(folder), source.patterns)
    if not files:
        raise DatasetError(missing_message(title, key, source, cache, why, file_hint=file_hint))
    return files
