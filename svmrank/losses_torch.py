"""PyTorch wrapper of the structured-hinge rank loss (optional extra ``[torch]``).

``structured_hinge_loss(scores, labels)`` is differentiable in ``scores`` through its
semi-gradient coef(R̄) − coef(R*) (2018 paper, eq. 5), so any network that outputs one
score per sample can minimise the AP / NDCG upper bound (eq. 4)::

    loss = structured_hinge_loss(model(x).squeeze(-1), y, loss="ap")
    loss.backward()
"""
import numpy as np
import torch

from .losses import structured_hinge

__all__ = ["StructuredHinge", "structured_hinge_loss"]


class StructuredHinge(torch.autograd.Function):
    """autograd.Function: forward J(s), backward grad_output · (coef(R̄) − coef(R*))."""

    @staticmethod
    def forward(ctx, scores, labels, loss="ap", qid=None, method="qs"):
        s = scores.detach().to("cpu", torch.float64).numpy()
        lab = labels.detach().to("cpu").numpy() if torch.is_tensor(labels) else np.asarray(labels)
        q = qid.detach().to("cpu").numpy() if torch.is_tensor(qid) else qid
        value, grad = structured_hinge(s, lab, loss=loss, qid=q, method=method)
        ctx.save_for_backward(torch.as_tensor(grad, dtype=scores.dtype, device=scores.device))
        return scores.new_tensor(value)

    @staticmethod
    def backward(ctx, grad_output):
        (grad,) = ctx.saved_tensors
        return grad_output * grad, None, None, None, None


def structured_hinge_loss(scores, labels, loss="ap", qid=None, method="qs"):
    """Structured-hinge rank loss of a 1-d score tensor (see
    :func:`svmrank.losses.structured_hinge`); a 0-d tensor with a gradient."""
    if scores.dim() != 1:
        raise ValueError(f"scores: expected a 1-d tensor, got shape {tuple(scores.shape)}")
    if not torch.is_floating_point(scores):  # (the value would be truncated to an integer)
        raise ValueError(f"scores: expected a floating-point tensor, got {scores.dtype}")
    return StructuredHinge.apply(scores, labels, loss, qid, method)
