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
    best = 0.0
    for labelling in itertools.product((-1.0, 1.0), repeat=n):
        labelling = np.array(labelling)
        delta = measure_loss(loss, *contingency(sign, labelling), k=k)
        if delta is None:
            continue
        best = max(best, delta + ((labelling - sign) * scores).sum() / (2 * n))
    return best


def perf_objective(w, X, y, loss, C, k=None, percent=True):
    """SVM-perf's objective ½‖w‖² + C ξ(w), computed as SVM-perf defines it: labels
    ±50/n, Ψ(ŷ) = Σ_i ŷ_i x_i, the loss in percent (the zero/one loss in {0, 1}),
    ξ(w) = max(0, max_ŷ Δ(y, ŷ) − w·(Ψ(y) − Ψ(ŷ))) over every labelling (small n)."""
    X = np.asarray(X, dtype=float)
    sign = np.where(np.asarray(y) > 0, 1.0, -1.0)
    n = len(sign)
    unit = 0.5 * 100.0 / n
    psi_y = X.T @ (unit * sign)
    xi = 0.0
    for labelling in itertools.product((-1.0, 1.0), repeat=n):
        labelling = np.array(labelling)
        delta = measure_loss(loss, *contingency(sign, labelling), k=k)
        if delta is None:
            continue
        delta = delta if loss == "zero_one" else 100.0 * delta
        xi = max(xi, delta - w @ (psi_y - X.T @ (unit * labelling)))
    return 0.5 * w @ w + C * xi


def perf_roc_objective(w, X, y, C):
    """SVM-perf's objective for -l 10 (ROC area): Ψ(ŷ) = 50/(PN) Σ_{i∈P, j∈N} ŷ_ij (x_i −
    x_j), the loss 100 · swapped pairs / (PN); ξ by brute force over the pair
    orientations' rankings (every permutation: small n)."""
    X = np.asarray(X, dtype=float)
    rel = np.asarray(y) > 0
    pos, neg = np.flatnonzero(rel), np.flatnonzero(~rel)
    P, N = len(pos), len(neg)
    s = X @ w

    def value(position):
        total = 0.0
        for i in pos:
            for j in neg:
                below = position[i] > position[j]  # swapped: the negative ranks higher
                # Δ term + w·Ψ(ŷ) − w·Ψ(y) for this pair
                total += 100.0 * below / (P * N) - (100.0 / (P * N)) * below * (s[i] - s[j])
        return total

    xi = 0.0
    for order in itertools.permutations(range(len(rel))):
        position = np.empty(len(rel), dtype=int)
        position[list(order)] = np.arange(len(rel))
        xi = max(xi, value(position))
    return 0.5 * w @ w + C * xi
