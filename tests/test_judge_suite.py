"""The judge suite: a HAF run's explanations judged by a scripted model through the real runner
(slot-by-slot labels, each slot after the labels chosen before it), resumed without asking
twice; and through the real path, llama.cpp on the embedded GGUF with the reply prefix."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from haf_tui.config import DecodingSettings, RunConfig
from haf_tui.inference.backend import Backend
from haf_tui.inference.base import GeneratedToken, Generation, TokenCallback
from haf_tui.messages import ChatMessage
from haf_tui.methods.judge.settings import JudgeSettings
from haf_tui.pipeline.runner import HafRunner
from haf_tui.store.records import RunRecord
from tests.test_scheduler import FlatSimilarity, ScriptedBackend, _store_with_run

# the scripted judge's favourite label per criterion number (others get less)
FAVOURITE = {1: "a", 2: "4", 3: "yes", 4: "yes", 5: "N/A", 6: "some", 7: "no", 8: "no"}


class ScriptedJudge(Backend):
    """Scores a label high when it is its criterion's favourite; records each reply prefix."""

    name = "scripted-judge"

    def __init__(self) -> None:
        self.scored: list[tuple[str, str]] = []

    def generate(self, messages: Sequence[ChatMessage], settings: DecodingSettings, *,
                 on_token: TokenCallback | None = None) -> Generation:  # fmt: skip
        answer = "1. a\n2. 3\n3. yes\n4. yes\n5. yes\n6. Sufficient.\n7. no\n8. Somewhat"
        return Generation("p", 10, answer, [], "stop", 0.0)

    def score(
        self,
        messages: Sequence[ChatMessage],
        forced: str,
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
        reply_prefix: str = "",
    ) -> Generation:
        self.scored.append((reply_prefix, forced))
        number = int(reply_prefix.splitlines()[-1].split(".")[0])
        logprob = math.log(0.8) if FAVOURITE[number] == forced else math.log(0.05)
        token = GeneratedToken(1, forced.encode(), forced, 0, 0, logprob)
        return Generation("p" + reply_prefix, 10, forced, [token], "forced", 0.0)


def _haf_run_then_judge(tmp_path: Path, mode: str = "constrained") -> tuple[Any, ScriptedJudge]:
    from haf_tui.pipeline.runs import choice_by_name, resolve_dataset
    from haf_tui.store.db import Store

    store: Store
    store, config = _store_with_run(tmp_path / "j.duckdb", 2, 1)
    assert HafRunner(store, ScriptedBackend(), FlatSimilarity(), config).run("run").status == (
        "finished"
    )
    dataset = resolve_dataset(choice_by_name("run:run", None, store), store)
    store.save_dataset(dataset.dataset_id, dataset.name, dataset.source, dataset.instances)
    judge_config = RunConfig(
        dataset_id=dataset.dataset_id, suites=("judge",), judge=JudgeSettings(mode=mode)
    )  # type: ignore[arg-type]
    store.create_run(
        RunRecord(
            run_id="judged", status="created", dataset_id=dataset.dataset_id, n_planned=2,
            config_json=judge_config.model_dump_json(), model_file="judge.gguf",
            similarity_model="flat", similarity_kind="bi-encoder",
        )
    )  # fmt: skip
    judge = ScriptedJudge()
    assert HafRunner(store, judge, FlatSimilarity(), judge_config).run("judged").status == (
        "finished"
    )
    return store, judge


def _metrics(store: Any, run_id: str = "judged") -> dict[tuple[str, str], float]:
    rows = store.query(
        "SELECT instance_id, metric, value FROM instance_metrics WHERE run_id = ?", [run_id]
    )[1]
    return {(i, m): v for i, m, v in rows}


def test_a_run_s_explanations_are_judged_slot_by_slot(tmp_path: Path) -> None:
    store, judge = _haf_run_then_judge(tmp_path)
    metrics = _metrics(store)
    for instance in ("i0", "i1"):
        assert metrics[(instance, "judge_supports")] == 0  # a
        assert metrics[(instance, "judge_overall")] == 4
        assert metrics[(instance, "judge_factual")] == -1  # N/A
        assert metrics[(instance, "judge_new_info")] == 1  # some
        assert metrics[(instance, "judge_supports_matches")] == 1.0  # stance toxic → a
        overall = [metrics[(instance, f"judge_overall_p_{n}")] for n in "12345"]
        assert sum(overall) == pytest.approx(1.0)
        assert metrics[(instance, "judge_overall_mass")] == pytest.approx(0.8 + 4 * 0.05)
        assert metrics[(instance, "judge_overall_expected")] == pytest.approx(
            sum(p * c for p, c in zip(overall, range(1, 6), strict=True))
        )
    # each slot comes after the labels chosen for the earlier ones
    prefixes = {prefix for prefix, _ in judge.scored}
    assert "1. a\n2. 4\n3. yes\n4. yes\n5. N/A\n6. some\n7. no\n8. " in prefixes
    assert len(judge.scored) == 2 * (3 + 5 + 2 + 2 + 3 + 4 + 2 + 2)
    # the judged item: the TEXT, the choices, the reasons without the decision sentence
    (prompt,) = store.query(
        "SELECT DISTINCT extra->>'$.judge_item.explanation' FROM instances "
        "WHERE dataset_id = 'explanations-run' AND instance_id = 'i0'"
    )[1]
    assert prompt[0] == "1. It insults the reader."  # (the reasons JUSTIFY's parse kept)
    # resume: lose one instance's last slots, nothing else is asked again
    where = "WHERE run_id = 'judged' AND instance_id = 'i1'"
    for table in ("instance_results", "instance_metrics"):
        store.connection.execute(f"DELETE FROM {table} {where}")
    for table in ("generations", "tokens"):
        store.connection.execute(f"DELETE FROM {table} {where} AND sub_index >= 60")
    store.update_run("judged", status="interrupted")
    again = ScriptedJudge()
    config = RunConfig.model_validate_json(store.get_run("judged").config_json)
    assert HafRunner(store, again, FlatSimilarity(), config).run("judged").status == "finished"
    assert len(again.scored) == 4  # slots 7 and 8 of i1 (sub-index 60 on), two labels each
    assert _metrics(store) == pytest.approx(metrics)
    store.close()


def test_free_answers_are_parsed_and_failures_counted(tmp_path: Path) -> None:
    store, _ = _haf_run_then_judge(tmp_path, mode="free")
    metrics = _metrics(store)
    assert metrics[("i0", "judge_new_info")] == 2  # "Sufficient."
    assert metrics[("i0", "judge_contrastive_failed")] == 1.0  # "Somewhat"
    assert ("i0", "judge_contrastive") not in metrics
    store.close()


def test_an_unknown_run_to_judge_is_one_line(tmp_path: Path) -> None:
    from haf_tui.datasets import DatasetError
    from haf_tui.pipeline.runs import choice_by_name, resolve_dataset

    store, _ = _store_with_run(tmp_path / "e.duckdb", 1, 1)
    with pytest.raises(DatasetError, match="no run 'nope' to judge"):
        resolve_dataset(choice_by_name("run:nope", None, store), store)
    store.close()


@pytest.mark.real_model
def test_a_label_after_a_reply_prefix_scores_the_same_batched_and_alone(
    embedded_backend: Any,
) -> None:
    from haf_tui.inference.base import GenerationRequest, ListSource
    from haf_tui.methods.judge.core.prompts import judge_messages, toxicity_item

    messages = judge_messages(toxicity_item("you are an idiot", ["It insults."]), "default")
    settings = DecodingSettings(temperature=0.0, max_new_tokens=4)
    prefix = "1. a\n2. "
    labels = ["1", "2", "3", "4", "5"]
    engine = embedded_backend.concurrent(5)
    source = ListSource(
        [
            GenerationRequest(messages, settings, tag=x, forced=x, reply_prefix=prefix)
            for x in labels
        ]
    )
    engine.serve(source)
    for label in labels:
        alone = embedded_backend.score(messages, label, settings, reply_prefix=prefix)
        batched = source.results[label]
        assert batched.prompt_text.endswith(prefix) and batched.text == label
        assert [t.logprob for t in batched.tokens] == pytest.approx(
            [t.logprob for t in alone.tokens], abs=1e-5
        )
    bare = embedded_backend.score(messages, "4", settings)
    assert bare.tokens[0].logprob != pytest.approx(source.results["4"].tokens[0].logprob, abs=1e-3)


@pytest.mark.real_model
@pytest.mark.real_similarity
def test_the_embedded_model_judges_an_explanation_into_duckdb(
    tmp_path: Path, embedded_backend: Any, minilm: Any
) -> None:
    from haf_tui.datasets import Dataset
    from haf_tui.methods.judge.core.prompts import toxicity_item
    from haf_tui.pipeline.models import LoadedModels
    from haf_tui.pipeline.runs import RunRequest, execute_run, start_or_resume
    from haf_tui.store import open_store
    from haf_tui.store.records import InstanceRecord

    text = "you are a worthless idiot and nobody here wants you around"
    item = toxicity_item(text, ["It insults the reader.", "It tells them to leave."])
    instance = InstanceRecord(
        instance_id="x1", position=0, text=text, label="toxic",
        extra={"judge_item": {"question": item.question, "choices": list(item.choices),
                              "explanation": item.explanation}, "stance": "toxic"},
    )  # fmt: skip
    dataset = Dataset("judge-one", "one explanation", "test", [instance])
    config = RunConfig(suites=("judge",), judge=JudgeSettings(prompt="default"))
    models = LoadedModels(embedded_backend, minilm)
    with open_store(tmp_path / "haf.duckdb") as store:
        started = start_or_resume(
            store, RunRequest(config=config, dataset=dataset, preloaded=models)
        )
        assert execute_run(store, started.run_id, started.config, models).status == "finished"
        metrics = dict(store.query("SELECT metric, value FROM instance_metrics")[1])
        prompts = store.query(
            "SELECT sub_index, prompt_text, output_text FROM generations ORDER BY sub_index"
        )[1]
    assert len(prompts) == 3 + 5 + 2 + 2 + 3 + 4 + 2 + 2
    assert prompts[-1][1].endswith("8. ") and prompts[-1][2] in ("no", "yes")
    for crit in ("supports", "overall", "well_written", "related", "factual", "new_info"):
        distribution = [v for m, v in metrics.items() if m.startswith(f"judge_{crit}_p_")]
        assert sum(distribution) == pytest.approx(1.0)
        assert 0.0 < metrics[f"judge_{crit}_mass"] <= 1.0
    assert metrics["judge_supports_matches"] in (0.0, 1.0)
    assert 1.0 <= metrics["judge_overall_expected"] <= 5.0


def _judge_run(store: Any, run_id: str, dataset_id: str, n: int, prompt: str) -> None:
    config = RunConfig(dataset_id=dataset_id, suites=("judge",), judge=JudgeSettings(prompt=prompt))  # type: ignore[arg-type]
    store.create_run(
        RunRecord(
            run_id=run_id, status="created", dataset_id=dataset_id, n_planned=n,
            config_json=config.model_dump_json(), model_file="judge.gguf",
            similarity_model="flat", similarity_kind="bi-encoder",
        )
    )  # fmt: skip
    assert HafRunner(store, ScriptedJudge(), FlatSimilarity(), config).run(run_id).status == (
        "finished"
    )


def test_haf_judge_meta_on_an_acorn_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from haf_tui.cli import main
    from haf_tui.store import open_store
    from tests.support.acorn_rows import acorn_rows, write_rows

    acorn = write_rows(tmp_path / "ACORN.jsonl", acorn_rows())
    db = tmp_path / "haf.duckdb"
    assert main(["--db", str(db), "datasets", "import", "acorn", "--file", str(acorn)]) == 0
    with open_store(db) as store:
        ((dataset_id, n),) = store.query("SELECT dataset_id, count(*) FROM instances GROUP BY 1")[1]
        _judge_run(store, "judged", dataset_id, n, "default")
        _judge_run(store, "judged-shuffled", dataset_id, n, "shuffled")
        codes = store.query(
            "SELECT count(*) FROM instance_metrics WHERE run_id = 'judged' "
            "AND metric = 'judge_overall'"
        )[1]
        assert codes == [(n,)]
    capsys.readouterr()
    argv = ["--db", str(db), "judge", "meta", "--run", "judged"]
    argv += ["--variant-run", "judged-shuffled"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    for title in ("Table 4.1", "Table 4.2", "Fig. 4.3", "Table 4.5", "Table 4.4"):
        assert title in out
    assert f"{n} explanations rated by humans and judged (default prompt)" in out
    assert "shuffled" in out
    # a run that is not a judge run is one line
    assert main(["--db", str(db), "judge", "meta", "--run", "nope"]) == 2


@pytest.mark.real_model
def test_haf_judge_meta_file_judges_an_acorn_file_with_the_embedded_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from haf_tui.cli import main
    from haf_tui.store import open_store
    from tests.support.acorn_rows import acorn_rows, write_rows

    acorn = write_rows(tmp_path / "ACORN.jsonl", acorn_rows())
    db = tmp_path / "haf.duckdb"
    argv = ["--db", str(db), "judge", "meta", "--file", str(acorn), "--limit", "3"]
    assert main([*argv, "--judge-prompt", "default"]) == 0
    out = capsys.readouterr().out
    for title in ("Table 4.1", "Table 4.2", "Fig. 4.3", "Table 4.5"):
        assert title in out
    assert "3 explanations rated by humans and judged (default prompt)" in out
    with open_store(db, read_only=True) as store:
        ((run_id, suites),) = store.query("SELECT run_id, config->>'$.suites' FROM runs")[1]
        labels = store.query(
            "SELECT count(*) FROM instance_metrics WHERE run_id = ? AND metric = 'judge_overall'",
            [run_id],
        )[1]
    assert "judge" in suites and labels == [(3,)]
    assert main(["--db", str(db), "judge", "meta", "--file", str(tmp_path / "none.jsonl")]) == 2
