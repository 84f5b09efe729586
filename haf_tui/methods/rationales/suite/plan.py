"""What the rationales suite asks of one instance, and in which order
(``docs/methods/rationales.md``).

Every text the suite scores (the full text, each leave-one-out text, each perturbed text) is
scored by teacher-forcing each label spelling after the classification prompt: four forced
replies per text, sub-index = text number × 4 + spelling. At the start the plan asks for the
full text (``rationale_classify``), every leave-one-out text (``rationale_occlusion``) and
the baselines' perturbed texts (``rationale_perturb``: HUMAN, RANDOM, EVERYTHING). Once the
full text is scored, ŷ is known and the rationale prompts follow (``rationale_prompt``,
greedy, the gold and the predicted label shown; one call when they are equal); once the
prompted answer for ŷ is in, and once every occlusion text is scored, their rationales'
perturbed texts follow. A text asked for once is never asked for again in the instance.

Adaptive RANDOM (a run with ``random_tolerance`` above 0; an adaptation of P2's 100 seeds):
the first ``random_min_seeds`` masks are asked at the start; once they and the full text are
scored, another round follows while the 95% half-width of the instance's RANDOM comp or flip
mean (:func:`~haf_tui.methods.rationales.core.metrics.half_width_95`) is above the tolerance,
up to ``random_seeds`` masks. Seed s is always the same mask, so an adaptive run's masks are
the first of a fixed run's.

The plan is a pure function of the instance, the run's settings and the answers: replaying
stored answers gives the same texts (a resume, and the suite's results).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from haf_tui.config import RunConfig
from haf_tui.methods.base import Reply, Task
from haf_tui.methods.classify.core.labels import (
    SPELLINGS,
    Label,
    LabelScores,
    classify_messages,
    gold_label,
    label_scores,
)
from haf_tui.methods.rationales.core.attribution import GRADIENT_METHODS
from haf_tui.methods.rationales.core.metrics import half_width_95, random_mask, top_k
from haf_tui.methods.rationales.core.parsing import RationaleAnswer, parse_rationale
from haf_tui.methods.rationales.core.prompts import rationale_messages, strategy_k, top_ratio_k
from haf_tui.methods.rationales.core.truth import Gold, word_units
from haf_tui.methods.rationales.core.words import only, without
from haf_tui.methods.rationales.settings import (
    RationaleSettings,
    adaptive_random,
    attributions_of,
    rationale_settings,
)
from haf_tui.methods.rationales.suite.gradient_stage import Attribute, Gradients
from haf_tui.store.records import InstanceRecord

CLASSIFY = "rationale_classify"
PROMPT = "rationale_prompt"
OCCLUSION = "rationale_occlusion"
PERTURB = "rationale_perturb"
STAGES: Final[tuple[str, ...]] = (CLASSIFY, PROMPT, OCCLUSION, PERTURB)
SPELLS: Final = len(SPELLINGS)

PROMPT_GOLD, PROMPT_PREDICTED = 0, 1
"""Sub-indices of the rationale prompts: the gold label shown, the predicted one (asked only
when it differs from the gold, or without a gold label)."""

# the perturbed texts of rationale_perturb, by slot (its text number)
HUMAN_WITHOUT, HUMAN_ONLY, EVERYTHING_WITHOUT = 0, 1, 2
PROMPT_WITHOUT, PROMPT_ONLY, OCCLUSION_WITHOUT, OCCLUSION_ONLY = 3, 4, 5, 6
RANDOM_FIRST = 7
"""RANDOM seed s removes its mask in slot ``RANDOM_FIRST + s``."""
GRADIENT_SLOTS: Final[dict[str, tuple[int, int]]] = {
    method: (2001 + 2 * i, 2002 + 2 * i) for i, method in enumerate(GRADIENT_METHODS)
}
"""Each gradient method's rationale: its text without R and with only R (past every RANDOM
seed's slot: at most 1000 seeds)."""

DEFAULT_RATIO = 0.2
"""Top-Ratio's ratio when the run has none (a dataset without annotator rationales): P2's
e-SNLI figure."""


@dataclass
class Scored:
    """A text's forced spellings as they come in."""

    logprobs: dict[int, float] = field(default_factory=dict)

    def scores(self) -> LabelScores | None:
        """The label scores once every spelling is in."""
        if len(self.logprobs) < SPELLS:
            return None
        return label_scores({SPELLINGS[i][0]: lp for i, lp in self.logprobs.items()})


@dataclass(frozen=True)
class PromptedAnswer:
    """A rationale prompt's answer as the plan read it: the label it showed and the parse."""

    label: Label
    parsed: RationaleAnswer


class RationalePlan:
    """One instance's work in the rationales suite."""

    def __init__(
        self, instance: InstanceRecord, config: RunConfig, attribute: Attribute | None = None
    ):
        settings: RationaleSettings = rationale_settings(config)
        self.settings = settings
        chosen = attributions_of(settings)
        self.occluding = "occlusion" in chosen
        self.gradient_methods = tuple(m for m in GRADIENT_METHODS if m in chosen)
        self.attribute = attribute if self.gradient_methods else None
        self.gradients: Gradients | None = None
        """The rationale_gradient stage's word scores once ŷ is known (None: not computed)."""
        self.text = instance.text
        units = word_units(instance.text, instance.extra)
        self.gold: Gold | None = units.gold
        self.gold_problem: str | None = units.problem
        self.tokens: tuple[str, ...] = units.tokens
        self.gold_label: Label | None = gold_label(instance.label)
        n = len(self.tokens)
        hard_size = sum(self.gold.hard) if self.gold else None
        self.ratio = settings.ratio or DEFAULT_RATIO
        self.prompt_k = strategy_k(
            settings.strategy, n, gold_size=hard_size, ratio=self.ratio, k=settings.k
        )
        self.prompting = settings.strategy != "top_var" or self.prompt_k is not None
        self.occlusion_k = (
            top_ratio_k(n, self.ratio) if settings.strategy == "unbound" else self.prompt_k
        )
        self._occlusion_texts = [
            self.removed([1 if i == index else 0 for i in range(n)]) for index in range(n)
        ]
        self.slot_texts: dict[int, str] = {}
        self.masks: dict[int, tuple[int, ...]] = {}
        self.scored: dict[str, Scored] = {}
        self.asked: dict[str, int] = {stage: 0 for stage in STAGES}
        self.predicted: Label | None = None
        self.prompt_answers: dict[int, RationaleAnswer] = {}
        self.prompts_asked: list[int] = []
        self.occlusion_done = not self.occluding
        self.has_random = (
            self.gold is not None and any(self.gold.hard) and settings.random_seeds > 0
        )
        self.random_asked = 0
        """RANDOM seeds asked so far (all of them once :attr:`random_done`)."""
        self.random_done = not (self.has_random and adaptive_random(settings))

    # ------------------------------------------------------------------ texts

    def removed(self, mask: Sequence[int]) -> str:
        """The text without the marked words (the run's removal mode)."""
        return without(self.tokens, mask, self.settings.removal)

    def occlusion_text(self, index: int) -> str:
        """The text without word ``index``."""
        return self._occlusion_texts[index]

    def _score(self, stage: str, number: int, text: str) -> list[Task]:
        """The forced spellings of ``text`` (none when the instance asked for it already)."""
        if text in self.scored:
            return []
        self.scored[text] = Scored()
        self.asked[stage] += SPELLS
        messages = classify_messages(text)
        return [
            Task(stage, number * SPELLS + i, None, messages, forced=spelling)
            for i, (spelling, _) in enumerate(SPELLINGS)
        ]

    def _perturb(self, mask: Sequence[int], without_slot: int, only_slot: int | None) -> list[Task]:
        """The texts without and with only a rationale (§6.2): nothing to remove without R
        (comp and flip are 0), and only R of all words is the full text."""
        tasks: list[Task] = []
        self.masks[without_slot] = tuple(mask)
        if any(mask):
            text = self.removed(mask)
            self.slot_texts[without_slot] = text
            tasks += self._score(PERTURB, without_slot, text)
        if only_slot is not None:
            self.masks[only_slot] = tuple(mask)
            text = only(self.tokens, mask)
            self.slot_texts[only_slot] = text
            tasks += self._score(PERTURB, only_slot, text)
        return tasks

    # ------------------------------------------------------------------ the plan

    def start(self) -> Sequence[Task]:
        """The full text, each leave-one-out text and the baselines' texts."""
        tasks = self._score(CLASSIFY, 0, self.text)
        for index in range(len(self.tokens) if self.occluding else 0):
            tasks += self._score(OCCLUSION, index, self.occlusion_text(index))
        tasks += self._perturb([1] * len(self.tokens), EVERYTHING_WITHOUT, None)
        if self.gold is not None and any(self.gold.hard):  # (an empty HARD: no baselines)
            hard = self.gold.hard
            tasks += self._perturb(hard, HUMAN_WITHOUT, HUMAN_ONLY)
        if self.has_random:
            first = self.settings.random_seeds
            if not self.random_done:
                first = min(self.settings.random_min_seeds, first)
            tasks += self._random_round(first)
        return tasks

    def _random_round(self, count: int) -> list[Task]:
        """The next ``count`` RANDOM masks' texts (seed s removes mask s)."""
        hard = self.gold.hard if self.gold else []
        tasks: list[Task] = []
        for seed in range(self.random_asked, self.random_asked + count):
            mask = random_mask(len(hard), sum(hard), seed)
            tasks += self._perturb(mask, RANDOM_FIRST + seed, None)
        self.random_asked += count
        return tasks

    def random_effects(self) -> tuple[list[float], list[float]] | None:
        """comp and flip of every RANDOM seed asked (§6.2), once they and the full text are
        scored."""
        full = self.full_scores()
        if full is None:
            return None
        label = full.predicted
        comps, flips = [], []
        for seed in range(self.random_asked):
            scores = self.scores_of(self.slot_texts[RANDOM_FIRST + seed])
            if scores is None:
                return None
            comps.append(full.p(label) - scores.p(label))
            flips.append(float(scores.predicted != label))
        return comps, flips

    def _more_random(self) -> list[Task]:
        """Adaptive RANDOM: another round while the comp or flip mean is not tight enough
        (none once it is, or once every seed is asked)."""
        tolerance = self.settings.random_tolerance or 0.0
        while not self.random_done:
            effects = self.random_effects()
            if effects is None:
                return []
            left = self.settings.random_seeds - self.random_asked
            if left <= 0 or max(half_width_95(values) for values in effects) <= tolerance:
                self.random_done = True
                return []
            tasks = self._random_round(min(self.settings.random_min_seeds, left))
            if tasks:  # (a round of texts all scored already is decided at once)
                return tasks
        return []

    def advance(self, task: Task, reply: Reply) -> tuple[Sequence[Task], object]:
        """Record a forced spelling's score, or parse a prompted answer; then whatever they
        make possible."""
        if task.stage == PROMPT:
            return self._prompted(task.sub_index, reply.text)
        text = self.scored_text(task.stage, task.sub_index // SPELLS)
        self.scored.setdefault(text, Scored()).logprobs[task.sub_index % SPELLS] = reply.logprob_sum
        tasks: list[Task] = []
        full = self.full_scores()
        if full is not None and self.predicted is None:
            self.predicted = full.predicted
            tasks += self._prompts()
            tasks += self._gradient()
        if full is not None and not self.occlusion_done and self.occlusion_scores() is not None:
            self.occlusion_done = True
            scores = self.occlusion_scores() or []
            if self.occlusion_k is not None and scores:
                tasks += self._perturb(
                    top_k(scores, self.occlusion_k), OCCLUSION_WITHOUT, OCCLUSION_ONLY
                )
        # (any forced reply: a RANDOM mask's text may be a leave-one-out text, scored as one)
        tasks += self._more_random()
        return tasks, None

    def _gradient(self) -> list[Task]:
        """The rationale_gradient stage once ŷ is known (§4.4): each method's word scores of
        ŷ's first spelling, then each method's top-k rationale perturbed (as occlusion's)."""
        if self.attribute is None or self.predicted is None or not self.tokens:
            return []
        self.gradients = self.attribute(self.text, self.tokens, self.predicted)
        tasks: list[Task] = []
        if self.gradients is None or self.occlusion_k is None:
            return tasks
        for method in self.gradient_methods:
            without_slot, only_slot = GRADIENT_SLOTS[method]
            mask = top_k(self.gradients.scores[method], self.occlusion_k)
            tasks += self._perturb(mask, without_slot, only_slot)
        return tasks

    def _prompts(self) -> list[Task]:
        """The rationale prompts: the gold label shown (for plausibility) and the predicted
        one (for faithfulness), one call when they are the same."""
        if not self.prompting:
            return []
        wanted: list[tuple[int, Label]] = []
        if self.gold_label is not None:
            wanted.append((PROMPT_GOLD, self.gold_label))
        if self.predicted is not None and self.gold_label != self.predicted:
            wanted.append((PROMPT_PREDICTED, self.predicted))
        tasks = []
        for sub_index, label in wanted:
            messages = rationale_messages(self.text, label, self.settings.variant, self.prompt_k)
            self.prompts_asked.append(sub_index)
            self.asked[PROMPT] += 1
            tasks.append(
                Task(
                    PROMPT,
                    sub_index,
                    None,
                    messages,
                    greedy=True,
                    max_new_tokens=self.settings.max_new_tokens,
                )
            )
        return tasks

    def _prompted(self, sub_index: int, answer: str) -> tuple[list[Task], PromptedAnswer]:
        """A prompted answer parsed; the one for ŷ has its rationale perturbed."""
        parsed = parse_rationale(answer, self.tokens, self.prompt_k)
        self.prompt_answers[sub_index] = parsed
        tasks: list[Task] = []
        if sub_index == self.faithfulness_prompt():
            tasks = self._perturb(parsed.mask, PROMPT_WITHOUT, PROMPT_ONLY)
        return tasks, PromptedAnswer(self.label_shown(sub_index), parsed)

    def label_shown(self, sub_index: int) -> Label:
        """The label a rationale prompt shows."""
        shown = self.gold_label if sub_index == PROMPT_GOLD else self.predicted
        if shown is None:
            raise ValueError("the label is not known yet")
        return shown

    def faithfulness_prompt(self) -> int:
        """The sub-index of the prompt whose label shown is ŷ."""
        return PROMPT_GOLD if self.gold_label == self.predicted else PROMPT_PREDICTED

    def open_stages(self) -> tuple[str, ...]:
        """The stages that may still grow: the prompts until ŷ is known (then they are asked
        at once), the perturbed texts until the prompted rationale and the occlusion scores
        are in; the full text and the leave-one-out texts are all asked at the start."""
        if self.planned() is not None:
            return ()
        return (PERTURB,) if self.predicted is not None else (PROMPT, PERTURB)

    def planned(self) -> dict[str, int] | None:
        """Generations per stage, once every follow-up is known."""
        if self.predicted is None or not self.occlusion_done or not self.random_done:
            return None
        if any(sub not in self.prompt_answers for sub in self.prompts_asked):
            return None
        return {stage: count for stage, count in self.asked.items() if count}

    # ------------------------------------------------------------------ reading scores

    def scored_text(self, stage: str, number: int) -> str:
        """The text a forced reply of ``stage`` with text number ``number`` scored."""
        if stage == CLASSIFY:
            return self.text
        if stage == OCCLUSION:
            return self.occlusion_text(number)
        return self.slot_texts[number]

    def scores_of(self, text: str) -> LabelScores | None:
        """The label scores of a text once all its spellings are in."""
        found = self.scored.get(text)
        return found.scores() if found else None

    def full_scores(self) -> LabelScores | None:
        """The label scores of the full text."""
        return self.scores_of(self.text)

    def occlusion_scores(self) -> list[float] | None:
        """a_i = L(x) − L(x without word i) with L the log-odds of ŷ (§4.2), once all are in."""
        full = self.full_scores()
        if full is None:
            return None
        label = full.predicted
        scores = []
        for index in range(len(self.tokens)):
            without_i = self.scores_of(self.occlusion_text(index))
            if without_i is None:
                return None
            scores.append(full.log_odds(label) - without_i.log_odds(label))
        return scores


def replay(plan: RationalePlan, replies: Iterable[tuple[Task, Reply]]) -> None:
    """Feed stored answers through a fresh plan (in stage order: what each needs is in)."""
    order = {stage: index for index, stage in enumerate((CLASSIFY, OCCLUSION, PROMPT, PERTURB))}
    plan.start()
    for task, reply in sorted(replies, key=lambda tr: (order[tr[0].stage], tr[0].sub_index)):
        plan.advance(task, reply)
