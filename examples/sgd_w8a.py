"""Train a linear scorer on w8a by SGD on the structured-hinge AP loss and compare its
test AP with APSVM's (2018 paper, §2.1: any model that outputs scores can minimise the
AP upper bound).

    python examples/sgd_w8a.py            # NumPy
    python examples/sgd_w8a.py --torch    # the same model through svmrank.losses_torch
    python examples/sgd_w8a.py --quick    # a subsample, in seconds

Objective: λ/2 ‖w‖² + J(Xw) with J the structured-hinge AP loss
(svmrank.inference.structured_hinge) and λ = 1/C, the APSVM problem with the same C;
mini-batch SGD with a decaying step and iterate averaging. J is not a sum over
samples, so a batch's step follows the gradient of J(X_b w) on that batch: SGD
minimises the surrogate λ/2 ‖w‖² + E_b J(X_b w), which the final comparison measures
on the full objective.
"""
import sys
import time

import numpy as np

from example_data import data_file, parser, positive, run, save, table
from svmrank import APSVM
from svmrank.inference import structured_hinge
from svmrank.io.svmlight import load_svmlight
from svmrank.metrics import average_precision
from svmrank.plot import new_figure, pr_curve


def sgd(X, y, C, epochs, batch, step, seed, use_torch=False):
    """Mini-batch SGD towards λ/2‖w‖² + J(Xw) (λ = 1/C), each step on the batch's
    J(X_b w) (a surrogate: J is not a sum over samples), iterates averaged over the
    second half of the epochs."""
    rng = np.random.default_rng(seed)
    n, d = X.shape
    lam = 1.0 / C
    w, w_avg, t, n_avg = np.zeros(d), np.zeros(d), 0, 0
    if use_torch:
        import torch
        from svmrank.losses_torch import structured_hinge_loss
    for epoch in range(epochs):
        perm = rng.permutation(n)
        for start in range(0, n, batch):
            rows = perm[start:start + batch]
            yb = y[rows] > 0
            if yb.all() or not yb.any():
                continue
            Xb = X[rows]
            if use_torch:
                s = torch.tensor(Xb @ w, requires_grad=True)
                structured_hinge_loss(s, torch.tensor(yb)).backward()
                g_s = s.grad.numpy()
            else:
                _, g_s = structured_hinge(Xb @ w, yb, loss="ap")
            t += 1
            eta = step / (1.0 + lam * step * t)
            w -= eta * (lam * w + Xb.T @ g_s)
            if 2 * epoch >= epochs:
                n_avg += 1
                w_avg += (w - w_avg) / n_avg
    return w_avg


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--C", type=positive(float), default=100.0)
    p.add_argument("--epochs", type=positive(int), default=50)
    p.add_argument("--batch", type=positive(int), default=2048)
    p.add_argument("--step", type=positive(float), default=20.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--torch", action="store_true", help="use the PyTorch wrapper")
    args = p.parse_args(argv)
    if args.torch:  # (before the data: the wrapper's one-line message names the extra)
        try:
            import svmrank.losses_torch  # noqa: F401
        except ImportError as exc:
            sys.exit(f"sgd_w8a.py: {exc}")
    X, y, _ = load_svmlight(data_file("w8a", "w8a.train"))
    Xt, yt, _ = load_svmlight(data_file("w8a", "w8a.test"), n_features=X.shape[1])
    if args.quick:  # every 10th sample, fewer epochs, one APSVM tolerance
        X, y, Xt, yt, args.epochs = X[::10], y[::10], Xt[::5], yt[::5], min(args.epochs, 10)
    t0 = time.perf_counter()
    w = sgd(X, y, args.C, args.epochs, args.batch, args.step, args.seed, args.torch)
    t_sgd = time.perf_counter() - t0

    def objective(v):
        """λ/2‖v‖² + J(Xv) scaled by C: APSVM's primal objective ½‖v‖² + C ξ."""
        return 0.5 * float(v @ v) + args.C * structured_hinge(X @ v, y > 0, loss="ap")[0]

    print(f"w8a ({X.shape[0]} training samples), C = {args.C:g}: test AP and primal "
          "objective ½‖w‖² + C ξ (the problem both solve)")
    name = "SGD, " + ("PyTorch" if args.torch else "NumPy")
    rows = [(name, average_precision(yt > 0, Xt @ w), objective(w), "", f"{t_sgd:.1f}s")]
    figure = new_figure((6, 4.5))
    ax = figure.add_subplot()
    pr_curve(yt, Xt @ w, ax=ax, label=name)
    # APSVM stops within C·ε of the optimum; near-optimal solutions differ in test AP,
    # so tighter solutions (ε = 1e-6: the optimum) are shown beside the default ε
    for eps in ((1e-3,) if args.quick else (1e-3, 1e-4, 1e-6)):
        t0 = time.perf_counter()
        model = APSVM(C=args.C, epsilon=eps).fit(X, y)
        scores = model.decision_function(Xt)
        rows.append((f"APSVM(epsilon={eps:g})", average_precision(yt > 0, scores),
                     objective(model.coef_.ravel()), f"{model.result_.duality_gap:.2g}",
                     f"{time.perf_counter() - t0:.1f}s"))
        pr_curve(yt, scores, ax=ax, label=rows[-1][0])
    table(rows, ("model", "test AP", "objective", "duality gap", "time"))
    save(figure, args, __file__)


if __name__ == "__main__":
    run(main)
