"""``haf run --demo``'s promise, pinned without the CPU's say: the demo's own command line, its
texts, settings and stop rule, with a scripted model whose answers go through every stage.
Every metric the HAF and classify suites define is then defined for each text that went
through, and the run stops admitting texts once 3 have.

Which texts the real embedded model takes past JUSTIFY depends on the CPU's summation order
(docs/demo.md), so the real demo's test (``test_cli.py``) asserts the machinery only."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from haf_tui.cli import main
from haf_tui.config import DecodingSettings
from haf_tui.datasets import demo_texts
from haf_tui.defaults import DEMO_UNTIL_COMPLETE, embedded_model_path
from haf_tui.inference.base import GeneratedToken, Generation, TokenCallback, TokenTextAssembler
from haf_tui.inference.gguf import read_gguf_info
from haf_tui.messages import ChatMessage
from haf_tui.methods.classify.core.labels import SPELLINGS
from haf_tui.pipeline.models import LoadedModels
from haf_tui.store import open_store
from tests.test_scheduler import FlatSimilarity, ScriptedBackend

HAF_METRICS = ("sos", "dis", "uii", "uei", "rs", "rn")
"""RS is defined for a toxic stance and RN for a non-toxic one (each reason's test)."""
CLASSIFY_METRICS = ("classify_p_toxic", "classify_label_mass", "classify_toxic")


JUSTIFY = (
    "The text is toxic.\n\nREASONS:\n1. It insults the reader directly.\n"
    "2. It mocks the reader for their opinions.\n3. It threatens them with harm.\n"
)
NOT_TOXIC = (
    "The text is not toxic.\n\nREASONS:\n1. It thanks the writer for their work.\n"
    "2. It discusses the bus schedule in a neutral tone.\n"
)
MORE_REASONS = (
    "My decision: YES, additional reasons are required.\n\nREASONS:\n"
    "1. The words are chosen to hurt a specific person.\n"
    "2. The tone would make anyone reading it feel unwelcome.\n"
)
ENOUGH = "My decision is no: the reasons given are enough."
DEMO_TEXTS = demo_texts().instances
STOPS = (DEMO_TEXTS[1].text, "If I ever see you at the meeting")
"""The demo's second text and the built-in sample's second (s05, for the runs of the sample
that other tests hold at a count of its generations): answered without a stance, so they stop
after JUSTIFY."""
POLITE = DEMO_TEXTS[3]
"""The demo's fourth text: answered as not toxic (RN, not RS, is then defined)."""


def word_tokens(answer: str) -> list[GeneratedToken]:
    """``answer`` as one token a word, each with logprob -0.2 and two alternatives."""
    assembler, tokens = TokenTextAssembler(), []
    for index, word in enumerate(answer.replace(" ", " \0").split("\0")):
        text, byte_offset, char_offset = assembler.add(word.encode())
        top = ((index, index + 1), (-0.2, -2.5), (text, "x"))
        tokens.append(
            GeneratedToken(index, word.encode(), text, byte_offset, char_offset, -0.2, *top)
        )
    return tokens


class ScriptedDemoModel(ScriptedBackend):
    """JUSTIFY answered with a stance and reasons, UPHOLD-REASON with YES and two more reasons,
    UPHOLD-STANCE with a clear NO, under the embedded GGUF's name; classify's label spellings
    scored (p(toxic) 0.7, label mass 0.9); the texts of :data:`STOPS` get no stance, so
    they stop after JUSTIFY, and :data:`POLITE`'s is non-toxic."""

    def __init__(self) -> None:
        super().__init__()
        self.info = read_gguf_info(embedded_model_path())
        self.chat_format = "gguf-template"
        self.n_ctx = 2048

    def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
    ) -> Generation:
        last = messages[-1].content
        prompt = "\n".join(m.content for m in messages)
        if "Is any additional reason, " in prompt:  # UPHOLD-REASON: more reasons, given
            answer = MORE_REASONS
        elif "\nREASON" in last:  # UPHOLD-STANCE: this reason suffices
            answer = ENOUGH
        elif any(text in last for text in STOPS):
            answer = "I cannot help with that."
        else:
            answer = NOT_TOXIC if POLITE.text in last else JUSTIFY
        tokens = word_tokens(answer)
        for token in tokens if on_token is not None else ():
            on_token(token)
        return Generation(last, 10, answer, tokens, "stop", 0.01)

    def score(
        self,
        messages: Sequence[ChatMessage],
        forced: str,
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
        reply_prefix: str = "",
    ) -> Generation:
        label = dict(SPELLINGS)[forced]
        share = 0.85 if forced.islower() else 0.05
        logprob = math.log((0.7 if label == "toxic" else 0.3) * share)
        token = GeneratedToken(1, forced.encode(), forced, 0, 0, logprob)
        return Generation(messages[-1].content, 30, forced, [token], "forced", 0.0)


@pytest.fixture
def scripted_demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A database holding ``haf run --demo`` made by :class:`ScriptedDemoModel`."""
    import haf_tui.pipeline.runs as runs

    def scripted_models(config: Any, similarity: Any = None) -> LoadedModels:
        return LoadedModels(ScriptedDemoModel(), FlatSimilarity())

    monkeypatch.setattr(runs, "load_models", scripted_models)
    db = tmp_path / "haf.duckdb"
    assert main(["--db", str(db), "run", "--demo"]) == 0
    return db


def test_every_metric_is_defined_for_each_text_through_every_stage(scripted_demo: Path) -> None:
    with open_store(scripted_demo, read_only=True) as store:
        (run,) = store.list_runs()
        _, through = store.query(
            "SELECT instance_id FROM generations WHERE stage <> 'classify' GROUP BY instance_id "
            "HAVING count(DISTINCT stage) = 4"
        )
        _, stopped = store.query(
            "SELECT instance_id FROM instance_results WHERE stopped IS NOT NULL"
        )
        _, rows = store.query("SELECT instance_id, metric, value FROM instance_metrics")
    # texts in order until 3 went through (the first, third and fourth), the second stopped
    assert sorted(through) == sorted((DEMO_TEXTS[i].instance_id,) for i in (0, 2, 3))
    assert len(through) == DEMO_UNTIL_COMPLETE and stopped
    assert run["n_done"] == len(through) + len(stopped)
    values = {(instance, metric): value for instance, metric, value in rows}
    defined = {m: 0 for m in HAF_METRICS + CLASSIFY_METRICS}
    for (instance,) in through:
        for metric in HAF_METRICS + CLASSIFY_METRICS:
            value = values.get((instance, metric))
            if metric in ("rs", "rn") and (instance == POLITE.instance_id) == (metric == "rs"):
                assert value is None, (instance, metric, value)  # the other stance's score
                continue
            assert value is not None and math.isfinite(value), (instance, metric, value)
            defined[metric] += 1
    assert defined["rn"] == 1 and defined["rs"] == 2 and defined["uei"] == 3
    for (instance,) in stopped:  # JUSTIFY alone defines no HAF metric; classify still ran
        assert all(values.get((instance, m)) is None for m in HAF_METRICS[1:])
        assert all(values.get((instance, m)) is not None for m in CLASSIFY_METRICS)


def test_the_kernel_benchmark_reads_what_a_whole_demo_rests_on(scripted_demo: Path) -> None:
    """``benchmarks.demo_kernels --whole``'s summary of a demo: the texts it evaluated, those
    through every HAF stage, and how many texts each HAF metric is defined on."""
    from benchmarks.demo_kernels import whole_demo

    summary = whole_demo(scripted_demo)
    first = [text.instance_id for text in DEMO_TEXTS[: len(summary["evaluated"])]]
    assert summary["evaluated"] == first  # (in the demo's order)
    assert summary["through"] == sorted(DEMO_TEXTS[i].instance_id for i in (0, 2, 3))
    assert summary["defined"] == {"SoS": 3, "DiS": 3, "UII": 3, "UEI": 3, "RS": 2, "RN": 1}


def test_the_report_says_how_many_texts_each_number_rests_on(
    scripted_demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``haf report`` (and ``haf run``'s last lines) name each HAF metric with the number of
    texts it is defined on (issue 44 §3): RS on the two toxic stances, RN on the one
    non-toxic, the rest on all three texts through every stage."""
    capsys.readouterr()
    assert main(["--db", str(scripted_demo), "report"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    counts = "SoS 3, DiS 3, UII 3, UEI 3, RS 2, RN 1"
    assert f"Each HAF number rests on the instances it is defined for: {counts}" in out
