"""The demo's JUSTIFY answers under other CPU kernels (issue 44 §3, docs/demo.md).

llama.cpp's CPU kernels sum in an order their SIMD code decides, and that code is chosen when
llama.cpp is built: a llama-server built with AVX-512 off (AVX2 and FMA only, as on many Xeons
and older AMD CPUs) or with no SIMD at all runs another kernel kind on this same CPU. This runs
the demo's JUSTIFY stage (``haf run --demo --stages justify``, every one of the demo's texts,
or of ``--file``'s, greedy, seed 23, 256 new tokens) in process and through each llama-server
named with ``--build NAME=PATH`` (``haf serve --engine llama-server``, ``$HAF_LLAMA_SERVER``
set to PATH),
then compares each arm to the in-process one: which texts go past JUSTIFY, which answers are
the same byte for byte, and the largest difference of a stored log-probability (the token's
own and its top alternatives', by id) over the tokens both answers share before they part.
Then each text with how many arms took it past JUSTIFY, most first: the order the demo's
texts are kept in (``haf_tui/data/demo.jsonl``). ``--whole`` runs the whole demo in each arm
instead (every stage, as ``make run``), and says what it evaluated, which texts went through
every stage and how many texts each HAF metric is defined on.

    python -m benchmarks.demo_kernels --out /tmp/kernels --lock /tmp/haf-model.lock \\
        --build native=.venv/bin/llama-server --build avx2=/tmp/avx2/llama-server

Building the kernel kinds (the flags ``benchmarks/gpu/build_llama_server.sh`` uses, and):
AVX2 ``-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
-DGGML_AVX=ON``; scalar ``-DGGML_NATIVE=OFF`` with GGML_AVX512, AVX2, FMA, F16C, AVX, SSE42
and BMI2 OFF. An arm whose database is already in ``--out`` is not run again (``--fresh``:
every arm is). Not part of ``make test`` or ``make bench``: each arm takes minutes."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.servers import Served

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = "in-process"
DEMO_JUSTIFY = ["run", "--demo", "--stages", "justify"]
DEMO_WHOLE = ["run", "--demo"]  # (every stage, until 3 went through: as make run runs it)
STAGES = ("justify", "internal", "external", "individual")
N_CTX = 4096  # haf run's own default: each llama-server slot gets what the in-process run has

_ANSWERS_SQL = """
SELECT g.instance_id, g.output_text, r.stopped IS NULL
FROM generations g JOIN instance_results r USING (run_id, instance_id)
WHERE g.stage = 'justify' ORDER BY g.instance_id
"""
_TOKENS_SQL = """
SELECT instance_id, position, token_id, logprob, top_ids, top_logprobs FROM tokens
WHERE stage = 'justify' ORDER BY instance_id, position
"""


@dataclass(frozen=True)
class Token:
    """One stored token of an answer: its id, log-probability and top alternatives."""

    token_id: int
    logprob: float
    top: dict[int, float]


@dataclass(frozen=True)
class Answers:
    """One arm's JUSTIFY answers: text and whether it went on, and its tokens, by text."""

    texts: dict[str, str]
    went_on: dict[str, bool]
    tokens: dict[str, list[Token]]


@dataclass(frozen=True)
class Parting:
    """Where an answer first differs from the reference's: the token's position and the
    reference's gap there between its two likeliest tokens (nats)."""

    instance_id: str
    position: int
    reference_gap: float | None


@dataclass(frozen=True)
class Comparison:
    """One arm against the reference."""

    arm: str
    went_on: list[str]
    identical: int
    of: int
    parted: list[Parting]
    largest_logprob_difference: float
    largest_at: tuple[str, int] | None
    median_logprob_difference: float
    compared_logprobs: int


def compare_answers(arm: str, answers: Answers, reference: Answers) -> Comparison:
    """``answers`` against ``reference``: texts past JUSTIFY, answers the same byte for byte,
    where the others part, and the largest log-probability difference over the tokens both
    share up to (and including) the first that differs (later ones follow other text)."""
    shared = sorted(set(answers.texts) & set(reference.texts))
    parted: list[Parting] = []
    differences: list[float] = []
    largest_at: tuple[str, int] | None = None
    for instance_id in shared:
        mine, theirs = answers.tokens.get(instance_id, []), reference.tokens.get(instance_id, [])
        for position, (token, reference_token) in enumerate(zip(mine, theirs, strict=False)):
            same_token = token.token_id == reference_token.token_id
            pairs = [(token.logprob, reference_token.logprob)] if same_token else []
            pairs += [
                (value, reference_token.top[top_id])
                for top_id, value in token.top.items()
                if top_id in reference_token.top
            ]
            for value, reference_value in pairs:
                difference = abs(value - reference_value)
                if not differences or difference > max(differences):
                    largest_at = (instance_id, position)
                differences.append(difference)
            if token.token_id != reference_token.token_id:
                parted.append(Parting(instance_id, position, _gap(reference_token)))
                break
        else:
            if answers.texts[instance_id] != reference.texts[instance_id]:
                parted.append(Parting(instance_id, min(len(mine), len(theirs)), None))
    identical = sum(answers.texts[i] == reference.texts[i] for i in shared)
    went_on = sorted(i for i, on in answers.went_on.items() if on)
    return Comparison(
        arm,
        went_on,
        identical,
        len(shared),
        parted,
        max(differences, default=0.0),
        largest_at,
        statistics.median(differences) if differences else 0.0,
        len(differences),
    )


def _gap(token: Token) -> float | None:
    values = sorted(token.top.values(), reverse=True)
    return values[0] - values[1] if len(values) > 1 else None


def read_answers(db: Path) -> Answers:
    """The JUSTIFY answers and tokens stored in ``db`` (one run)."""
    from haf_tui.store import open_store

    with open_store(db, read_only=True) as store:
        rows = store.query(_ANSWERS_SQL)[1]
        token_rows = store.query(_TOKENS_SQL)[1]
    tokens: dict[str, list[Token]] = {}
    for instance_id, _, token_id, logprob, top_ids, top_logprobs in token_rows:
        top = dict(zip(top_ids or [], top_logprobs or [], strict=True))
        tokens.setdefault(instance_id, []).append(Token(token_id, logprob, top))
    return Answers({i: text for i, text, _ in rows}, {i: bool(on) for i, _, on in rows}, tokens)


@contextmanager
def _locked(path: str | None) -> Iterator[None]:
    if path is None:
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _haf(argv: Sequence[str], home: Path) -> None:
    env = {**os.environ, "HAF_HOME": str(home), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "haf_tui.cli", *argv], env=env, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"haf {' '.join(argv[:4])} exited with {done.returncode}")


def run_arm(
    name: str,
    program: Path | None,
    out: Path,
    threads: int,
    extra: Sequence[str] = (),
    demo: Sequence[str] = DEMO_JUSTIFY,
) -> float:
    """The demo's JUSTIFY stage into ``out/NAME.duckdb``, in process (``program`` None) or
    through ``haf serve`` on that llama-server; its wall seconds."""
    db = out / f"{name}.duckdb"
    db.unlink(missing_ok=True)
    home = out / "home"
    home.mkdir(exist_ok=True)
    started = time.perf_counter()
    argv = ["--db", str(db), *demo, "--threads", str(threads), *extra]
    if program is None:
        _haf(argv, home)
        return time.perf_counter() - started
    os.environ["HAF_LLAMA_SERVER"] = str(program.resolve())
    served = Served("llama-server", 8, N_CTX, home, threads=threads)
    try:
        _haf([*argv, "--server", f"{served.url}#8"], home)
    finally:
        served.stop()
        del os.environ["HAF_LLAMA_SERVER"]
    return time.perf_counter() - started


def kernel_order(
    went_on: Mapping[str, Mapping[str, bool]], order: Sequence[str]
) -> list[tuple[str, int]]:
    """The texts of ``order`` with how many arms (``went_on``: by arm, by text) took each past
    JUSTIFY, most first, ties in ``order``'s order: the order the demo's texts are kept in
    (a text an arm did not run counts as stopped there)."""
    counts = {text: sum(bool(arm.get(text)) for arm in went_on.values()) for text in order}
    return sorted(counts.items(), key=lambda item: -item[1])  # (sorted is stable)


def by_text_table(went_on: Mapping[str, Mapping[str, bool]], order: Sequence[str]) -> str:
    """A markdown table: each text (in :func:`kernel_order`), whether each arm took it past
    JUSTIFY, and in how many arms it went on."""
    arms = list(went_on)
    lines = [
        f"| text | {' | '.join(arms)} | arms |",
        f"|---|{'---|' * len(arms)}---|",
    ]
    for text, count in kernel_order(went_on, order):
        marks = " | ".join("on" if went_on[arm].get(text) else "-" for arm in arms)
        lines.append(f"| {text} | {marks} | {count} of {len(arms)} |")
    return "\n".join(lines)


def _texts_options(file: Path | None) -> list[str]:
    """``haf run`` options that evaluate every text of ``file`` (default: the demo's pool)."""
    if file is None:
        from haf_tui.datasets import demo_texts

        count = len(demo_texts().instances)
    else:
        count = sum(1 for line in file.read_text(encoding="utf-8").splitlines() if line.strip())
    every = ["--limit", str(count), "--until-complete", str(count)]
    return [*(["--file", str(file.resolve())] if file is not None else []), *every]


def table(comparisons: Sequence[Comparison]) -> str:
    """The markdown table docs/demo.md shows."""
    lines = [
        "| kernel build | texts past JUSTIFY | which | identical answers? "
        "| largest logprob difference |",
        "|---|---|---|---|---|",
    ]
    for row in comparisons:
        parted = ", ".join(
            f"{p.instance_id} at token {p.position}"
            + (f" (gap {p.reference_gap:.2g})" if p.reference_gap is not None else "")
            for p in row.parted
        )
        same = f"{row.identical} of {row.of}" + (f"; parted: {parted}" if parted else "")
        at = row.largest_at
        largest_at = f" ({at[0]} token {at[1]})" if at is not None else ""
        lines.append(
            f"| {row.arm} | {len(row.went_on)} of {row.of} | {' '.join(row.went_on)} | {same} "
            f"| {row.largest_logprob_difference:.2g} nats{largest_at} (median "
            f"{row.median_logprob_difference:.2g}, {row.compared_logprobs} values) |"
        )
    return "\n".join(lines)


def whole_demo(db: Path) -> dict[str, Any]:
    """What a whole demo in ``db`` (one run) evaluated: texts, those through every HAF stage,
    and how many texts each HAF metric is defined on."""
    from haf_tui.reports import defined_counts, instance_rows
    from haf_tui.store import open_store

    with open_store(db, read_only=True) as store:
        (run,) = store.list_runs()
        rows = instance_rows(store, run["run_id"])
        _, through = store.query(
            "SELECT instance_id FROM generations WHERE stage IN (?, ?, ?, ?) "
            "GROUP BY instance_id HAVING count(DISTINCT stage) = 4 ORDER BY instance_id",
            list(STAGES),
        )
    return {
        "evaluated": [str(r["instance_id"]) for r in rows],
        "through": [i for (i,) in through],
        "defined": defined_counts(rows),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.demo_kernels", description=__doc__)
    parser.add_argument("--out", type=Path, required=True, help="a folder for the databases")
    parser.add_argument("--build", action="append", default=[], help="NAME=PATH of a llama-server")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--lock", help="a file to hold locked (flock) during each arm")
    parser.add_argument("--fresh", action="store_true", help="run arms already stored again")
    parser.add_argument("--temperature", help="haf run --temperature (default: the demo's 0)")
    parser.add_argument(
        "--file", type=Path, help="the texts (a JSONL file: id, text, label; default the demo's)"
    )
    parser.add_argument("--suites", help="haf run --suites (default: the demo's)")
    parser.add_argument(
        "--whole",
        action="store_true",
        help="the whole demo in each arm (every stage, as make run runs it), not JUSTIFY alone",
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    arms: dict[str, Path | None] = {REFERENCE: None}
    for item in args.build:
        name, _, path = item.partition("=")
        if not path or name == REFERENCE:
            parser.error(f"--build {item}: expected NAME=PATH (NAME not {REFERENCE})")
        arms[name] = Path(path)
    seconds: dict[str, float] = {}
    for name, program in arms.items():
        if args.fresh or not (args.out / f"{name}.duckdb").exists():
            with _locked(args.lock):
                extra = [] if args.whole else _texts_options(args.file)
                extra += ["--file", str(args.file.resolve())] if args.whole and args.file else []
                extra += ["--temperature", args.temperature] if args.temperature else []
                extra += ["--suites", args.suites] if args.suites else []
                demo = DEMO_WHOLE if args.whole else DEMO_JUSTIFY
                seconds[name] = run_arm(name, program, args.out, args.threads, extra, demo)
            print(f"{name}: {seconds[name]:.0f} s", flush=True)
    if args.whole:
        wholes = {name: whole_demo(args.out / f"{name}.duckdb") for name in arms}
        report: dict[str, Any] = {"seconds": seconds, "whole": wholes}
        (args.out / "demo-whole.json").write_text(json.dumps(report, indent=2) + "\n")
        for name, whole in wholes.items():
            print(f"{name}: {len(whole['evaluated'])} evaluated, through every stage "
                  f"{' '.join(whole['through'])}; defined on {whole['defined']}")  # fmt: skip
        return
    answers = {name: read_answers(args.out / f"{name}.duckdb") for name in arms}
    # each arm against the in-process one, then each build against the first (the same server
    # path: only the kernels differ)
    references = list(arms)[:2]
    comparisons = [
        compare_answers(f"{name} vs {reference}", answers[name], answers[reference])
        for reference in references
        for name in arms
        if name != reference and (reference == REFERENCE or name != REFERENCE)
    ]
    went_on = {name: arm.went_on for name, arm in answers.items()}
    order = list(answers[REFERENCE].texts)  # (by id: the arms' databases keep no file order)
    report = {
        "seconds": seconds,
        "arms": [asdict(c) for c in comparisons],
        "by_text": kernel_order(went_on, order),
    }
    (args.out / "demo-kernels.json").write_text(json.dumps(report, indent=2) + "\n")
    print(table(comparisons))
    print(by_text_table(went_on, order))


if __name__ == "__main__":
    main()
