"""Slow, obviously-correct reference for SVM-perf's multivariate losses: enumerate every
labelling of a small sample and evaluate Δ + w·Ψ(ŷ) − w·Ψ(y) from the definitions."""
import itertools

import numpy as np


def contingency(y, labelling):
    """(a, b, c, d): true positives, false positives, false negatives, true negatives."""
    y, yhat = np.asarray(y) > 0, np.asarray(labelling) > 0
    return (int((y & yhat).sum()), int((~y & yhat).sum()), int((y & ~yhat).sum()),
            int((~y & ~yhat).sum()))


def measure_loss(loss, a, b, c, d, k=None):
    """Δ in [0, 1] from precision, recall and F1 as the measures define them; None for a
    labelling outside the loss's domain (SVM-perf's: PRBEP at a + b = P, Prec@k at
    a + b >= k, Rec@k at a + b <= k)."""
    P = a + c
    precision = a / (a + b) if a + b else 0.0
    recall = a / P if P else 0.0
    if loss == "error":
        return (b + c) / (a + b + c + d)
    if loss == "zero_one":
        return float(b + c > 0)
    if loss == "f1":
        f1 = 2 * precision * recall / (precision + recall) if a else 0.0
        return 1.0 - f1
    if loss == "prbep":
        return 1.0 - precision if a + b == P else None
    if loss == "prec@k":
        return 1.0 - precision if a + b >= k else None
    if loss == "rec@k":
        return 1.0 - recall if a + b <= k else None
    raise ValueError(loss)


def brute_force_violation(scores, y, loss, k=None):
    """max over every labelling ŷ (the true one included) of Δ(y, ŷ) + w·(Ψ(ŷ) − Ψ(y))
    with Ψ(ŷ) = 1/(2n) Σ ŷ_i x_i, i.e. Δ + 1/(2n) Σ (ŷ_i − y_i) s_i."""
    scores = np.asarray(scores, dtype=float)
    sign = np.where(np.asarray(y) > 0, 1.0, -1.0)
    n = len(scores)
    return max([0.0] + [delta + ((labelling - sign) * scores).sum() / (2 * n)
                        for labelling, delta in labellings(sign, loss, k)])


def labellings(sign, loss, k=None):
    """(ŷ, Δ(y, ŷ) in [0, 1]) for every labelling ŷ in the loss's domain."""
    for labelling in itertools.product((-1.0, 1.0), repeat=len(sign)):
        labelling = np.array(labelling)
        delta = measure_loss(loss, *contingency(sign, labelling), k=k)
        if delta is not None:
            yield labelling, delta


def perf_objective(w, X, y, loss, C, k=None):
    """SVM-perf's objective ½‖w‖² + C ξ(w), computed as SVM-perf defines it: labels
    ±50/n, Ψ(ŷ) = Σ_i ŷ_i x_i, the loss in percent (the zero/one loss in {0, 1}),
    ξ(w) = max(0, max_ŷ Δ(y, ŷ) − w·(Ψ(y) − Ψ(ŷ))) over every labelling (small n)."""
    X = np.asarray(X, dtype=float)
    sign = np.where(np.asarray(y) > 0, 1.0, -1.0)
    n = len(sign)
    unit = 0.5 * 100.0 / n
    psi_y = X.T @ (unit * sign)
    percent = 1.0 if loss == "zero_one" else 100.0
    xi = max([0.0] + [percent * delta - w @ (psi_y - X.T @ (unit * labelling))
                      for labelling, delta in labellings(sign, loss, k)])
    return 0.5 * w @ w + C * xi


def perf_rank_objective(w, X, y, C, loss):
    """SVM-perf's objective for -l 10 (ROC area) and -l 11 (AP) by brute force over every
    ranking (small n): Ψ(ŷ) = u Σ_{i∈P, j∈N} ŷ_ij (x_i − x_j) with u = 50/(PN) for ROC
    area and 1 for AP (its labels), the loss in percent (swapped pairs / (PN), 1 − AP)."""
    X = np.asarray(X, dtype=float)
    rel = np.asarray(y) > 0
    pos, neg = np.flatnonzero(rel), np.flatnonzero(~rel)
    P, N = len(pos), len(neg)
    unit = 50.0 / (P * N) if loss == "roc" else 1.0
    s = X @ w
    xi = 0.0
    for order in itertools.permutations(range(len(rel))):
        position = np.empty(len(rel), dtype=int)
        position[list(order)] = np.arange(len(rel))
        swapped = [(i, j) for i in pos for j in neg if position[i] > position[j]]
        if loss == "roc":
            delta = 100.0 * len(swapped) / (P * N)
        else:
            ranks = np.sort(position[pos]) + 1
            delta = 100.0 * (1.0 - np.mean(np.arange(1, P + 1) / ranks))
        # w·(Ψ(y) − Ψ(ŷ)): each swapped pair counts 2u (s_i − s_j)
        xi = max(xi, delta - sum(2.0 * unit * (s[i] - s[j]) for i, j in swapped))
    return 0.5 * w @ w + C * xi
