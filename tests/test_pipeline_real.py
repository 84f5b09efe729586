"""The real pipeline on the embedded GGUF, the real similarity model and a real DuckDB file.

The embedded model is a 270M *base* model: on most texts it never lists reasons, and an
instance without reasons stops after JUSTIFY. To exercise every stage, these tests use a text
written as a numbered list (which the model tends to continue) and search a few run seeds for
one whose JUSTIFY answer has a stance and reasons; the search and the run are both real.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import LISTY_MAX_NEW, write_listy_dataset

from haf_tui.methods.haf.core.parsing import parse_followup, parse_justify
from haf_tui.store import open_store
from tests.support.held_run import held_command, wait_until_held

pytestmark = [pytest.mark.real_model, pytest.mark.real_similarity]

MAX_NEW = LISTY_MAX_NEW


def write_dataset(folder: Path) -> Path:
    return write_listy_dataset(folder)


def test_every_stage_is_stored_and_scored(full_run_db: tuple[Path, str, list[str]]) -> None:
    db, run_id, events = full_run_db
    assert events[0] == "run-started" and events[-1] == "run-finished"
    assert events.count("instance") == 2
    with open_store(db, read_only=True) as store:

        def one(sql: str) -> Any:
            return store.query(sql, [run_id])[1]

        stance, n_reasons, stopped = one(
            "SELECT stance, n_reasons, stopped FROM instance_results "
            "WHERE run_id = ? AND instance_id = 'listy'"
        )[0]
        assert stance in ("toxic", "maybe", "non-toxic") and n_reasons >= 1 and stopped is None
        per_stage = dict(
            one(
                "SELECT stage, count(*) FROM generations WHERE run_id = ? "
                "AND instance_id = 'listy' GROUP BY stage"
            )
        )
        assert per_stage == {
            "justify": 1,
            "internal": 1,
            "external": 1,
            "individual": n_reasons,
            "classify": 4,  # one forced reply per spelling of the two labels
        }
        tests = {
            t
            for (t,) in one(
                "SELECT DISTINCT test FROM generations WHERE run_id = ? AND stage = 'individual'"
            )
        }
        assert tests == ({"NEC"} if stance == "non-toxic" else {"SUF"})

        for instance, stage, sub, text, n_tokens in one(
            "SELECT instance_id, stage, sub_index, output_text, output_tokens "
            "FROM generations WHERE run_id = ?"
        ):
            pieces = one(
                f"SELECT text FROM tokens WHERE run_id = ? AND instance_id = "
                f"'{instance}' AND stage = '{stage}' AND sub_index = {sub} "
                "ORDER BY position"
            )
            assert len(pieces) == n_tokens and "".join(p for (p,) in pieces) == text
            if stage == "classify":  # a forced spelling: nothing to parse
                continue
            parsed = parse_justify(text) if stage == "justify" else parse_followup(text, stage)
            stored = one(
                f"SELECT text, token_count, confidence FROM reasons WHERE run_id = ? "
                f"AND instance_id = '{instance}' AND stage = '{stage}' "
                f"AND sub_index = {sub} ORDER BY reason_index"
            )
            assert [r[0] for r in stored] == [r.text for r in parsed.reasons]
            assert all(count > 0 and 0.0 < confidence <= 1.0 for _, count, confidence in stored)

        metrics = dict(
            one(
                "SELECT metric, value FROM instance_metrics WHERE run_id = ? "
                "AND instance_id = 'listy'"
            )
        )
        assert 0.0 < metrics["sos"] <= 1.0
        assert (
            metrics["decision_confidence_justify"] is None
            or 0.0 < metrics["decision_confidence_justify"] <= 1.0
        )
        assert {"uii", "uei", "delta_pe_internal", "delta_pe_external"} <= set(metrics)
        assert ("rn" if stance == "non-toxic" else "rs") in metrics
        sos_rows = one(
            "SELECT count(*) FROM reason_metrics WHERE run_id = ? "
            "AND instance_id = 'listy' AND metric = 'sos'"
        )[0][0]
        assert sos_rows == n_reasons
        assert store.get_run(run_id).status == "finished"


def _haf(db: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "haf_tui.cli", "--db", str(db), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


def _counts(db: Path) -> dict[str, int]:
    with open_store(db, read_only=True) as store:
        counts = {}
        for table in (
            "generations",
            "tokens",
            "reasons",
            "instance_results",
            "instance_metrics",
            "reason_metrics",
        ):
            counts[table] = store.query(f"SELECT count(*) FROM {table}")[1][0][0]
        return counts


def _run_args(data: Path, seed: int, parallel: int = 8) -> list[str]:
    return [
        "run",
        "--file",
        str(data),
        "--limit",
        "1",
        "--stages",
        "justify,internal,external",
        "--seed",
        str(seed),
        "--max-new-tokens",
        str(MAX_NEW),
        "--n-ctx",
        "1024",
        "--n-gpu-layers",
        "0",
        "--parallel",
        str(parallel),
    ]


def _whole_run(folder: Path, seed: int, parallel: int) -> tuple[Path, Path]:
    data = write_dataset(folder)
    whole = _haf(folder / "whole.duckdb", *_run_args(data, seed, parallel))
    assert whole.wait(timeout=600) == 0, whole.stdout.read() if whole.stdout else ""
    return folder / "whole.duckdb", data


@pytest.fixture(scope="module")
def whole_run(tmp_path_factory: pytest.TempPathFactory, usable_seed: int) -> tuple[Path, Path]:
    """An uninterrupted batched run in a subprocess: (its database, its dataset file)."""
    return _whole_run(tmp_path_factory.mktemp("whole"), usable_seed, 8)


@pytest.fixture(scope="module")
def whole_sequential_run(
    tmp_path_factory: pytest.TempPathFactory, usable_seed: int
) -> tuple[Path, Path]:
    """The same run one generation at a time (``--parallel 1``)."""
    return _whole_run(tmp_path_factory.mktemp("whole-sequential"), usable_seed, 1)


def _start_held(
    db: Path, args: list[str], at: str, after: int, until: str
) -> subprocess.Popen[str]:
    """``haf run`` in a subprocess that holds still once ``after`` of its generations are
    stored (``tests/support/held_run.py``: ``at`` and ``until`` say how): the test stops it
    there, however fast the machine (a poll every half second once saw a fast run store its
    last follow-ups, or finish, before the kill)."""
    marker = db.with_name(db.name + ".held")
    process = subprocess.Popen(
        held_command(marker, at, after, until, "--db", str(db), *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    wait_until_held(marker, process)
    return process


def _content(db: Path) -> dict[str, dict[tuple[Any, ...], Any]]:
    """What a run stored, by key: output texts, every token's id and raw logprob, and every
    instance and reason metric value."""
    with open_store(db, read_only=True) as store:

        def keyed(sql: str, width: int) -> dict[tuple[Any, ...], Any]:
            return {tuple(r[:width]): r[width:] for r in store.query(sql)[1]}

        return {
            "texts": keyed(
                "SELECT instance_id, stage, sub_index, output_text, decision FROM generations", 3
            ),
            "tokens": keyed(
                "SELECT instance_id, stage, sub_index, position, token_id, logprob FROM tokens", 4
            ),
            "instance_metrics": keyed("SELECT instance_id, metric, value FROM instance_metrics", 2),
            "reason_metrics": keyed(
                "SELECT instance_id, stage, sub_index, reason_index, metric, value "
                "FROM reason_metrics",
                5,
            ),
        }


def _assert_same_content(db: Path, whole_db: Path) -> None:
    got, want = _content(db), _content(whole_db)
    for part in ("texts", "tokens", "instance_metrics", "reason_metrics"):
        assert got[part].keys() == want[part].keys(), part
    assert got["texts"] == want["texts"]
    for key, (token_id, logprob) in want["tokens"].items():
        assert got["tokens"][key][0] == token_id, key
        assert got["tokens"][key][1] == pytest.approx(logprob, abs=1e-6), key
    # metric values: equal to 1e-7, not bit for bit: a resumed process embeds a text in other
    # batches than the first one did, and the bi-encoder's floats move by a few 1e-9 with the
    # batch (measured: DiS 4.3e-9 apart)
    for part in ("instance_metrics", "reason_metrics"):
        for key, (value,) in want[part].items():
            if value is None:
                assert got[part][key] == (None,), (part, key)
            else:
                assert got[part][key][0] == pytest.approx(value, abs=1e-7), (part, key)


def _resume_and_compare(db: Path, whole_db: Path) -> None:
    with open_store(db, read_only=True) as store:
        (run_id,) = [r["run_id"] for r in store.list_runs()]
    resumed = _haf(db, "run", "--resume", run_id)
    output = resumed.stdout.read() if resumed.stdout else ""
    assert resumed.wait(timeout=600) == 0, output
    assert _counts(db) == _counts(whole_db)
    with open_store(db, read_only=True) as store:
        assert store.get_run(run_id).status == "finished"
        duplicates = store.query(
            "SELECT count(*) - count(DISTINCT (instance_id, stage, sub_index)) FROM generations"
        )[1][0][0]
        assert duplicates == 0
    _assert_same_content(db, whole_db)


@pytest.mark.parametrize("killed_after", [1, 2])
def test_a_killed_run_resumes_to_the_same_rows(
    tmp_path: Path, usable_seed: int, whole_run: tuple[Path, Path], killed_after: int
) -> None:
    """SIGKILL once JUSTIFY is stored, and once a follow-up is too: the resumed batched run
    holds the texts, token logprobs and metric values of the uninterrupted one."""
    whole_db, data = whole_run
    killed_db = tmp_path / "killed.duckdb"
    # (held in the thread that stores: none stored after the ``killed_after``-th)
    victim = _start_held(killed_db, _run_args(data, usable_seed), "save", killed_after, "kill")
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    assert _counts(killed_db)["generations"] == killed_after < _counts(whole_db)["generations"]
    with open_store(killed_db, read_only=True) as store:
        # killed, so never marked: stored as running, shown interrupted (its writer is dead)
        assert store.query("SELECT status FROM runs")[1] == [("running",)]
        assert store.list_runs()[0]["status"] == "interrupted"
    _resume_and_compare(killed_db, whole_db)


def test_ctrl_c_stops_between_generations_and_resumes(
    tmp_path: Path, usable_seed: int, whole_sequential_run: tuple[Path, Path]
) -> None:
    """One generation at a time, so that a stop leaves work undone (batched, a stop finishes
    the generations in flight: here that would be all of them)."""
    whole_db, data = whole_sequential_run
    db = tmp_path / "interrupted.duckdb"
    # (no new generation starts once one is stored, until the Ctrl-C is heard: work is left)
    process = _start_held(db, _run_args(data, usable_seed, 1), "take", 1, "ctrl-c:1")
    process.send_signal(signal.SIGINT)
    output = process.stdout.read() if process.stdout else ""
    assert process.wait(timeout=120) == 130, output
    assert "stopping after the generations in flight" in output and "haf run --resume" in output
    with open_store(db, read_only=True) as store:
        assert store.list_runs()[0]["status"] == "interrupted"
        # whole generations only: each is committed together with all of its tokens
        stored, expected = store.query(
            "SELECT (SELECT count(*) FROM tokens), (SELECT sum(output_tokens) FROM generations)"
        )[1][0]
        assert stored == expected > 0
    assert _counts(db)["generations"] < _counts(whole_db)["generations"]
    _resume_and_compare(db, whole_db)


def test_stored_metrics_recompute_from_stored_rows(
    full_run_db: tuple[Path, str, list[str]],
) -> None:
    """Every stored SoS, DiS, UII and UEI of a real run equals the method functions applied to
    the stored reasons and confidences, with g from an independently loaded similarity model
    (no pair cache)."""
    from haf_tui.methods.haf.core import metrics
    from haf_tui.similarity import load_similarity

    db, run_id, _ = full_run_db
    g = load_similarity(cached=False)
    with open_store(db, read_only=True) as store:
        instance_text = store.query("SELECT text FROM instances WHERE instance_id = 'listy'")[1][0][
            0
        ]
        reasons: dict[str, list[tuple[str, float]]] = {}
        for stage, text, confidence in store.query(
            "SELECT stage, text, confidence FROM reasons WHERE run_id = ? AND "
            "instance_id = 'listy' AND sub_index = -1 ORDER BY stage, reason_index",
            [run_id],
        )[1]:
            reasons.setdefault(stage, []).append(
                (text, math.nan if confidence is None else confidence)
            )
        stored = dict(
            store.query(
                "SELECT metric, value FROM instance_metrics WHERE run_id = ? "
                "AND instance_id = 'listy'",
                [run_id],
            )[1]
        )
    originals = [t for t, _ in reasons["justify"]]
    conf = [c for _, c in reasons["justify"]]
    # every pair the instance needs, in one batch
    pairs: list[tuple[str, str]] = []
    for i, reason in enumerate(originals):
        pairs += [(reason, instance_text), *((reason, other) for other in originals[i + 1 :])]
    for stage in sorted(s for s in reasons if s != "justify"):
        pairs += [(new, original) for new, _ in reasons[stage] for original in originals]
    sim = dict(zip(dict.fromkeys(pairs), g.similarities(list(dict.fromkeys(pairs))), strict=True))
    expected = {
        "sos": metrics.strength_of_support(conf, [sim[(r, instance_text)] for r in originals])
    }
    matrix = [
        [
            1.0 if i == j else sim.get((a, b), sim.get((b, a), math.nan))
            for j, b in enumerate(originals)
        ]
        for i, a in enumerate(originals)
    ]
    expected["dis"] = metrics.diversity_of_support(conf, matrix)
    for stage, name in (("internal", "uii"), ("external", "uei")):
        new = reasons.get(stage, [])
        new_matrix = [[sim[(t, r)] for r in originals] for t, _ in new]
        expected[name] = metrics.reliance([c for _, c in new], new_matrix, conf)
    for name, value in expected.items():
        if math.isnan(value):
            assert stored.get(name) is None, name
        else:
            # the run embedded each text once, in the batch it first met it (the relevance
            # batches): the bi-encoder's floats move by a few 1e-9 with the batch (measured
            # 4.3e-9 on DiS), so equal to 1e-7, not 1e-9
            assert stored[name] == pytest.approx(value, abs=1e-7), name
