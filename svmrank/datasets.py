"""Seeded generators of small synthetic data sets (what data_examples/ and many tests
are made from)."""
import numpy as np
import scipy.sparse as sp

from ._validation import check_random_state


def make_ranking(n_samples=1000, n_features=50, n_queries=1, positive_fraction=0.1,
                 density=0.2, noise=1.0, random_state=0):
    """Sparse linear ranking data: relevance = a noisy linear score above a per-query quantile.

    Parameters
    ----------
    n_samples, n_features : int
    n_queries : int
        Samples are split evenly into this many queries (qid 1..n_queries).
    positive_fraction : float in (0, 1)
        Fraction of relevant samples in every query (at least one per query).
    density : float in (0, 1]
        Fraction of non-zero features.
    noise : float
        Standard deviation of the Gaussian noise added to the true score.
    random_state : int, None or numpy Generator

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n_samples, n_features)
    y : ndarray of float64, 1 for relevant, 0 otherwise
    qid : ndarray of int64
    """
    rng = check_random_state(random_state)
    X = sp.random(n_samples, n_features, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.normal(size=k))
    w_true = rng.normal(size=n_features)
    score = X @ w_true + noise * rng.normal(size=n_samples)
    qid = np.repeat(np.arange(1, n_queries + 1), -(-n_samples // n_queries))[:n_samples].astype(np.int64)
    y = np.zeros(n_samples)
    for q in np.unique(qid):
        idx = np.flatnonzero(qid == q)
        n_pos = max(1, int(round(positive_fraction * len(idx))))
        y[idx[np.argsort(-score[idx], kind="stable")[:n_pos]]] = 1.0
    return X, y, qid
