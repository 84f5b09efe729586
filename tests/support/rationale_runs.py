"""A scripted model for the rationales suite and a store holding a rationales run made with
it through the real runner (no llama.cpp): for screens, reports and snapshots.

The model's p(toxic | text) rises with each listed word present; a rationale prompt is
answered with a fixed list. Its forced replies are single tokens carrying log p(label) for
the lower-case spelling and a small share for the capitalised one (label mass 0.95)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from haf_tui.config import DecodingSettings, RunConfig
from haf_tui.inference.backend import Backend
from haf_tui.inference.base import GeneratedToken, Generation, TokenCallback
from haf_tui.messages import ChatMessage
from haf_tui.methods.classify.core.labels import SPELLINGS
from haf_tui.methods.rationales.settings import RationaleSettings
from haf_tui.pipeline.runner import HafRunner
from haf_tui.store import open_store
from haf_tui.store.db import Store
from haf_tui.store.records import InstanceRecord, RunRecord
from tests.hatexplain_files import INSULT_MARKED, INSULT_TOKENS, P1_MARKED, P1_TOKENS, mask
from tests.test_scheduler import FlatSimilarity

TOXIC_WORDS = {"idiot": 2.0, "illegal": 1.0, "globalists": 0.5, "worthless": 1.5}
ANSWER = "idiot | illegal | worthless | liberals"
RUN_ID = "rationale-run"
DATASET_ID = "hatexplain-mini"


def p_toxic(text: str) -> float:
    """The scripted model's p(toxic | text)."""
    logit = -1.0 + sum(w for word, w in TOXIC_WORDS.items() if word in text.split())
    return 1 / (1 + math.exp(-logit))


def scored_text(messages: Sequence[ChatMessage]) -> str:
    """The text between the triple backticks of a prompt."""
    return messages[-1].content.split("```")[1]


def _token(text: str, logprob: float, offset: int = 0) -> GeneratedToken:
    return GeneratedToken(1, text.encode(), text, offset, offset, logprob)


class ScriptedRationaleModel(Backend):
    """Answers rationale prompts with :data:`ANSWER`; scores label spellings by
    :func:`p_toxic`."""

    name = "scripted-rationales"

    def __init__(self, answer: str = ANSWER) -> None:
        self.answer = answer
        self.prompts: list[str] = []
        self.scored: list[tuple[str, str]] = []

    def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
    ) -> Generation:
        self.prompts.append(messages[-1].content)
        token = _token(self.answer, -0.5)
        return Generation(messages[-1].content, 40, self.answer, [token], "stop", 0.01)

    def score(
        self,
        messages: Sequence[ChatMessage],
        forced: str,
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
        reply_prefix: str = "",
    ) -> Generation:
        text = scored_text(messages)
        self.scored.append((text, forced))
        label = dict(SPELLINGS)[forced]
        p = p_toxic(text)
        share = 0.9 if forced.islower() else 0.05
        logprob = math.log((p if label == "toxic" else 1 - p) * share)
        return Generation(
            messages[-1].content, 30, forced, [_token(forced, logprob)], "forced", 0.0
        )


def rationale_instances() -> list[InstanceRecord]:
    """P1's Table 5 post and an insult with their annotators' masks (HateXplain's format),
    and a text without any."""
    posts = [(P1_TOKENS, P1_MARKED, "1.0"), (INSULT_TOKENS, INSULT_MARKED, "0.6666")]
    records = [
        InstanceRecord(
            instance_id=f"h{n}",
            position=n,
            text=" ".join(tokens),
            label=label,
            extra={"post_tokens": tokens, "rationales": [mask(tokens, m) for m in marked]},
        )
        for n, (tokens, marked, label) in enumerate(posts)
    ]
    records.append(
        InstanceRecord(
            instance_id="h2",
            position=2,
            text="thanks for the bus timetable it was kind of you",
            label="normal",
        )
    )
    return records


RATIONALE_CONFIG = RunConfig(
    dataset_id=DATASET_ID,
    suites=("rationales",),
    rationales=RationaleSettings(strategy="top_k", k=3, random_seeds=4, ratio=0.3),
)


def store_rationale_run(store: Store, config: RunConfig = RATIONALE_CONFIG) -> str:
    """A finished rationales run of the scripted model over :func:`rationale_instances`."""
    records = rationale_instances()
    store.save_dataset(DATASET_ID, "HateXplain (mini)", "tests", records)
    store.create_run(
        RunRecord(
            run_id=RUN_ID,
            status="created",
            dataset_id=DATASET_ID,
            n_planned=len(records),
            config_json=config.model_dump_json(),
            model_file="scripted-rationales.gguf",
            similarity_model="flat",
            similarity_kind="bi-encoder",
        )
    )
    runner = HafRunner(store, ScriptedRationaleModel(), FlatSimilarity(), config)
    if runner.run(RUN_ID).status != "finished":
        raise RuntimeError("the scripted rationales run did not finish")
    return RUN_ID


def rationale_db(path: Path) -> str:
    """A new store at ``path`` holding the scripted rationales run; returns its id."""
    with open_store(path) as store:
        return store_rationale_run(store)
