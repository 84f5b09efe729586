"""How fast the judge suite goes against the engine it runs on (issue 44 §4; ``make bench
ONLY=judge``): a judge run of a few explanations of the builtin sample's texts on the embedded
model (constrained answers, the default: every label of every criterion teacher-forced, slot
after slot), in forced scorings per second, against the ceiling: the same requests, recorded
from the run's plans, handed to the same batched engine slot by slot (every explanation's
labels of one slot in one ``serve``), no suite, scheduler or store around them.

Arms, interleaved (:func:`benchmarks.method.compare`): ``judge run`` (``execute_run`` into a
throwaway database, as ``haf run --suites judge`` runs) and ``ceiling``. The model is loaded
once, outside the rounds. The goal: the run at ≥ 0.8× the ceiling's pace.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.method import compare
from haf_tui.config import DecodingSettings, ModelSettings, RunConfig
from haf_tui.datasets import builtin_sample
from haf_tui.datasets.model import Dataset
from haf_tui.inference.base import GenerationRequest, ListSource
from haf_tui.inference.llama import LlamaCppBackend
from haf_tui.methods.base import Reply, Task
from haf_tui.methods.judge.core.prompts import toxicity_item
from haf_tui.methods.judge.settings import JudgeSettings
from haf_tui.methods.judge.suite.plan import JudgePlan
from haf_tui.store.records import InstanceRecord

GOAL = 0.8
"""The judge run's pace, at least this fraction of the engine ceiling's (issue 44 §4)."""
REASONS = ("It insults the people it is about.", "It tells them they are not wanted.")
"""The explanation each text is judged with (the same two reasons for every text)."""


def judge_dataset(count: int) -> Dataset:
    """The first ``count`` builtin sample texts, each with :data:`REASONS` as the explanation
    to judge (the toxicity adaptation, as ``--dataset run:ID`` builds it)."""
    instances = []
    for position, sample in enumerate(builtin_sample().instances[:count]):
        item = toxicity_item(sample.text, list(REASONS))
        instances.append(
            InstanceRecord(
                instance_id=f"j{position}",
                position=position,
                text=sample.text,
                label=sample.label,
                extra={"judge_item": item.as_extra(), "stance": "toxic"},
            )
        )
    return Dataset("judge-bench", "judge benchmark", "benchmark", instances)


def plan_waves(
    backend: LlamaCppBackend, dataset: Dataset, config: RunConfig
) -> tuple[list[list[GenerationRequest]], list[tuple[str, str]]]:
    """The judge's requests slot by slot: each wave every plan's tasks of one step, served
    together on the engine; the replies advance the plans (what the run asks, in order).
    With them, every request's (prompt, forced reply) as the engine rendered them, sorted."""
    plans = [JudgePlan(instance, config) for instance in dataset.instances]
    pending: list[tuple[int, Task]] = [(n, t) for n, plan in enumerate(plans) for t in plan.start()]
    greedy = DecodingSettings(temperature=0.0, max_new_tokens=4)
    engine = backend.concurrent(config.model.n_parallel)
    waves = []
    asked: list[tuple[str, str]] = []
    while pending:
        wave = [
            GenerationRequest(
                task.messages,
                greedy,
                tag=(n, task),
                forced=task.forced,
                reply_prefix=task.reply_prefix,
            )
            for n, task in pending
        ]
        source = ListSource(wave)
        engine.serve(source)
        waves.append(wave)
        following: list[tuple[int, Task]] = []
        for n, task in pending:
            generation = source.results[(n, task)]
            asked.append((generation.prompt_text, generation.text))
            reply = Reply.of_generation(generation)
            more, _ = plans[n].advance(task, reply)
            following += [(n, t) for t in more]
        pending = following
    return waves, sorted(asked)


def bench_judge(items: int, rounds: int) -> dict[str, Any]:
    """The comparison's JSON: each arm's forced scorings/s per round and median, the ratio."""
    from haf_tui.pipeline.models import load_models
    from haf_tui.pipeline.runs import RunRequest, execute_run, start_or_resume
    from haf_tui.store import open_store

    settings = JudgeSettings(prompt="default").model_dump()
    config = RunConfig(suites=("judge",), settings={"judge": settings})
    dataset = judge_dataset(items)
    load_started = time.perf_counter()
    models = load_models(config)
    load_seconds = time.perf_counter() - load_started
    backend = models.backend
    assert isinstance(backend, LlamaCppBackend)
    waves, asked = plan_waves(backend, dataset, config)  # (also the warm-up)
    scorings = sum(len(wave) for wave in waves)
    prompt_length = len(backend.prepare_prompt(waves[0][0].messages)[1])
    engine = backend.concurrent(config.model.n_parallel)
    counted: dict[str, int] = {}
    same: list[bool] = []  # per round: the run asked for exactly what the ceiling replays
    tokens: dict[str, list[int]] = {}  # (prompt tokens asked for, evaluated: the last round's)

    def noted(name: str, arm: Callable[[], float]) -> Callable[[], float]:
        def run() -> float:
            asked, evaluated = engine.stats.prompt_tokens, engine.stats.prompt_tokens_evaluated
            figure = arm()
            tokens[name] = [
                engine.stats.prompt_tokens - asked,
                engine.stats.prompt_tokens_evaluated - evaluated,
            ]
            return figure

        return run

    def judge_run() -> float:
        with (
            tempfile.TemporaryDirectory(prefix="haf-judge-bench-") as folder,
            open_store(Path(folder) / "haf.duckdb") as store,
        ):
            request = RunRequest(config=config, dataset=dataset, preloaded=models)
            started_run = start_or_resume(store, request)
            started = time.perf_counter()
            summary = execute_run(store, started_run.run_id, started_run.config, models)
            seconds = time.perf_counter() - started
            rows = store.query("SELECT prompt_text, output_text FROM generations")[1]
        # (a label chosen by a last-bit difference would change the later slots' prompts)
        same.append(sorted((str(p), str(o)) for p, o in rows) == asked)
        counted["judge run"] = sum(summary.generations.values())
        return counted["judge run"] / seconds

    def ceiling(recorded: Sequence[list[GenerationRequest]]) -> Callable[[], float]:
        def run() -> float:
            started = time.perf_counter()
            for wave in recorded:
                engine.serve(ListSource(list(wave)))
            return scorings / (time.perf_counter() - started)

        return run

    try:
        result = compare(
            {
                "judge run": noted("judge run", judge_run),
                "ceiling": noted("ceiling", ceiling(waves)),
            },
            rounds,
            {"judge / ceiling": ("judge run", "ceiling")},
        )
    finally:
        backend.close()
    if counted.get("judge run") != scorings:
        raise RuntimeError(f"the run scored {counted.get('judge run')}, the ceiling {scorings}")
    result.update(
        {
            "items": items,
            "unit": "forced scorings/s",
            "scorings": scorings,
            "waves": len(waves),
            "run_asked_what_ceiling_replays": same,
            "prompt_tokens_asked_evaluated": tokens,
            "prompt_tokens_per_explanation": prompt_length,
            "n_parallel": config.model.n_parallel,
            "default_n_parallel": ModelSettings().n_parallel,
            "load_seconds": round(load_seconds, 1),
            "goal": GOAL,
        }
    )
    return result


def judge_markdown(result: dict[str, Any]) -> list[str]:
    """The comparison as a Markdown table."""
    lines = [
        f"Judge against the engine ({result['items']} explanations, {result['scorings']} forced "
        f"scorings in {result['waves']} slots, {result['n_parallel']} in flight, "
        f"{result['rounds']} rounds, load {result['load_before']} → {result['load_after']}; "
        f"prompt tokens asked for and evaluated per round: "
        + ", ".join(
            f"{k} {a:,} and {e:,}" for k, (a, e) in result["prompt_tokens_asked_evaluated"].items()
        )
        + f"; one explanation's prompt {result['prompt_tokens_per_explanation']} tokens):",
        "",
        "| arm | forced scorings/s per round | median |",
        "|---|---|---:|",
    ]
    for name, figures in result["figures"].items():
        lines.append(
            f"| {name} | {', '.join(f'{f:.1f}' for f in figures)} | {result['median'][name]:.1f} |"
        )
    lines += ["", "| ratio | median | min–max | IQR |", "|---|---:|---|---|"]
    for name in ("judge / ceiling",):
        summary = result[name]
        lines.append(
            f"| {name} | {summary['median']} | {summary['spread'][0]}–{summary['spread'][1]} | "
            f"{summary['iqr'][0]}–{summary['iqr'][1]} |"
        )
    return lines
