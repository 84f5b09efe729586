"""A server killed in the middle of ``haf run`` (issue 16): the run goes on on the other
server, or, with none left, stops in one line and resumes on another, storing each generation
once. Real servers (`haf serve`, tests/support/servers.py); the kill is real too: a
server process is killed after it has answered a few requests of the run."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from haf_tui.inference.server_pool import ServerPool
from tests.support.servers import running_server, start_server, stop

pytestmark = pytest.mark.real_model
RUN_ARGS = ["run", "--dataset", "sample", "--limit", "2", "--max-new-tokens", "16"]
RUN_ARGS += ["--stages", "justify,internal", "--suites", "haf,classify"]  # classify: many requests


@pytest.fixture(scope="module")
def healthy_server() -> Iterator[str]:
    with running_server() as (_, url):
        yield url


class KillAfter:
    """Wraps the pool's request so that the victim server is killed once it has answered
    ``answers`` requests; counts each server's answers before and after the kill."""

    def __init__(self, victim: subprocess.Popen[bytes], victim_url: str, answers: int):
        self.victim, self.victim_url, self.answers = victim, victim_url, answers
        self.before: dict[str, int] = {}
        self.after: dict[str, int] = {}
        self.post = ServerPool._post

    def as_method(self) -> Any:
        """The pool's ``_post`` with the kill (a function: bound to the pool it runs in)."""

        async def post(pool: Any, client: Any, live: Any, body: dict[str, Any]) -> Any:
            return await self(pool, client, live, body)

        return post

    @property
    def killed(self) -> bool:
        return self.victim.poll() is not None

    async def __call__(self, pool: Any, client: Any, live: Any, body: dict[str, Any]) -> Any:
        answer = await self.post(pool, client, live, body)
        if isinstance(answer, dict):
            tally = self.after if self.killed else self.before
            tally[live.endpoint.url] = tally.get(live.endpoint.url, 0) + 1
            victim_done = self.before.get(self.victim_url, 0) >= self.answers
            if live.endpoint.url == self.victim_url and victim_done and not self.killed:
                self.victim.kill()
                self.victim.wait()
        return answer


def _stored(db: Path) -> tuple[str, str, int, int, int]:
    from haf_tui.store import open_store

    with open_store(db, read_only=True) as store:
        ((run_id, status),) = store.query("SELECT run_id, status FROM runs")[1]
        ((rows, keys),) = store.query(
            "SELECT count(*), count(DISTINCT (instance_id, stage, sub_index)) FROM generations"
        )[1]
        ((finished,),) = store.query("SELECT count(*) FROM instance_results")[1]
    return run_id, status, rows, keys, finished


def test_a_server_killed_mid_run_leaves_its_work_to_the_other(
    healthy_server: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from haf_tui.cli import main

    victim, victim_url = start_server()
    try:
        killer = KillAfter(victim, victim_url, answers=3)
        monkeypatch.setattr(ServerPool, "_post", killer.as_method())
        db = tmp_path / "haf.duckdb"
        argv = ["--db", str(db), *RUN_ARGS, "--server", f"{victim_url}#2"]
        argv += ["--server", f"{healthy_server}#2"]
        assert main(argv) == 0, capsys.readouterr().err
    finally:
        stop(victim)
    assert killer.killed and killer.before[victim_url] == 3
    assert killer.after.get(healthy_server, 0) > 0  # the run went on after the kill
    assert victim_url not in killer.after
    _, status, rows, keys, finished = _stored(db)
    assert status == "finished" and finished == 2
    assert rows == keys  # nothing stored twice


def test_with_no_server_left_the_run_stops_and_resumes_on_another(
    healthy_server: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from haf_tui.cli import main

    db = tmp_path / "haf.duckdb"
    victim, victim_url = start_server()
    try:
        killer = KillAfter(victim, victim_url, answers=3)
        monkeypatch.setattr(ServerPool, "_post", killer.as_method())
        assert main(["--db", str(db), *RUN_ARGS, "--server", f"{victim_url}#1"]) == 2
    finally:
        stop(victim)
    error = capsys.readouterr().err
    assert "no server is left" in error and len(error.strip().splitlines()) == 1
    run_id, status, rows_before, keys_before, _ = _stored(db)
    assert status != "finished" and rows_before == keys_before >= 1

    monkeypatch.undo()
    argv = ["--db", str(db), "run", "--resume", run_id, "--server", f"{healthy_server}#2"]
    assert main(argv) == 0, capsys.readouterr().err
    _, status, rows, keys, finished = _stored(db)
    assert status == "finished" and finished == 2
    assert rows == keys > rows_before  # resumed: the stored ones kept, none twice
