"""P2's Attention, Saliency and Input×Gradient of one prompt in one forward and one backward
pass of a torch causal LM (``docs/methods/rationales.md``, attribution). torch is imported
only when :func:`token_attributions` runs.

The input is the prompt's token ids with the label's ids teacher-forced after it; the target
T is the sum of the label tokens' log-softmax, each at the position before it. Per prompt
token t, with e_t its input embedding and g_t = ∂T/∂e_t (Inseq's defaults, reduced over the
embedding dimension with the L2 norm): Saliency ‖g_t‖₂, Input×Gradient ‖e_t ⊙ g_t‖₂, and
Attention the mean over every layer and head of the attention weight from the last prompt
position (the one that predicts the label's first token) to t.

Memory grows with the square of the prompt only one layer at a time: each decoder layer runs
under activation checkpointing (its inputs kept, its activations, the N×N attention weights of
every head among them, recomputed layer by layer in the backward pass), and a hook on each
attention module keeps of its weights only the row Attention reads, as they are computed. The
values are those of the plain pass (the same operations on the same inputs);
:func:`pass_bytes` is what the pass needs beside the weights, for the memory check.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
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


def pass_bytes(config: Any, positions: int, target_tokens: int, bytes_per_value: int = 4) -> int:
    """What one pass over ``positions`` tokens needs beside the weights, from the model's
    ``config`` (a transformers config): every layer's input and its gradient kept (the
    checkpoints), one layer's activations recomputed with their gradients (the attention
    weights of every head, N×N: scores, weights, their gradients and the allocator's slack;
    the feed-forward's), and the logits of the label's positions over the vocabulary. The
    factors are set above what was measured: on the embedded model a 1,454-token prompt's
    pass raised the peak RSS by 1.14 GiB, this says 1.2 GiB."""
    hidden = int(getattr(config, "hidden_size", 0) or 0)
    layers = int(getattr(config, "num_hidden_layers", 0) or 0)
    heads = int(getattr(config, "num_attention_heads", 0) or 0)
    inner = int(getattr(config, "intermediate_size", 0) or 4 * hidden)
    vocabulary = int(getattr(config, "vocab_size", 0) or 0)
    n = positions
    kept = 6 * layers * n * hidden
    one_layer = 8 * heads * n * n + 12 * n * hidden + 6 * n * inner
    logits = 3 * target_tokens * vocabulary
    return bytes_per_value * (kept + one_layer + logits)


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
    rows: dict[int, Any] = {}
    with ExitStack() as bounded, torch.enable_grad():
        attention_modules = bounded.enter_context(_attention_rows(model, n, rows))
        bounded.enter_context(_checkpointed_layers(model))
        embeds = model.get_input_embeddings()(ids).detach().requires_grad_(True)
        out = model(
            inputs_embeds=embeds,
            output_attentions=not attention_modules,  # (no hooks found: the model's own)
            use_cache=False,
            logits_to_keep=len(target_ids),  # (positions n - 1 on: the label's tokens)
        )
        logp = torch.log_softmax(out.logits[0].float(), dim=-1)
        target = torch.stack([logp[j, token] for j, token in enumerate(target_ids)]).sum()
        (grad,) = torch.autograd.grad(target, embeds)
    g = grad[0, :n].float()
    e = embeds[0, :n].detach().float()
    with torch.no_grad():
        if attention_modules:
            if len(rows) != len(attention_modules):
                raise RuntimeError(
                    f"{len(rows)} of {len(attention_modules)} attention layers gave weights"
                )
            attention = torch.stack([rows[key] for key in sorted(rows)])
        else:
            attention = torch.stack([a[0, :, n - 1, :n].float() for a in out.attentions])
        return TokenAttributions(
            attention=tuple(attention.mean(dim=(0, 1)).tolist()),
            saliency=tuple(g.norm(dim=-1).tolist()),
            input_x_gradient=tuple((e * g).norm(dim=-1).tolist()),
            target_logprob=float(target.detach()),
        )


def _attention_classes(model: Any) -> list[tuple[type, int]]:
    """The attention modules' classes and where their weights are in their output, as the
    model declares them for transformers' own ``output_attentions`` (``_can_record_outputs``)."""
    declared = getattr(type(model), "_can_record_outputs", None) or {}
    specs: Any = declared.get("attentions")
    found: list[tuple[type, int]] = []
    for spec in specs if isinstance(specs, list) else [specs]:
        target = spec if isinstance(spec, type) else getattr(spec, "target_class", None)
        if isinstance(target, type):
            found.append((target, 1 if target is spec else int(getattr(spec, "index", 1))))
    return found


@contextmanager
def _attention_rows(model: Any, n: int, rows: dict[int, Any]) -> Iterator[list[Any]]:
    """Hooks on every attention module that keep, of each one's weights as they are
    computed, the row of position ``n - 1`` over the prompt (per head, float32) in ``rows``
    by layer order; the first computation of a layer counts (a checkpoint's recompute gives
    the same). Yields the modules hooked (none: the model declares no attention class)."""
    classes = _attention_classes(model)
    modules: list[tuple[Any, int]] = [
        (module, index)
        for module in model.modules()
        for cls, index in classes
        if isinstance(module, cls)
    ]
    handles = []
    for order, (module, index) in enumerate(modules):

        def keep_row(
            _module: Any, _inputs: Any, output: Any, order: int = order, at: int = index
        ) -> None:
            weights = output[at] if isinstance(output, tuple) else None
            if weights is not None and order not in rows:
                rows[order] = weights[0, :, n - 1, :n].detach().float().clone()

        handles.append(module.register_forward_hook(keep_row))
    try:
        yield [module for module, _ in modules]
    finally:
        for handle in handles:
            handle.remove()


@contextmanager
def _checkpointed_layers(model: Any) -> Iterator[int]:
    """Every decoder layer (transformers' ``GradientCheckpointingLayer``) run under torch's
    non-reentrant activation checkpointing while the context lasts, whatever the model's
    training mode; yields how many."""
    from torch.utils.checkpoint import checkpoint

    try:
        from transformers.modeling_layers import GradientCheckpointingLayer
    except ImportError:  # pragma: no cover - an older transformers: the plain pass
        yield 0
        return
    layers = [m for m in model.modules() if isinstance(m, GradientCheckpointingLayer)]
    for layer in layers:

        def checkpointed(*args: Any, _forward: Any = layer.forward, **kwargs: Any) -> Any:
            return checkpoint(_forward, *args, use_reentrant=False, **kwargs)

        layer.forward = checkpointed
    try:
        yield len(layers)
    finally:
        for layer in layers:
            del layer.forward
