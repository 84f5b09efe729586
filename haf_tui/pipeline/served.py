"""Which model serves a resumed run (issue 33 §3): the GGUF it loads is the run's own file
(its sha256 is the one the run stored), the servers serve the model the run was served
(``/v1/models``, compared by name without folders), and servers that did not serve it before
are recorded beside those that did."""

from __future__ import annotations

from haf_tui.inference.backend import Backend
from haf_tui.inference.server import same_model
from haf_tui.pipeline.models import file_sha256
from haf_tui.store import Store
from haf_tui.store.records import RunRecord
from haf_tui.store.run_versions import add_run_versions
from haf_tui.vocabulary import HafError

SERVER_ENTRY = "server "
"""How a run's ``versions`` name the servers that served it (``server 1``, ...)."""


class ServedModelError(HafError):
    """A resume on another model than the run's."""


def recorded_server_models(record: RunRecord) -> list[str]:
    """The models the servers of a run served, as its ``versions`` say
    (``KIND VERSION · MODEL · URL``)."""
    models = []
    for key, value in record.versions.items():
        parts = value.split(" · ")
        if key.startswith(SERVER_ENTRY) and len(parts) >= 3:
            models.append(" · ".join(parts[1:-1]))
    return models


def check_resumed_model(record: RunRecord, backend: Backend) -> None:
    """Refuse (one line) resuming ``record`` with another GGUF than its own, or on servers
    that serve another model than the ones that served it."""
    if record.model_sha256:
        found = file_sha256(backend.info.path)
        if found != record.model_sha256:
            raise ServedModelError(
                f"run {record.run_id} was made with {record.model_file} (sha256 "
                f"{record.model_sha256[:12]}…); {backend.info.path} is another file (sha256 "
                f"{found[:12]}…): resume it with the run's own model file"
            )
    recorded = recorded_server_models(record)
    if not recorded:
        return
    for server in backend.servers():
        if not any(same_model(server.model, model) for model in recorded):
            raise ServedModelError(
                f"{server.url} serves {server.model!r}, but run {record.run_id} was served "
                f"{', '.join(repr(m) for m in sorted(set(recorded)))}: resume it on a server "
                "of the run's model"
            )


def record_servers(store: Store, record: RunRecord, backend: Backend) -> None:
    """Add to the run's ``versions`` the servers of this resume it does not list yet."""
    known = set(record.versions.values())
    taken = {key for key in record.versions if key.startswith(SERVER_ENTRY)}
    added: dict[str, str] = {}
    number = len(taken)
    for value in backend.versions().values():
        if value in known:
            continue
        number += 1
        while f"{SERVER_ENTRY}{number}" in taken:
            number += 1
        added[f"{SERVER_ENTRY}{number}"] = value
        known.add(value)
    add_run_versions(store, record.run_id, added)
