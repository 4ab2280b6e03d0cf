"""Slow, obviously-correct references for loss-augmented inference: enumerate every
ranking (or every interleaving of the two score-sorted lists) and evaluate Δ + F
straight from the definitions."""
import itertools
import math

import numpy as np


def rank_loss(labels_in_order, loss):
    """Δ(R*, R) of a ranking given as the labels (True = relevant) from top to bottom."""
    rel = np.asarray(labels_in_order, dtype=bool)
    P, N = rel.sum(), (~rel).sum()
    positions = np.flatnonzero(rel) + 1
    if loss == "ap":
        return 1.0 - np.mean(np.arange(1, P + 1) / positions)
    if loss == "ndcg":
        ideal = sum(1.0 / math.log2(1 + i) for i in range(1, P + 1))
        return 1.0 - sum(1.0 / math.log2(1 + p) for p in positions) / ideal
    if loss == "roc":
        neg_above = np.cumsum(~rel)[rel]
        return neg_above.sum() / (P * N)
    raise ValueError(loss)


def discriminant(order, scores, rel):
    """F(X, R; w) = 1/(PN) Σ_{i∈P, j∈N} R_ij (s_i − s_j) for the ranking ``order``."""
    position = np.empty(len(order), dtype=int)
    position[np.asarray(order)] = np.arange(len(order))
    pos_idx, neg_idx = np.flatnonzero(rel), np.flatnonzero(~rel)
    total = 0.0
    for i in pos_idx:
        for j in neg_idx:
            total += (1.0 if position[i] < position[j] else -1.0) * (scores[i] - scores[j])
    return total / (len(pos_idx) * len(neg_idx))


def brute_force_permutations(scores, labels, loss="ap"):
    """max over ALL permutations of Δ + F (feasible for n <= 7)."""
    scores = np.asarray(scores, float)
    rel = np.asarray(labels) > 0
    best = -np.inf
    for order in itertools.permutations(range(len(scores))):
        value = rank_loss(rel[list(order)], loss) + discriminant(order, scores, rel)
        best = max(best, value)
    return best


def brute_force_interleavings(scores, labels, loss="ap"):
    """max over every interleaving of the score-sorted positives and negatives
    (2018 Observation 1): returns (objective, loss at the best, coef at the best)."""
    scores = np.asarray(scores, float)
    rel = np.asarray(labels) > 0
    pos = np.flatnonzero(rel)[np.argsort(-scores[rel], kind="stable")]
    neg = np.flatnonzero(~rel)[np.argsort(-scores[~rel], kind="stable")]
    n = len(scores)
    best = (-np.inf, None, None)
    for slots in itertools.combinations(range(n), len(pos)):
        order, p, q = [], iter(pos), iter(neg)
        slot_set = set(slots)
        for k in range(n):
            order.append(next(p) if k in slot_set else next(q))
        delta = rank_loss(rel[order], loss)
        value = delta + discriminant(order, scores, rel)
        if value > best[0] + 1e-12:
            coef = coef_of(order, rel)
            best = (value, delta, coef)
    return best


def coef_of(order, rel):
    """Per-sample coefficients c with F = c · s for the ranking ``order``."""
    P, N = rel.sum(), (~rel).sum()
    coef = np.zeros(len(order))
    neg_above = pos_above = 0
    for k in order:
        if rel[k]:
            coef[k] = (N - 2 * neg_above) / (P * N)
            pos_above += 1
        else:
            coef[k] = -(pos_above - (P - pos_above)) / (P * N)
            neg_above += 1
    return coef


def order_from_ranks(scores, labels, ranks):
    """The ranking (row indices, best first) that interleaving ranks describe: the
    negatives of rank i (in score order, rows breaking ties) just above the i-th
    positive, those of rank P + 1 below every positive."""
    scores = np.asarray(scores, float)
    rel = np.asarray(labels) > 0
    pos = np.flatnonzero(rel)[np.argsort(-scores[rel], kind="stable")]
    neg = np.flatnonzero(~rel)[np.argsort(-scores[~rel], kind="stable")]
    order = []
    for i in range(1, len(pos) + 2):
        order += [k for k in neg if ranks[k] == i]
        if i <= len(pos):
            order.append(pos[i - 1])
    return order


def exact_opt_ranks(scores, labels, loss):
    """Interleaving rank of every negative (input order; 0 for positives) in the
    exact-arithmetic most violated ranking with ties broken upward, opt_j = the largest
    maximiser of f_j (2018 supplement §2). Rational arithmetic: AP and ROC area only
    (the NDCG discount is irrational)."""
    from fractions import Fraction
    scores = [Fraction(float(s)) for s in scores]
    rel = np.asarray(labels) > 0
    n = len(scores)
    pos = sorted(np.flatnonzero(rel), key=lambda k: (-scores[k], k))
    neg = sorted(np.flatnonzero(~rel), key=lambda k: (-scores[k], k))
    P, N = len(pos), len(neg)
    ranks = np.zeros(n, dtype=int)
    for j, k in enumerate(neg, start=1):
        f, best_f, best = Fraction(0), Fraction(0), 1
        for i in range(1, P + 1):
            if loss == "ap":
                step = Fraction(j - 1, j + i - 1) - Fraction(j, j + i)
                step /= P
            elif loss == "roc":
                step = Fraction(-1, P * N)
            else:
                raise ValueError(loss)
            f += Fraction(2, P * N) * (scores[pos[i - 1]] - scores[k]) + step
            if f >= best_f:
                best_f, best = f, i + 1
        ranks[k] = best
    return ranks


def query_shifts(scores, relevant, order, offsets):
    """Reference of the kernel's per-query shifts: the midpoint of the region
    [max of the classes' lowest scores, min of their highest] when it is farther from 0
    than half the region's width, else 0 (and 0 without both classes)."""
    shift = np.zeros(len(offsets) - 1)
    for q in range(len(offsets) - 1):
        rows = order[offsets[q]:offsets[q + 1]]
        pos, neg = scores[rows[relevant[rows]]], scores[rows[~relevant[rows]]]
        if pos.size and neg.size:
            a, b = max(pos.min(), neg.min()), min(pos.max(), neg.max())
            mid = 0.5 * a + 0.5 * b
            if 0.5 * abs(mid) > abs(0.5 * a - 0.5 * b):
                shift[q] = mid
    return shift
