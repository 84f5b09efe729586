"""Synthetic HAF content for the benchmark store: texts, generations (tokens with logprobs and
top-k, reasons with spans, relevances and TokenSAR confidences) and metrics shaped like a
real run's, all drawn from one seeded numpy RNG (see :mod:`benchmarks.benchdata`)."""

from __future__ import annotations

import math

import numpy as np

from haf_tui.inference.base import GeneratedToken
from haf_tui.methods.haf.core.metrics import NECESSITY_WEIGHTS, SUFFICIENCY_WEIGHTS
from haf_tui.methods.haf.suite.stages import JustifyOutcome
from haf_tui.store import GenerationRecord, InstanceResult, ReasonRecord

TOP_K = 5


def _split(text: str, sep: str = " ") -> tuple[str, ...]:
    return tuple(text.split(sep))


MODELS = _split(
    "Llama-3.2-3B-Instruct-Q4_K_M.gguf Llama-3.1-8B-Instruct-Q4_K_M.gguf "
    "Ministral-8B-Instruct-2410-Q4_K_M.gguf gemma-3-270m-it-Q4_K_M.gguf"
)
WORD_TEXT = (
    "people idiot stupid comment article city council vote tax police school parents "
    "women men immigrants church climate science doctor nurse bus road housing rent "
    "judge law crime guns trash garbage worthless pathetic clown liar moron hate love "
    "respect fair honest wrong right opinion news report writer reader everyone nobody "
    "always never really just quite very rather clearly simply maybe perhaps because "
    "although while again still even only also group community neighbours voters "
    "leaders mayor governor senator party money jobs workers students teachers family"
)
WORDS = np.array(WORD_TEXT.split(), dtype=object)
SPACED = np.array([" " + w for w in WORDS], dtype=object)
OPENERS = {
    "toxic": _split(
        "The text insults;The comment attacks;It uses derogatory language about;"
        "The author mocks;It demeans;It threatens",
        ";",
    ),
    "non-toxic": _split(
        "The text states an opinion about;The comment politely discusses;"
        "It asks a question about;It describes;It disagrees respectfully with",
        ";",
    ),
}
STANCE_SENTENCE = {
    "toxic": "The text is toxic.",
    "non-toxic": "The text is not toxic.",
    "maybe": "The text might be mildly toxic.",
    "unclear": "I am only a language model.",
}
Y_SENTENCE = {
    "NO": "No additional reasons are required.",
    "YES": "Yes, additional reasons are required.",
    "MAYBE": "Additional reasons might be helpful.",
    "UNCLEAR": "The text is toxic.",
}
STANCES = ("toxic", "non-toxic", "maybe", "unclear")
DECISIONS = ("NO", "YES", "MAYBE", "UNCLEAR")


class Synthesizer:
    """Draws instances, generations and metrics from one seeded RNG."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def words(self, count: int) -> list[str]:
        """``count`` random words."""
        return [str(w) for w in self.rng.choice(WORDS, count)]

    def text(self) -> str:
        """An input text of 64–400 characters."""
        words = self.words(int(self.rng.integers(12, 60)))
        return (" ".join(words).capitalize() + ".")[:400]

    def reason(self, stance: str, n_words: int) -> str:
        """A reason: an opener, then words, then a full stop."""
        openers = OPENERS["non-toxic" if stance == "non-toxic" else "toxic"]
        opener = str(openers[int(self.rng.integers(len(openers)))])
        extra = max(2, n_words - len(opener.split()))
        return f"{opener} {' '.join(self.words(extra))}."

    def generation(
        self,
        key: tuple[str, str, str, int],
        decision: str,
        sentence: str,
        reason_texts: list[str],
        prompt: str,
        test: str | None = None,
    ) -> GenerationRecord:
        """One generation of ``key`` (run, instance, stage, sub_index): tokens (the sentence, then
        "\\n1." and the words of each reason) with logprobs and top-k, the reasons with their
        spans, relevances and TokenSAR confidences."""
        rng = self.rng
        words = sentence.split(" ")
        texts = [words[0]] + [" " + w for w in words[1:]]
        spans = []
        for index, reason in enumerate(reason_texts):
            texts += ["\n", f"{index + 1}."]
            spans.append((len(texts), reason))
            texts += [" " + w for w in reason.split(" ")]
        n = len(texts)
        logprobs = -rng.gamma(0.6, 1.0, n)
        gaps = np.cumsum(rng.gamma(1.0, 0.8, (n, TOP_K - 1)), axis=1)
        top_logprobs = (
            logprobs[:, None] - np.concatenate((np.zeros((n, 1)), gaps), axis=1)
        ).tolist()
        top_texts = rng.choice(SPACED, (n, TOP_K))
        top_texts[:, 0] = texts
        top_ids = rng.integers(2, 256_000, (n, TOP_K)).tolist()
        offsets = np.concatenate(([0], np.cumsum([len(t) for t in texts])[:-1])).tolist()
        tokens = [
            GeneratedToken(ids[0], text.encode(), text, at, at, lp, tuple(ids), tuple(lps), alts)
            for text, at, lp, ids, lps, alts in zip(
                texts, offsets, logprobs.tolist(), top_ids, top_logprobs,
                map(tuple, top_texts.tolist()), strict=True,
            )
        ]  # fmt: skip
        reasons = []
        for index, (first, reason) in enumerate(spans):
            count = len(reason.split(" "))
            nll = -logprobs[first : first + count]
            relevance = rng.uniform(0.05, 1.0, count)
            start = offsets[first] + 1
            confidence = math.exp(-float((nll * relevance).sum() / relevance.sum()))  # TokenSAR
            reasons.append(
                ReasonRecord(index, reason, start, start + len(reason), first, count,
                             tuple(nll.tolist()), tuple(relevance.tolist()), confidence)
            )  # fmt: skip
        truncated = rng.random() < 0.02
        return GenerationRecord(
            *key,
            test=test,
            seed=int(rng.integers(0, 2**31)),
            prompt_text=prompt,
            prompt_tokens=len(prompt) // 4,
            output_text="".join(texts),
            finish_reason="length" if truncated else "stop",
            decision=decision,
            decision_source=None if key[2] == "justify" else "rules",
            decision_sentence=sentence,
            decision_start=0,
            decision_end=len(sentence),
            decision_confidence=math.exp(float(logprobs[: len(words)].mean())),
            seconds=round(float(rng.uniform(0.5, 8.0)), 3),
            tokens=tokens,
            reasons=reasons,
            diagnostics=[("truncated", f"stopped at {n} new tokens")] if truncated else [],
        )

    def instance(
        self, run_id: str, instance_id: str, text: str
    ) -> tuple[list[GenerationRecord], InstanceResult]:
        """Every generation of one instance and its result, as the runner would store them."""
        rng = self.rng
        stance = str(rng.choice(STANCES, p=[0.45, 0.3, 0.15, 0.1]))
        n = 0 if stance != "unclear" and rng.random() < 0.03 else int(rng.integers(2, 5))
        if stance == "unclear":
            n = int(rng.integers(0, 3))
        n_words = max(5, (60 - len(STANCE_SENTENCE[stance].split())) // max(n, 1) - 2)
        reasons = [self.reason(stance, n_words) for _ in range(n)]
        prompt = f"Is the below TEXT toxic? ...\n\nTEXT: \n{text}"
        key = (run_id, instance_id, "justify", -1)
        generations = [self.generation(key, stance, STANCE_SENTENCE[stance], reasons, prompt)]
        stopped = JustifyOutcome(stance, tuple(reasons)).stopped  # type: ignore[arg-type]
        result = InstanceResult(run_id, instance_id, stance, n, stopped)
        if stopped is not None:
            confidence = generations[0].decision_confidence
            result.instance_metrics = [("decision_confidence_justify", confidence, 1)]
            return generations, result
        listed = "\n".join(f"{i + 1}. {r}" for i, r in enumerate(reasons))
        prompt = f"{prompt}\n\nREASON(S): \n{listed}"
        test = "NEC" if stance == "non-toxic" else "SUF"
        tasks = [("internal", -1), ("external", -1)] + [("individual", j) for j in range(n)]
        for stage, j in tasks:
            decision = str(rng.choice(DECISIONS, p=[0.45, 0.3, 0.15, 0.1]))
            n_new = {
                "NO": int(rng.random() < 0.25),  # Y = NO yet new reasons: a contradiction
                "YES": int(rng.integers(1, 3)),
                "MAYBE": int(rng.integers(0, 2)),
                "UNCLEAR": 0,
            }[decision]
            new = [self.reason(stance, 7 if j >= 0 else 10) for _ in range(n_new)]
            key = (run_id, instance_id, stage, j)
            sentence = Y_SENTENCE[decision]
            generations.append(
                self.generation(key, decision, sentence, new, prompt, test if j >= 0 else None)
            )
        self.metrics(result, generations)
        return generations, result

    def metrics(self, result: InstanceResult, generations: list[GenerationRecord]) -> None:
        """Reason and instance metrics shaped like the runner's (NaN: undefined)."""
        rng = self.rng
        justify, by_stage = generations[0], {(g.stage, g.sub_index): g for g in generations}
        conf = [r.confidence for r in justify.reasons]
        rows, inst = result.reason_metrics, result.instance_metrics
        inst += [
            (f"decision_confidence_{g.stage}", g.decision_confidence, 1) for g in generations[:3]
        ]
        sos = [0.8 * c + 0.2 * float(rng.uniform(0.2, 0.8)) for c in conf]
        rows += [("justify", -1, j, "sos", v) for j, v in enumerate(sos)]
        inst += [("sos", float(np.mean(sos)), len(sos)), ("dis", float(rng.beta(2, 5)), len(sos))]
        inst.append(("dis_dpp", float(rng.uniform(0.0, 0.5)), len(sos)))
        base = float(np.mean([-math.log(c) for c in conf]))
        for stage, name in (("internal", "uii"), ("external", "uei")):
            new = [r.confidence for r in by_stage[(stage, -1)].reasons]
            terms = [0.5 * c + 0.5 * float(rng.uniform(0.2, 0.8)) for c in new]
            rows += [(stage, -1, k, name, v) for k, v in enumerate(terms)]
            delta = float(np.mean([-math.log(c) for c in new])) - base if new else math.nan
            mean = float(np.mean(terms)) if terms else math.nan
            inst += [(name, mean, len(terms)), (f"delta_pe_{stage}", delta, len(new))]
        necessity = justify.decision == "non-toxic"
        score, info_name = ("rn", "i_n") if necessity else ("rs", "i_s")
        table = NECESSITY_WEIGHTS if necessity else SUFFICIENCY_WEIGHTS
        columns: dict[str, list[float]] = {score: [], info_name: [], "c_y": []}
        for j in range(len(conf)):
            sub = by_stage[("individual", j)]
            terms = [0.5 * r.confidence + 0.5 * float(rng.uniform(0.1, 0.6)) for r in sub.reasons]
            info = float(np.mean(terms)) if terms else (0.01 if necessity else 0.0)
            c_y, weight = sub.decision_confidence, table[sub.decision]
            value = weight * c_y * (info if necessity else 1.0 - info)
            for name, v in ((score, value), (info_name, info), ("c_y", c_y)):
                rows.append(("justify", -1, j, name, v))
                columns[name].append(v)
            rows.append(("justify", -1, j, "decision_weight", weight))
        inst += [(name, float(np.mean(v)), len(v)) for name, v in columns.items()]
