"""The rationales suite through the real path: llama.cpp on the embedded GGUF (greedy
prompted rationales, forced label scores of every leave-one-out and perturbed text), a
HateXplain-format file with the annotators' masks, a real DuckDB file; its numbers agree with
the stored tokens, and a run resumes without duplicates."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from haf_tui.config import RunConfig
from haf_tui.methods.classify.core.labels import SPELLINGS, label_scores
from haf_tui.methods.rationales.settings import RationaleSettings, rationale_settings
from tests.hatexplain_files import P1_TOKENS, two_posts

pytestmark = [pytest.mark.real_model, pytest.mark.real_similarity]

CONFIG = RunConfig(
    suites=("rationales",),
    rationales=RationaleSettings(strategy="top_k", k=3, random_seeds=2, max_new_tokens=32),
)


def _rows(store: Any, sql: str, *params: object) -> list[dict[str, Any]]:
    columns, rows = store.query(sql, list(params))
    return [dict(zip(columns, row, strict=True)) for row in rows]


def test_a_rationales_run_on_hatexplain_scores_plausibility_faithfulness_and_resumes(
    tmp_path: Path, embedded_backend: Any, minilm: Any
) -> None:
    from haf_tui.datasets import load_paper_dataset
    from haf_tui.pipeline.models import LoadedModels
    from haf_tui.pipeline.runs import RunRequest, execute_run, start_or_resume
    from haf_tui.store import open_store

    dataset = load_paper_dataset("hate_explain", files=[two_posts(tmp_path / "Data")])
    models = LoadedModels(embedded_backend, minilm)
    with open_store(tmp_path / "haf.duckdb") as store:
        started = start_or_resume(
            store, RunRequest(config=CONFIG, dataset=dataset, preloaded=models)
        )
        run_id = started.run_id
        assert execute_run(store, run_id, started.config, models).status == "finished"
        assert (
            rationale_settings(started.config).ratio is not None
        )  # the dataset's, stored with the run
        rows = _rows(store, "SELECT * FROM rationales ORDER BY instance_id, source, seed")
        sources = sorted({r["source"] for r in rows})
        assert sources == [
            "attention", "everything", "human", "input_x_gradient", "occlusion", "prompt_gold",
            "prompt_predicted", "random", "saliency",
        ]  # fmt: skip
        p1 = {r["source"]: r for r in rows if r["instance_id"] == "0"}
        assert [i for i, v in enumerate(p1["human"]["mask"]) if v] == [4, 5, 7, 12, 13, 15]
        assert p1["occlusion"]["token_f1"] is not None and p1["occlusion"]["auprc"] is not None
        assert p1["prompt_gold"]["token_f1"] is not None
        assert len(p1["occlusion"]["scores"]) == len(P1_TOKENS)
        # the full text's p(ŷ | x) is what its four stored forced replies give
        sums = _rows(
            store,
            "SELECT sub_index, sum(logprob) AS lp FROM tokens WHERE instance_id = '0' "
            "AND stage = 'rationale_classify' GROUP BY ALL",
        )
        scores = label_scores({SPELLINGS[r["sub_index"]][0]: r["lp"] for r in sums})
        assert p1["occlusion"]["p_full"] == pytest.approx(scores.p(scores.predicted))
        # and every occlusion score is the log-odds drop its stored texts give
        occlusion = _rows(
            store,
            "SELECT g.sub_index, g.prompt_text, sum(t.logprob) AS lp FROM generations g "
            "JOIN tokens t USING (run_id, instance_id, stage, sub_index) "
            "WHERE g.instance_id = '0' AND g.stage = 'rationale_occlusion' GROUP BY ALL",
        )
        first = {SPELLINGS[r["sub_index"] % 4][0]: r["lp"] for r in occlusion if r["sub_index"] < 4}
        without_0 = label_scores(first)
        expected = scores.log_odds(scores.predicted) - without_0.log_odds(scores.predicted)
        assert p1["occlusion"]["scores"][0] == pytest.approx(expected, abs=1e-9)
        # no text scored twice within an instance
        texts = _rows(
            store,
            "SELECT instance_id, prompt_text, count(*) AS n FROM generations "
            "WHERE stage <> 'rationale_prompt' GROUP BY ALL",
        )
        assert {r["n"] for r in texts} == {4}
        prompts = _rows(store, "SELECT * FROM generations WHERE stage = 'rationale_prompt'")
        assert prompts and all(r["decision_source"] == "greedy" for r in prompts)
        assert all(0 < r["p_full"] <= 1 and not math.isnan(r["p_full"]) for r in rows)

        # lose the second post's results and some of its perturbed texts, then resume
        before = _rows(store, "SELECT * FROM rationales WHERE instance_id = '1' ORDER BY ALL")
        for table in ("instance_results", "instance_metrics", "rationales", "rationales_gradient"):
            store.connection.execute(f"DELETE FROM {table} WHERE instance_id = '1'")
        for table in ("generations", "tokens"):
            store.connection.execute(
                f"DELETE FROM {table} WHERE instance_id = '1' "
                "AND stage = 'rationale_perturb' AND sub_index % 4 = 1"
            )
        keys_before = store.query("SELECT count(*) FROM generations")[1][0][0]
        store.update_run(run_id, status="interrupted")
        resumed = start_or_resume(store, RunRequest(resume_run_id=run_id, preloaded=models))
        assert execute_run(store, run_id, resumed.config, models).status == "finished"
        keys = store.query("SELECT instance_id, stage, sub_index FROM generations")[1]
        assert len(keys) == len(set(keys)) > keys_before
        after = _rows(store, "SELECT * FROM rationales WHERE instance_id = '1' ORDER BY ALL")
        assert [r["source"] for r in after] == [r["source"] for r in before]
        for old, new in zip(before, after, strict=True):
            for name, value in old.items():
                if isinstance(value, float):
                    assert new[name] == pytest.approx(value, abs=1e-6), name
                else:
                    assert new[name] == value, name


def test_haf_run_suite_rationales_on_a_hatexplain_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What docs/suites.md tells a user to type, with the suite's options."""
    from haf_tui.cli import main
    from haf_tui.store import open_store

    file = two_posts(tmp_path / "Data")
    db = tmp_path / "haf.duckdb"
    argv = ["--db", str(db), "run", "--dataset", "hate_explain", "--file", str(file)]
    argv += ["--suite", "rationales", "--limit", "1", "--rationale-strategy", "top_var"]
    argv += ["--rationale-removal", "underscore", "--rationale-seeds", "1"]
    argv += ["--rationale-variant", "short", "--parallel", "4"]
    assert main(argv) == 0
    said = capsys.readouterr().out
    assert "rationale_occlusion" in said
    with open_store(db, read_only=True) as store:
        config = RunConfig.model_validate_json(store.query("SELECT config FROM runs")[1][0][0])
        settings = rationale_settings(config)
        assert (settings.strategy, settings.removal, settings.variant) == (
            "top_var", "underscore", "short",
        )  # fmt: skip
        assert settings.ratio == pytest.approx((6 / 17 + 4 / 18) / 2)  # mean |HARD| / n
        rows = _rows(store, "SELECT source, k, size, text_without FROM rationales")
    by_source = {r["source"]: r for r in rows}
    assert by_source["prompt_gold"]["k"] == 6  # Top-Var: the size of HARD
    assert by_source["occlusion"]["size"] == 6
    without = by_source["human"]["text_without"]
    assert len(without.split()) == len(P1_TOKENS) and without.count("_") == 6
