"""``haf`` end to end: run --demo, report, query, runs, export, and one-line errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import shared_dir

from haf_tui.cli import main
from haf_tui.datasets import builtin_sample
from haf_tui.defaults import DEMO_MAX_TEXTS, DEMO_UNTIL_COMPLETE
from haf_tui.store import open_store
from tests.support import one_line_error as _error

pytestmark = [pytest.mark.real_model, pytest.mark.real_similarity]
FOLLOW_UPS = ("internal", "external", "individual")


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding one finished ``haf run --demo``, exactly as ``make run`` runs it
    (texts in order until 3 went through every stage, greedy, 256 new tokens: a few minutes
    here)."""
    db = tmp_path_factory.mktemp("cli") / "haf.duckdb"
    assert main(["--db", str(db), "run", "--demo"]) == 0
    return db


def test_builtin_sample_has_each_kind_of_text() -> None:
    sample = builtin_sample()
    assert 12 <= len(sample.instances) <= 24
    assert {i.label for i in sample.instances} == {"toxic", "non-toxic", "ambiguous"}
    assert any("<start_of_turn>" in i.text for i in sample.instances)


def test_demo_run_is_stored(demo_db: Path) -> None:
    with open_store(demo_db, read_only=True) as store:
        (run,) = store.list_runs()
        record = store.get_run(run["run_id"])
        assert run["status"] == "finished" and run["n_generations"] >= run["n_done"]
        # texts in order until 3 went through every stage, at most the whole sample
        assert 3 <= run["n_done"] == record.n_planned <= DEMO_MAX_TEXTS
        assert record.chat_format == "gguf-template" and record.model_quant == "Q4_1"
        assert (
            record.similarity_model == "all-MiniLM-L6-v2" and len(record.model_sha256 or "") == 64
        )
        decoding = json.loads(record.config_json)["decoding"]
        assert decoding["max_new_tokens"] == 256 and decoding["seed"] == 23
        assert decoding["temperature"] == 0.0  # greedy: the demo alone (docs/demo.md)
        config = json.loads(record.config_json)
        assert config["until_complete"] == 3 and config["limit"] == run["n_done"]


def test_the_demo_runs_every_stage_its_answers_call_for(demo_db: Path) -> None:
    """The machinery of ``make run`` on the real embedded model: texts in order until 3 went
    through every stage (or every text tried); JUSTIFY and classify for every text; the three
    follow-up stages for each text that went on (one UPHOLD-STANCE answer a reason), none for
    a text stopped after JUSTIFY; every answer's tokens with finite raw logprobs; and each HAF
    metric stored for every text that went on, defined exactly when the answers it is computed
    from are (reasons with a confidence, a follow-up's decision confidence).

    How many texts go on is the CPU's say (llama.cpp's batched CPU kernels sum in a
    CPU-dependent order: docs/demo.md), so nothing here counts on any; that every metric is
    defined when every stage answers is pinned by a scripted model (test_demo_scripted.py)."""
    with open_store(demo_db, read_only=True) as store:
        n_done = store.list_runs()[0]["n_done"]
        _, results = store.query(
            "SELECT instance_id, stance, n_reasons, stopped FROM instance_results"
        )
        _, stage_rows = store.query(
            "SELECT instance_id, stage, count(*), "
            "count(*) FILTER (WHERE decision_confidence IS NOT NULL) FROM generations "
            "GROUP BY instance_id, stage"
        )
        _, confident_reasons = store.query(
            "SELECT instance_id, stage, count(*) FILTER (WHERE confidence IS NOT NULL "
            "AND NOT isnan(confidence)) FROM reasons GROUP BY instance_id, stage"
        )
        _, tokens = store.query(
            "SELECT g.stage, count(*) FILTER (WHERE NOT isfinite(t.logprob) OR t.logprob > 0), "
            "count(*) FILTER (WHERE t.logprob IS NULL) FROM generations g "
            "JOIN tokens t USING (run_id, instance_id, stage, sub_index) GROUP BY g.stage"
        )
        _, metric_rows = store.query("SELECT instance_id, metric, value FROM instance_metrics")
    assert len(results) == n_done
    went_on = {i: (stance, n) for i, stance, n, stopped in results if stopped is None}
    assert len(went_on) >= DEMO_UNTIL_COMPLETE or n_done == DEMO_MAX_TEXTS, (went_on, n_done)
    stages = {(i, stage): (n, decided) for i, stage, n, decided in stage_rows}
    reasons = {(i, stage): n for i, stage, n in confident_reasons}
    for instance, _, n_reasons, stopped in results:
        assert (instance, "justify") in stages and (instance, "classify") in stages
        follow_ups = [stages.get((instance, s), (0, 0))[0] for s in FOLLOW_UPS]
        assert follow_ups == ([0, 0, 0] if stopped else [1, 1, n_reasons]), (instance, stopped)
    # every token of every stage that ran: a finite raw logprob (none positive, none missing)
    assert {stage for stage, _, _ in tokens} >= {"justify", "classify"}
    assert all(bad == 0 and missing == 0 for _, bad, missing in tokens), tokens
    values = {(i, metric): value for i, metric, value in metric_rows}
    for instance, (stance, _) in went_on.items():
        defined = {
            metric: value is not None and math.isfinite(value)
            for (i, metric), value in values.items()
            if i == instance
        }
        score = "rn" if stance == "non-toxic" else "rs"
        assert {"sos", "dis", "uii", "uei", "c_y", score} <= defined.keys(), (instance, defined)
        assert ({"rs", "rn"} - {score}).isdisjoint(defined), (instance, defined)
        assert defined["sos"] == (reasons.get((instance, "justify"), 0) >= 1), instance
        assert defined["dis"] == (reasons.get((instance, "justify"), 0) >= 2), instance
        for stage, metric in (("internal", "uii"), ("external", "uei")):
            assert defined[metric] == (reasons.get((instance, stage), 0) >= 1), (instance, metric)
        decided = stages[(instance, "individual")][1]
        assert defined["c_y"] == (decided >= 1), instance
    for metric in ("classify_p_toxic", "classify_label_mass", "classify_toxic"):
        assert sum(1 for (_, m), v in values.items() if m == metric and v is not None) == n_done


def test_report_query_runs_export(
    demo_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ["--db", str(demo_db)]
    assert main([*db, "report"]) == 0
    out = capsys.readouterr().out
    assert "Table 1" in out and "Table 2" in out and "Table 4" in out
    assert "pooled" in out and "instance mean" in out  # both pooling rules, and what each is
    assert "the reference's rule" in " ".join(out.split())
    with open_store(demo_db, read_only=True) as store:
        stopped = store.query("SELECT count(stopped) FROM instance_results")[1][0][0]
        n_done = store.list_runs()[0]["n_done"]
    assert (f"{stopped} of {n_done} instances stopped after JUSTIFY" in out) == (stopped > 0)
    assert "the explorer opens on it" in " ".join(out.split())  # the instance to open is named
    # how many texts each HAF number rests on, as the store holds them (issue 44 §3)
    with open_store(demo_db, read_only=True) as store:
        defined = dict(
            store.query(
                "SELECT metric, count(*) FILTER (WHERE isfinite(value)) FROM instance_metrics "
                "GROUP BY metric"
            )[1]
        )
    names = {"sos": "SoS", "dis": "DiS", "uii": "UII", "uei": "UEI", "rs": "RS", "rn": "RN"}
    counts = ", ".join(f"{name} {defined.get(metric, 0)}" for metric, name in names.items())
    assert f"rests on the instances it is defined for: {counts} (haf" in " ".join(out.split())
    assert main([*db, "report", "--format", "json", "--report", "table1"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and rows[0]["model"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert main([*db, "query", "--name", "table1", "--format", "csv"]) == 0
    assert "SmolLM2-135M-Instruct.Q4_1.gguf" in capsys.readouterr().out
    assert (
        main([*db, "query", "SELECT count(*) AS n FROM instance_results", "--format", "json"]) == 0
    )
    assert json.loads(capsys.readouterr().out) == [{"n": n_done}]
    assert main([*db, "runs"]) == 0
    assert "finished" in capsys.readouterr().out
    with open_store(demo_db, read_only=True) as store:
        run_id = store.list_runs()[0]["run_id"]
    assert main([*db, "export", run_id[:10], "--format", "csv", "--out", str(tmp_path)]) == 0
    assert (tmp_path / run_id / "tokens.csv").stat().st_size > 0
    assert main([*db, "export", run_id, "--out", str(tmp_path / "pq")]) == 0
    assert (tmp_path / "pq" / run_id / "generations.parquet").is_file()


def test_read_errors_are_one_line(demo_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = ["--db", str(demo_db)]
    assert main([*db, "query", "SELEKT nonsense"]) == 2
    assert "query failed" in _error(capsys)
    assert main([*db, "query", "DELETE FROM runs"]) == 2  # read-only connection
    _error(capsys)
    assert main([*db, "query", "--name", "no_such_query"]) == 2
    assert "no_such_query" in _error(capsys)
    assert main([*db, "report", "--run", "nonexistent-run"]) == 2
    _error(capsys)


def test_bad_inputs_fail_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "haf.duckdb"
    (tmp_path / "broken.gguf").write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x01\x00" * 20)
    assert main(["--db", str(db), "run", "--model", str(tmp_path / "broken.gguf")]) == 2
    assert "truncated GGUF file" in _error(capsys)
    assert main(["--db", str(db), "run", "--model", str(tmp_path / "absent.gguf")]) == 2
    assert "model file not found" in _error(capsys)
    assert main(["--db", str(db), "run", "--demo", "--model", str(tmp_path / "x.gguf")]) == 2
    assert "--demo runs the embedded model" in _error(capsys)
    assert main(["--db", str(db), "run", "--demo", "--max-new-tokens", "0"]) == 2
    assert "--max-new-tokens" in _error(capsys)
    assert main(["--db", str(db), "run", "--demo", "--chat-format", "klingon"]) == 2
    assert "unknown chat format" in _error(capsys)
    (tmp_path / "bad.jsonl").write_text("not json\n{broken\n")
    assert main(["--db", str(db), "run", "--file", str(tmp_path / "bad.jsonl")]) == 2
    err = _error(capsys)
    assert "no text column" in err and "haf datasets import FILE --text-column NAME" in err
    assert main(["--db", str(db), "run", "--model", str(tmp_path)]) == 2
    assert "is a folder, not a GGUF file" in _error(capsys)
    long_text = tmp_path / "long.jsonl"
    long_text.write_text(json.dumps({"text": "word " * 400}) + "\n")
    assert (
        main(
            [
                "--db",
                str(db),
                "run",
                "--file",
                str(long_text),
                "--n-ctx",
                "256",
                "--n-gpu-layers",
                "0",
            ]
        )
        == 2
    )
    assert "does not fit the context of 256 tokens" in _error(capsys)
    assert main(["--db", str(db), "run", "--demo", "--stages", "internal"]) == 2
    assert "justify stage is required" in _error(capsys)
    with open_store(db, read_only=True) as store:
        assert store.list_runs() == []


# ---------------------------------------------------------------- haf datasets

PAPER_SAMPLES = shared_dir() / "data" / "haf-paper-samples"


def test_datasets_import_show_and_list_a_file_of_bad_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ["--db", str(tmp_path / "haf.duckdb")]
    assert main([*db, "datasets", "list"]) == 0  # no database yet: the paper's datasets
    assert "civil_comments" in capsys.readouterr().out
    path = tmp_path / "texts.tsv"
    good = "A text that is long enough and fine to evaluate here"
    path.write_text(
        f"id\tbody\ty\tgroup\n1\t{good}\ttoxic\tg\n2\t\ttoxic\tg\n3\t   \tx\tg\n"
        f"4\t{good}\tx\tg\n5\tAnother fine text for the model\t\tg\n6\t{'w' * 60}\tx\tg\n",
        encoding="utf-8",
    )
    assert main([*db, "datasets", "preview", str(path)]) == 0
    assert "guessed columns: text=body" in capsys.readouterr().out  # the longest texts
    args = ["--text-column", "body", "--id-column", "id", "--label-column", "y"]
    assert main([*db, "datasets", "import", str(path), *args, "--max-chars", "55"]) == 2
    assert "label column 'y' holds x: say which values mean toxic" in _error(capsys)
    args += ["--label-map", "toxic=toxic"]  # (x: the rest, non-toxic)
    assert main([*db, "datasets", "import", str(path), *args, "--max-chars", "55"]) == 0
    out = capsys.readouterr().out
    assert "imported texts" in out and "1 instances, 5 rows skipped" in out
    assert main([*db, "datasets", "import", str(path), *args, "--max-chars", "55"]) == 0
    assert "already stored" in capsys.readouterr().out
    assert main([*db, "datasets", "show", "texts", "--skipped"]) == 0
    out = capsys.readouterr().out
    for reason in ("empty text", "whitespace-only text", "duplicate text", "no label"):
        assert reason in out
    assert "text too long" in out and "columns text=body, id=id, label=y" in out
    assert main([*db, "datasets", "list"]) == 0
    assert "texts" in capsys.readouterr().out
    assert main([*db, "datasets", "show", "nothing"]) == 2
    assert "no stored dataset 'nothing'" in _error(capsys)
    assert main([*db, "datasets", "import", str(tmp_path / "absent.csv")]) == 2
    assert "no file or paper dataset" in _error(capsys)
    assert main([*db, "run", "--dataset", "imdb"]) == 2
    assert "unknown dataset 'imdb'" in _error(capsys)


def test_datasets_import_of_a_paper_dataset_offline_says_what_to_download(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    db = ["--db", str(tmp_path / "haf.duckdb")]
    assert main([*db, "datasets", "import", "civil_comments"]) == 2
    err = _error(capsys)
    assert "hf download google/civil_comments --repo-type dataset" in err
    assert "haf datasets import civil_comments --file PATH" in err
    assert main([*db, "run", "--dataset", "RealToxicityPrompts"]) == 2
    assert "hf download allenai/real-toxicity-prompts" in _error(capsys)


@pytest.mark.skipif(not PAPER_SAMPLES.is_dir(), reason=f"{PAPER_SAMPLES} is absent")
def test_the_paper_samples_import_and_a_run_evaluates_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ["--db", str(tmp_path / "haf.duckdb")]
    assert main([*db, "datasets", "import", str(PAPER_SAMPLES)]) == 0
    assert capsys.readouterr().out.count(": 1024 instances") == 5
    assert main([*db, "datasets", "show", "paper-sample:hate_explain"]) == 0
    out = capsys.readouterr().out
    assert "1024 instances · 0 rows skipped" in out and "match the reference's seed-17" in out
    run = [*db, "run", "--dataset", "paper-sample:toxigen", "--limit", "1", "--stages", "justify"]
    assert main([*run, "--max-new-tokens", "16", "--n-gpu-layers", "0", "--n-ctx", "1024"]) == 0
    with open_store(tmp_path / "haf.duckdb", read_only=True) as store:
        (listed,) = store.list_runs()
        assert listed["dataset_id"].startswith("paper-sample-toxigen-")
        assert listed["n_done"] == 1
        assert store.query("SELECT count(*) FROM datasets")[1] == [(5,)]
