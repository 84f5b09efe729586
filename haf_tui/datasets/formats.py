"""A method's own dataset format (``Method.dataset_formats``: the judge's ACORN ratings, a
plug-in's file kind): a file read by that method's code, named in ``haf run --dataset NAME
--file PATH`` and ``haf datasets import NAME --file PATH``, or recognised by its shape. The
datasets layer sits below the methods, so it never asks them: whoever reads a dataset (the
pipeline, the command line) hands the formats over, as the method registry gives them."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from haf_tui.datasets.model import Dataset, DatasetError
from haf_tui.datasets.validation import DEFAULT_MAX_CHARS
from haf_tui.vocabulary import HafError, first_line

if TYPE_CHECKING:
    from haf_tui.store import Store


class FormatLoader(Protocol):
    """Read a dataset of the format from ``paths`` (a file, or a folder holding it)."""

    def __call__(
        self,
        paths: Sequence[Path],
        *,
        name: str | None = None,
        encoding: str | None = None,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> Dataset: ...


@dataclass(frozen=True)
class DatasetFormat:
    """A dataset format a method reads: ``name`` (as ``--dataset`` names it; case ignored),
    ``description`` (one line), ``load`` (one :class:`DatasetError` line on a bad file),
    ``recognises`` (whether a file is of the format whatever the name says; None: only by
    name), ``without_file``: the line to say when the name comes without ``--file``, and
    ``aliases``: other names for it (spaces, ``_`` and ``-`` ignored in all of them)."""

    name: str
    description: str
    load: FormatLoader
    recognises: Callable[[Path], bool] | None = None
    without_file: str = ""
    aliases: tuple[str, ...] = ()

    def named(self, name: str) -> bool:
        """Whether ``name`` (a ``--dataset`` value) names this format."""
        return _folded(name) in {_folded(n) for n in (self.name, *self.aliases)}

    def read(
        self,
        paths: Sequence[Path],
        *,
        name: str | None = None,
        encoding: str | None = None,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> Dataset:
        """:attr:`load`, whatever it raises made one line naming the format."""
        if not paths:
            raise DatasetError(
                self.without_file
                or f"{self.name} is read from its file: haf datasets import {self.name} --file PATH"
            )
        try:
            return self.load(paths, name=name, encoding=encoding, max_chars=max_chars)
        except HafError:
            raise
        except Exception as error:  # a plug-in's own bug: one line naming the format
            raise DatasetError(
                f"dataset format {self.name!r} could not read {paths[0]}: "
                f"{type(error).__name__}: {first_line(error)}"
            ) from error

    def shapes(self, path: Path) -> bool:
        """Whether ``path`` is a file of this format (False when it cannot tell)."""
        if self.recognises is None or not path.is_file():
            return False
        try:
            return bool(self.recognises(path))
        except Exception:  # (a plug-in's check that fails: not its file)
            return False


def _folded(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name).casefold()


def format_for(
    formats: Sequence[DatasetFormat], name: str, path: str | Path | None
) -> DatasetFormat | None:
    """The format ``name`` names, else (with a file) the first that recognises ``path``."""
    named = next((f for f in formats if f.named(name)), None)
    if named is not None or path is None:
        return named
    return next((f for f in formats if f.shapes(Path(path).expanduser())), None)


class RunDatasetLoader(Protocol):
    """Make the dataset of stored run ``run_id``'s answers (one :class:`DatasetError` line when
    there is no such run or nothing of it to read); ``seed``: the run's sampling seed."""

    def __call__(self, store: Store, run_id: str, *, seed: int) -> Dataset: ...


@dataclass(frozen=True)
class RunDataset:
    """A dataset a method makes of a stored run's answers (``Method.run_datasets``: the judge's
    ``run:ID``, a run's explanations to judge), named ``PREFIX:RUN_ID`` in ``haf run --dataset``;
    ``description``: what it holds, a few words for the list of known datasets."""

    prefix: str
    description: str
    load: RunDatasetLoader
