"""A store holding a HAF run (``source``) and a judge run of its explanations (``judged``),
both made through the real runner with scripted models (no llama.cpp): for screens, reports
and snapshots of the judge suite.

The HAF model's reasons depend on the instance (:data:`REASONS`) and its token
log-probabilities fall with the instance number, so SoS and the other confidences differ
between instances. The judge's favourite label per criterion depends on
the instance number ``n`` of ``text number n``: Overall = 1 + n mod 5, Supports = b (against
the toxic stance: a mismatch) when n mod 3 = 0, else a; instance 1's Overall labels all get
little mass (a label-mass warning)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path

from haf_tui.config import DecodingSettings, RunConfig
from haf_tui.inference.backend import Backend
from haf_tui.inference.base import GeneratedToken, Generation, TokenCallback, TokenTextAssembler
from haf_tui.messages import ChatMessage
from haf_tui.methods.judge.settings import JudgeSettings
from haf_tui.pipeline.runner import HafRunner
from haf_tui.pipeline.runs import choice_by_name, resolve_dataset
from haf_tui.store.db import Store
from haf_tui.store.records import RunRecord
from tests.test_scheduler import FOLLOWUP_ANSWER, FlatSimilarity, ScriptedBackend, _store_with_run

SOURCE_RUN = "source"
JUDGE_RUN = "judged"
N_INSTANCES = 6
_NUMBER = re.compile(r"text (?:number )?(\d+)")


def instance_number(messages: Sequence[ChatMessage]) -> int:
    """The ``n`` of ``text number n`` (or ``text n``) in the conversation (0 when absent)."""
    found = _NUMBER.search("\n".join(m.content for m in messages))
    return int(found.group(1)) if found else 0


REASONS = (
    ("It insults the reader directly.", "It mocks the reader's family."),
    ("It calls people names. It is rude. It is hostile.", "It demeans a whole group."),
    ("It threatens someone with harm.", "It uses slurs against a group."),
)
"""The JUSTIFY reasons of instance n: ``REASONS[n mod 3]`` (the second has 4 sentences)."""


class VaryingBackend(ScriptedBackend):
    """:class:`ScriptedBackend` whose reasons depend on the instance (:data:`REASONS`) and
    whose token log-probabilities fall with the instance number."""

    def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
    ) -> Generation:
        n = instance_number(messages)
        if "\nREASON" in messages[-1].content:
            answer = FOLLOWUP_ANSWER
        else:
            listed = "\n".join(f"{i}. {r}" for i, r in enumerate(REASONS[n % 3], start=1))
            answer = f"The text is toxic.\n\nREASONS:\n{listed}\n"
        assembler = TokenTextAssembler()
        tokens: list[GeneratedToken] = []
        for word in answer.replace(" ", " \0").split("\0"):
            text, byte_offset, char_offset = assembler.add(word.encode())
            token = GeneratedToken(
                len(tokens), word.encode(), text, byte_offset, char_offset, -0.05 * (1 + n)
            )
            tokens.append(token)
            if on_token is not None:
                on_token(token)
        prompt = "\n".join(m.content for m in messages)
        return Generation(prompt, 10, assembler.finish(), tokens, "stop", 0.01)


def favourite(number: int, n: int) -> str:
    """The judge's favourite label for criterion ``number`` on instance ``n``."""
    by_number = {
        1: "b" if n % 3 == 0 else "a",
        2: str(1 + n % 5),
        3: "yes" if n % 2 else "no",
        4: "yes",
        5: "N/A" if n % 2 else "yes",
        6: ("none", "some", "sufficient", "ample")[n % 4],
        7: "no",
        8: "no" if n % 2 else "yes",
    }
    return by_number[number]


class VaryingJudge(Backend):
    """Scores each slot's favourite label at p = 0.8 and the others at 0.05 (instance 1's
    Overall: every label 0.05); free answers list the favourites."""

    name = "varying-judge"

    def generate(self, messages: Sequence[ChatMessage], settings: DecodingSettings, *,
                 on_token: TokenCallback | None = None) -> Generation:  # fmt: skip
        n = instance_number(messages)
        answer = "\n".join(f"{k}. {favourite(k, n)}" for k in range(1, 9))
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
        n = instance_number(messages)
        number = int(reply_prefix.splitlines()[-1].split(".")[0])
        liked = favourite(number, n) == forced and not (n == 1 and number == 2)
        logprob = math.log(0.8) if liked else math.log(0.05)
        token = GeneratedToken(1, forced.encode(), forced, 0, 0, logprob)
        return Generation("p" + reply_prefix, 10, forced, [token], "forced", 0.0)


def store_judge_run(
    store: Store,
    source_run: str,
    judge: JudgeSettings | None = None,
    edits: bool = False,
    model: object = None,
    run_id: str = JUDGE_RUN,
) -> str:
    """A finished judge run ``run_id`` in ``store`` over the explanations of ``source_run``
    (``run:``, or with ``edits`` ``edits:``), rated by ``model`` (default
    :class:`VaryingJudge`); returns its id."""
    dataset = resolve_dataset(
        choice_by_name(f"{'edits' if edits else 'run'}:{source_run}", None, store), store
    )
    store.save_dataset(dataset.dataset_id, dataset.name, dataset.source, dataset.instances)
    judge_config = RunConfig(
        dataset_id=dataset.dataset_id, suites=("judge",), judge=judge or JudgeSettings()
    )
    store.create_run(
        RunRecord(
            run_id=run_id, status="created", dataset_id=dataset.dataset_id,
            n_planned=len(dataset.instances), config_json=judge_config.model_dump_json(),
            model_file="judge.gguf", similarity_model="flat", similarity_kind="bi-encoder",
        )
    )  # fmt: skip
    runner = HafRunner(store, model or VaryingJudge(), FlatSimilarity(), judge_config)  # type: ignore[arg-type]
    if runner.run(run_id).status != "finished":
        raise RuntimeError("the scripted judge run did not finish")
    return run_id


def judge_store(
    path: Path, judge: JudgeSettings | None = None, edits: bool = False, model: object = None
) -> Store:
    """A store with run ``source`` (HAF, :data:`N_INSTANCES` instances, toxic stances) and
    run ``judged`` (the judge suite over ``run:source``, or with ``edits`` over
    ``edits:source``; rated by ``model``, default :class:`VaryingJudge`), both finished."""
    store, config = _store_with_run(path, N_INSTANCES, 1)
    store.connection.execute("UPDATE runs SET run_id = ? WHERE run_id = 'run'", [SOURCE_RUN])
    assert (
        HafRunner(store, VaryingBackend(), FlatSimilarity(), config).run(SOURCE_RUN).status
        == "finished"
    )
    store_judge_run(store, SOURCE_RUN, judge, edits, model)
    return store


def judge_db(path: Path) -> Path:
    """:func:`judge_store` written to ``path`` and closed (for the app and the CLI)."""
    judge_store(path).close()
    return path
