"""A store for ``haf rescore`` tests: a scripted backend whose answers go through every HAF
stage (toxic, non-toxic, maybe, a refusal; follow-ups whose decision similarity decides), run
by the real runner with a given similarity model g."""

from __future__ import annotations

from collections.abc import Sequence

from haf_tui.config import DecodingSettings, RunConfig
from haf_tui.inference.backend import Backend
from haf_tui.inference.base import GeneratedToken, Generation, TokenCallback, TokenTextAssembler
from haf_tui.messages import ChatMessage
from haf_tui.pipeline.runner import HafRunner
from haf_tui.similarity import SimilarityModel
from haf_tui.store import Store
from haf_tui.store.records import InstanceRecord, RunRecord

JUSTIFY = {
    "0": "The text is toxic.\n1. It insults the reader with a slur.\n"
    "2. It mocks the group the reader belongs to.\n3. It threatens the reader with harm.",
    "1": "The text is not toxic.\n1. It states a plain opinion about buses.\n"
    "2. It uses no insult or slur at all.",
    "2": "The text may be toxic.\n1. Its sarcasm could hurt some readers.\n"
    "2. It hints at a stereotype about the group.",
    "3": "I cannot help with that request.",
}
INTERNAL = "No, additional reasons are not required."
EXTERNAL = (
    "Yes, additional reasons are required.\n1. It repeats a stereotype seen elsewhere online.\n"
    "2. It could incite harassment of the readers."
)
INDIVIDUAL = (
    "Decision: the reasons above cover the matter rather well.\n"
    "1. Another reason is the sarcastic tone used in the text."
)


class ScriptedBackend(Backend):
    """Answers by stage and instance; every word a token with its own logprob."""

    name = "scripted"

    def generate(
        self,
        messages: Sequence[ChatMessage],
        settings: DecodingSettings,
        *,
        on_token: TokenCallback | None = None,
    ) -> Generation:
        every = "\n".join(m.content for m in messages)
        instance = every.split("text number ")[1][0]
        if "based solely" in every:
            answer = INTERNAL
        elif "other than what" in every:
            answer = EXTERNAL
        elif "\nREASON" in every:
            answer = INDIVIDUAL
        else:
            answer = JUSTIFY[instance]
        assembler = TokenTextAssembler()
        tokens = []
        for index, word in enumerate(answer.replace(" ", " \0").split("\0")):
            text, byte_offset, char_offset = assembler.add(word.encode())
            logprob = -0.05 * (1 + (index * 7 + int(instance)) % 11)
            tokens.append(
                GeneratedToken(index, word.encode(), text, byte_offset, char_offset, logprob)
            )
        return Generation(every, 10, assembler.finish(), tokens, "stop", 0.01)


def scripted_run(store: Store, run_id: str, similarity: SimilarityModel) -> None:
    config = RunConfig(dataset_id="tiny", decoding=DecodingSettings(max_new_tokens=64))
    store.create_run(
        RunRecord(
            run_id=run_id,
            status="created",
            dataset_id="tiny",
            n_planned=4,
            config_json=config.model_dump_json(),
            model_file="scripted.gguf",
            similarity_model=similarity.name,
            similarity_kind="bi-encoder",
        )
    )
    assert HafRunner(store, ScriptedBackend(), similarity, config).run(run_id).status == "finished"


def save_tiny_dataset(store: Store) -> None:
    """The four texts the scripted backend answers (dataset ``tiny``)."""
    records = [
        InstanceRecord(instance_id=f"i{n}", position=n, text=f"text number {n}", label="toxic")
        for n in range(4)
    ]
    store.save_dataset("tiny", "tiny", "test", records)
