"""PyTorch wrapper of the structured-hinge rank loss (optional extra ``[torch]``).

``structured_hinge_loss(scores, labels)`` is differentiable in ``scores`` through its
semi-gradient coef(R̄) − coef(R*) (2018 paper, eq. 5), so any network that outputs one
score per sample can minimise the AP / NDCG upper bound (eq. 4)::

    loss = structured_hinge_loss(model(x).squeeze(-1), y, loss="ap")
    loss.backward()

It also works under ``torch.func`` (``grad``, ``vjp``, ``jvp``/``jacfwd``, ``vmap``
over a batch of score vectors, one loss each).
"""
import numpy as np

try:
    import torch
except ImportError as exc:  # (the extra is optional: say how to get it)
    raise ImportError("svmrank.losses_torch needs PyTorch: pip install 'svmrank[torch]' "
                      f"(import torch failed: {exc})") from exc

from .inference import structured_hinge

__all__ = ["StructuredHinge", "structured_hinge_loss"]


def _numpy(x):
    return x.detach().to("cpu").numpy() if torch.is_tensor(x) else x


class StructuredHinge(torch.autograd.Function):
    """autograd.Function: forward (J(s), coef(R̄) − coef(R*)), backward
    grad_output · (coef(R̄) − coef(R*)); the second output is not differentiable."""

    @staticmethod
    def forward(scores, labels, loss="ap", qid=None, method="qs"):
        s = scores.detach().to("cpu", torch.float64).numpy()
        value, grad = structured_hinge(s, np.asarray(_numpy(labels)), loss=loss,
                                       qid=_numpy(qid), method=method)
        return (scores.new_tensor(value),
                torch.as_tensor(grad, dtype=scores.dtype, device=scores.device))

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, grad = output
        ctx.mark_non_differentiable(grad)
        ctx.save_for_backward(grad)
        ctx.save_for_forward(grad)

    @staticmethod
    def backward(ctx, grad_value, _grad_grad):
        (grad,) = ctx.saved_tensors
        return grad_value * grad, None, None, None, None

    @staticmethod
    def jvp(ctx, scores_tangent, *_):
        """Forward mode: the value moves by (coef(R̄) − coef(R*)) · ds."""
        (grad,) = ctx.saved_tensors
        return (grad * scores_tangent).sum(), None

    @staticmethod
    def vmap(info, in_dims, scores, labels, loss="ap", qid=None, method="qs"):
        """One loss per score vector of the batch (labels and qid batched or shared)."""
        def item(x, dim, k):  # (a list or tuple argument comes with a list of in_dims)
            return x.select(dim, k) if torch.is_tensor(x) and dim is not None else x

        if info.batch_size == 0:  # zeros computed from scores, so autograd links them
            s = (scores.movedim(in_dims[0], 0) if in_dims[0] is not None
                 else scores.unsqueeze(0).expand((0,) + tuple(scores.shape)))
            return (s.sum(dim=tuple(range(1, s.dim()))) * 0, s * 0), (0, 0)
        values, grads = [], []
        for k in range(info.batch_size):
            v, g = StructuredHinge.apply(item(scores, in_dims[0], k),
                                         item(labels, in_dims[1], k), loss,
                                         item(qid, in_dims[3], k), method)
            values.append(v)
            grads.append(g)
        return (torch.stack(values), torch.stack(grads)), (0, 0)


def structured_hinge_loss(scores, labels, loss="ap", qid=None, method="qs"):
    """Structured-hinge rank loss of a 1-d score tensor (see
    :func:`svmrank.inference.structured_hinge`); a 0-d tensor with a gradient."""
    if scores.dim() != 1:
        raise ValueError(f"scores: expected a 1-d tensor, got shape {tuple(scores.shape)}")
    if not torch.is_floating_point(scores):  # (the value would be truncated to an integer)
        raise ValueError(f"scores: expected a floating-point tensor, got {scores.dtype}")
    return StructuredHinge.apply(scores, labels, loss, qid, method)[0]
