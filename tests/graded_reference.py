"""Plain NumPy references for the graded-relevance kernels (svmrank._graded_fast):
pair by pair and permutation by permutation, for small queries."""
import itertools

import numpy as np


def pair_counts_reference(scores, labels):
    """(heads, tails) per sample: swapped pairs (s_j > s_i − 1 for y_i > y_j) it heads
    and closes, by a double loop."""
    n = len(scores)
    heads, tails = np.zeros(n, np.int64), np.zeros(n, np.int64)
    for i in range(n):
        for j in range(n):
            if labels[i] > labels[j] and scores[j] > scores[i] - 1.0:
                heads[i] += 1
                tails[j] += 1
    return heads, tails


def pairs_objective_brute(scores, labels):
    """max over every choice c ∈ {0,1}^pairs of Σ c_ij (1 − (s_i − s_j)), enumerated."""
    pairs = [(i, j) for i in range(len(labels)) for j in range(len(labels))
             if labels[i] > labels[j]]
    margins = np.array([1.0 - (scores[i] - scores[j]) for i, j in pairs])
    best = 0.0
    for c in itertools.product((0, 1), repeat=len(pairs)):
        best = max(best, float(np.dot(c, margins)))
    return best


def gains_reference(labels, gains):
    labels = np.asarray(labels, dtype=np.float64)
    return 2.0 ** labels - 1.0 if gains == "exp" else labels


def ndcg_loss_reference(ranking, labels, k, gains):
    """1 − NDCG@k of a ranking (sample indices, first place first)."""
    g = gains_reference(labels, gains)
    places = len(ranking) if k is None else min(k, len(ranking))
    discount = 1.0 / np.log2(np.arange(2, places + 2))
    ideal = np.sort(g)[::-1][:places] @ discount
    return 1.0 - g[np.asarray(ranking)[:places]] @ discount / ideal


def pair_feature_reference(ranking, scores, labels):
    """F(R) = Σ_{y_i > y_j} R_ij (s_i − s_j) / |pairs|."""
    place = np.empty(len(ranking), np.int64)
    place[np.asarray(ranking)] = np.arange(len(ranking))
    total, n_pairs = 0.0, 0
    for i in range(len(labels)):
        for j in range(len(labels)):
            if labels[i] > labels[j]:
                n_pairs += 1
                total += (1.0 if place[i] < place[j] else -1.0) * (scores[i] - scores[j])
    return total / n_pairs


def ndcg_lai_brute(scores, labels, k, gains):
    """max over every permutation of 1 − NDCG@k + F(R), vectorised over permutations."""
    scores, labels = np.asarray(scores, float), np.asarray(labels)
    n = len(scores)
    perms = np.array(list(itertools.permutations(range(n))), dtype=np.int64)
    g = gains_reference(labels, gains)
    places = n if k is None else min(k, n)
    discount = 1.0 / np.log2(np.arange(2, places + 2))
    ideal = np.sort(g)[::-1][:places] @ discount
    loss = 1.0 - g[perms[:, :places]] @ discount / ideal
    place = np.argsort(perms, axis=1)
    F = np.zeros(len(perms))
    n_pairs = 0
    for i in range(n):
        for j in range(n):
            if labels[i] > labels[j]:
                n_pairs += 1
                F += np.where(place[:, i] < place[:, j], 1.0, -1.0) * (scores[i] - scores[j])
    return float(np.max(loss + F / n_pairs))
