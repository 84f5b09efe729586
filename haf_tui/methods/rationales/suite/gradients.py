"""P2's Attention, Saliency and Input×Gradient of one prompt in one forward and one backward
pass of a torch causal LM (``docs/methods/rationales.md``, attribution). torch is imported
only when :func:`token_attributions` runs.

The input is the prompt's token ids with the label's ids teacher-forced after it; the target
T is the sum of the label tokens' log-softmax, each at the position before it. Per prompt
token t, with e_t its input embedding and g_t = ∂T/∂e_t (Inseq's defaults, reduced over the
embedding dimension with the L2 norm): Saliency ‖g_t‖₂, Input×Gradient ‖e_t ⊙ g_t‖₂, and
Attention the mean over every layer and head of the attention weight from the last prompt
position (the one that predicts the label's first token) to t.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TokenAttributions:
    """One score per prompt token of each method, and T (the label's log-probability)."""

    attention: tuple[float, ...]
    saliency: tuple[float, ...]
    input_x_gradient: tuple[float, ...]
    target_logprob: float

    def of(self, method: str) -> tuple[float, ...]:
        """The scores of ``method`` (attention, saliency, input_x_gradient)."""
        scores: tuple[float, ...] = getattr(self, method)
        return scores


def token_attributions(
    model: Any, prompt_ids: Sequence[int], target_ids: Sequence[int]
) -> TokenAttributions:
    """The three methods' scores of every prompt token for the label ``target_ids``
    (``model``: a transformers causal LM loaded with eager attention, in eval mode)."""
    import torch

    if not prompt_ids or not target_ids:
        raise ValueError("a prompt and a label of at least one token each")
    n = len(prompt_ids)
    device = next(model.parameters()).device
    ids = torch.tensor([[*prompt_ids, *target_ids[:-1]]], device=device)
    with torch.enable_grad():
        embeds = model.get_input_embeddings()(ids).detach().requires_grad_(True)
        out = model(
            inputs_embeds=embeds,
            output_attentions=True,
            use_cache=False,
            logits_to_keep=len(target_ids),  # (positions n - 1 on: the label's tokens)
        )
        logp = torch.log_softmax(out.logits[0].float(), dim=-1)
        target = torch.stack([logp[j, token] for j, token in enumerate(target_ids)]).sum()
        (grad,) = torch.autograd.grad(target, embeds)
    g = grad[0, :n].float()
    e = embeds[0, :n].detach().float()
    with torch.no_grad():
        attention = torch.stack([a[0, :, n - 1, :n].float() for a in out.attentions])
        return TokenAttributions(
            attention=tuple(attention.mean(dim=(0, 1)).tolist()),
            saliency=tuple(g.norm(dim=-1).tolist()),
            input_x_gradient=tuple((e * g).norm(dim=-1).tolist()),
            target_logprob=float(target.detach()),
        )
