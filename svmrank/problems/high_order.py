"""High-order ranking problems (Dokania et al. 2014): HOB-SVM (§3) and HOAP-SVM (§4).

One structured input: n samples ψ_i (rows of X, with an optional constant bias
column) linked by undirected edges E. A labelling Y ∈ {0, 1}ⁿ has the joint feature

    Ψ(X, Y) = ( Σ_{y_i=1} ψ_i ;  Σ_{y_i=0} ψ_i ;  η Σ_{(i,j)∈E, y_i≠y_j} Φ(ψ_i, ψ_j) )   (eq. 4-6)

with Φ(z_i, z_j) = exp(−(z_i − z_j)²) element-wise on the chosen pairwise features.
With w = (w₁⁺; w₁⁻; w₂) and w₂ ≤ 0, w·Ψ(Y) = Σ_i unary[i, y_i] − Σ_E weight_ij [y_i≠y_j]
with unary[i, 1] = w₁⁺·ψ_i, unary[i, 0] = w₁⁻·ψ_i and weight_ij = −η w₂·Φ_ij ≥ 0, so
MAP labellings and max-marginals are graph cuts (svmrank.graph).

Φ is stored as its sparse complement Φ' = 1 − Φ (zero where the features agree), so
Σ_e v_e Φ_e = (Σ_e v_e)·1 − Φ'ᵀ v.
"""
import numpy as np
import scipy.sparse as sp

from .._validation import check_matrix, check_positive, check_vector
from ..graph import (EdgeTopology, canonical_edges, check_edges, max_marginal_gaps,
                     max_marginals_compact, max_score_labelling)
from ..inference import loss_augmented_inference, true_coef
from ..metrics import is_ranked
from .binary import add_bias_column


def check_pairwise_features(pairwise_features, n_features):
    """Sorted unique feature indices (all features when None)."""
    if pairwise_features is None:
        return np.arange(n_features, dtype=np.int64)
    idx = np.asarray(pairwise_features)
    if idx.dtype == bool:
        if idx.shape != (n_features,):
            raise ValueError(f"pairwise_features: a boolean mask must have length {n_features}")
        return np.flatnonzero(idx).astype(np.int64)
    idx = check_vector(np.atleast_1d(idx), "pairwise_features", dtype=None, finite=False)
    if idx.size and idx.dtype.kind not in "iu":
        raise ValueError("pairwise_features: expected integer feature indices (0-based)")
    idx = np.unique(idx.astype(np.int64))
    if idx.size and (idx[0] < 0 or idx[-1] >= n_features):
        raise ValueError(f"pairwise_features: indices must lie in [0, {n_features})")
    return idx


class HighOrderFeatures:
    """The joint feature map Ψ(X, Y) of one linked set of samples (eq. 4-6).

    Parameters
    ----------
    X : array-like or sparse matrix, shape (n, d)
        Finite features ψ_i.
    edges : array-like of int, shape (E, 2)
        Pairs of similar samples (0-based rows; duplicates merged, self loops rejected).
    eta : float ≥ 0
        Weight η of the pairwise block.
    pairwise_features : array of int or bool mask, optional
        Features Φ is computed on (default: all).
    bias : float
        Value of a constant feature appended to X (0: none). It takes part in both
        unary blocks and, as a pairwise feature with Φ = 1 on every edge, in w₂
        (a learned Potts term).

    Attributes
    ----------
    n_features : int
        2 d' + p, with d' = d (+1 with a bias) and p the pairwise features.
    pairwise_slice : slice
        The w₂ block of w (constrained ≤ 0).
    pairs : ndarray (E, 2)
        The merged edges (u < v).
    """

    def __init__(self, X, edges, eta=1.0, pairwise_features=None, bias=1.0):
        X = check_matrix(X, "X")
        n, d = X.shape
        self.eta = check_positive(eta, "eta", allow_zero=True)
        bias = check_positive(bias, "bias", allow_zero=True)
        pf = check_pairwise_features(pairwise_features, d)
        self.X = add_bias_column(X, bias)
        if bias:
            pf = np.append(pf, d)
        self.pairwise_index = pf
        self.pairs = canonical_edges(check_edges(edges, n, "edges"), n)[0]
        self._topology = EdgeTopology(n, self.pairs)
        self.n_samples = n
        self.n_input_features = d
        self.d_unary = self.X.shape[1]
        self.n_features = 2 * self.d_unary + len(pf)
        self.pairwise_slice = slice(2 * self.d_unary, self.n_features)
        # Φ' = 1 − exp(−(ψ_u − ψ_v)²) on the pairwise features, E x p, sparse
        Xp = self.X[:, pf].tocsr()
        diff = (Xp[self.pairs[:, 0]] - Xp[self.pairs[:, 1]]).tocsr()
        diff.data = -np.expm1(-diff.data ** 2)
        diff.eliminate_zeros()
        self.phi_c = diff

    # -- scores -------------------------------------------------------------
    def unary(self, w):
        """(n, 2) scores of label 0 (w₁⁻·ψ_i) and label 1 (w₁⁺·ψ_i)."""
        k = self.d_unary
        return np.column_stack([self.X @ w[k:2 * k], self.X @ w[:k]])

    def edge_weights(self, w):
        """(E,) penalties −η w₂·Φ_e for cut edges (w₂ ≤ 0 makes them ≥ 0; rounding
        below zero is clipped)."""
        w2 = w[self.pairwise_slice]
        weights = -self.eta * (w2.sum() - self.phi_c @ w2)
        return np.maximum(weights, 0.0)

    def cut_indicator(self, y):
        y = np.asarray(y)
        return (y[self.pairs[:, 0]] != y[self.pairs[:, 1]]).astype(np.float64)

    # -- joint features -----------------------------------------------------
    def combine(self, u, total, v):
        """Σ_k a_k Ψ(Y_k) from u = Σ_k a_k y_k (n,), total = Σ_k a_k and
        v = Σ_k a_k cut(Y_k) (E,)."""
        # (Mᵀ v through the CSC view of M: the sums of a CSR copy of Mᵀ, in the same
        # order, without the copy)
        pos = self.X.T @ u
        neg = self.X.T @ (total - u)
        pair = self.eta * (v.sum() - self.phi_c.T @ v) if len(v) else np.zeros(len(self.pairwise_index))
        return np.concatenate([pos, neg, pair])

    def joint_feature(self, y):
        """Ψ(X, Y) of one labelling (eq. 4-6)."""
        y = np.asarray(y, dtype=np.float64)
        return self.combine(y, 1.0, self.cut_indicator(y))

    def score(self, w, y):
        """w·Ψ(X, Y) computed from the unary scores and edge penalties."""
        y = np.asarray(y).astype(np.int64)
        U = self.unary(w)
        w2 = w[self.pairwise_slice]
        weights = -self.eta * (w2.sum() - self.phi_c @ w2)   # unclipped: exact w·Ψ
        return float(U[np.arange(len(y)), y].sum() - weights @ self.cut_indicator(y))

    def max_marginals(self, w):
        """Max-marginals of every sample at w with their labellings (compact form)."""
        unary, weights = self.unary(w), self.edge_weights(w)
        if not (np.all(np.isfinite(unary)) and np.all(np.isfinite(weights))):
            raise ValueError("w: gives non-finite scores")
        return max_marginals_compact(unary, self.pairs, weights, topology=self._topology)

    def ranking_scores(self, w):
        """s_i = m_i⁺ − m_i⁻ (eq. 11)."""
        return max_marginal_gaps(self.unary(w), self.pairs, self.edge_weights(w))


def _split_labels(y, n):
    y = check_vector(y, "y", n=n)
    rel = y > 0
    if not is_ranked(rel):
        raise ValueError(f"y: need at least one relevant (y > 0) and one non-relevant sample; "
                         f"got {int(rel.sum())} relevant of {n}")
    return rel


class HOBProblem:
    """Most violated labelling of HOB-SVM (eq. 8): one graph cut per call.

    Loss (eq. 7): Δ = (J·#missed positives + #false positives) / (J|P| + |N|),
    J = |N|/|P| by default; it decomposes over samples, so it is added to the unaries.
    Ψ is divided by n here so that C has the scale of the other estimators (binary
    SVM: with J = 1 and η = 0, HOB-SVM(C) is BinarySVM(2C)).

    Parameters
    ----------
    features : HighOrderFeatures
    y : array-like (n,)
        Relevant means y > 0.
    J : float, optional
        Weight of a missed positive (default |N|/|P|).
    """

    def __init__(self, features, y, J=None):
        self.features = features
        n = features.n_samples
        self.relevant = _split_labels(y, n)
        n_pos = int(self.relevant.sum())
        n_neg = n - n_pos
        self.J = n_neg / n_pos if J is None else check_positive(J, "J")
        norm = self.J * n_pos + n_neg
        self._loss_unary = np.zeros((n, 2))
        self._loss_unary[self.relevant, 0] = self.J / norm
        self._loss_unary[~self.relevant, 1] = 1.0 / norm
        self.n_features = features.n_features
        self._psi_true = features.joint_feature(self.relevant.astype(np.float64)) / n

    def loss(self, y_hat):
        """Weighted 0-1 loss of eq. (7)."""
        y_hat = np.asarray(y_hat)
        return float(self._loss_unary[np.arange(len(y_hat)), y_hat.astype(np.int64)].sum())

    def most_violated(self, w):
        """Δ(Y*, Ŷ) and (Ψ(Y*) − Ψ(Ŷ))/n of Ŷ = argmax Δ + w·Ψ/n."""
        f = self.features
        n = f.n_samples
        unary = f.unary(w) / n + self._loss_unary
        y_hat, _ = max_score_labelling(unary, f.pairs, f.edge_weights(w) / n)
        g = self._psi_true - f.joint_feature(y_hat.astype(np.float64)) / n
        return self.loss(y_hat), g


def _as_float(M):
    """CSR matrix M (int8 signs) with float64 values in canonical form (sorted indices,
    as ``astype`` leaves them: the products' sums run in that order); a canonical M
    shares its indices and indptr instead of copying them."""
    M = M.tocsr()
    if not M.has_canonical_format:  # (the max-marginal kernel's rows are not sorted)
        return M.astype(np.float64)
    return sp.csr_matrix((M.data.astype(np.float64), M.indices, M.indptr), shape=M.shape)


def _keep_rows(M, keep):
    """CSR matrix M with the rows where ``keep`` is False emptied."""
    counts = np.diff(M.indptr)
    mask = np.repeat(keep, counts)
    indptr = np.concatenate([[0], np.cumsum(np.where(keep, counts, 0))])
    return sp.csr_matrix((M.data[mask], M.indices[mask], indptr), shape=M.shape)


class LabellingSet:
    """One labelling per sample, stored as sparse changes from a reference labelling.

    Parameters
    ----------
    reference : (n,) uint8
    flips : csr (n, n)  row k: +1/−1 label changes of labelling k
    cut_changes : csr (n, E)  row k: +1/−1 changes of the cut edges of labelling k
    """

    def __init__(self, reference, flips, cut_changes):
        self.reference = np.asarray(reference, dtype=np.float64)
        self.flips = _as_float(flips)
        self.cut_changes = _as_float(cut_changes)

    @classmethod
    def from_max_marginals(cls, mm, want):
        """Labelling k = argmax with y_k = want[k], from :func:`max_marginals_compact`."""
        use = mm.labelling != np.asarray(want)
        return cls(mm.labelling, _keep_rows(mm.flips, use), _keep_rows(mm.cut_changes, use))

    def scores(self, features, w):
        """w·Ψ(Y_k) for every labelling k."""
        base = features.score(w, self.reference.astype(np.int64))
        U = features.unary(w)
        w2 = w[features.pairwise_slice]
        weights = -features.eta * (w2.sum() - features.phi_c @ w2)
        return base + self.flips @ (U[:, 1] - U[:, 0]) - self.cut_changes @ weights

    def weighted_feature(self, features, a):
        """Σ_k a_k Ψ(Y_k)."""
        total = float(a.sum())
        u = total * self.reference + self.flips.T @ a
        v = total * features.cut_indicator(self.reference) + self.cut_changes.T @ a
        return features.combine(u, total, v)

    def _key(self):
        f = self.flips
        return (self.reference, f.indptr, f.indices, f.data)

    def __eq__(self, other):
        """Same labellings (CCCP stops when the imputed labellings repeat)."""
        if not isinstance(other, LabellingSet):
            return NotImplemented
        return all(a.shape == b.shape and np.array_equal(a, b)
                   for a, b in zip(self._key(), other._key()))

    __hash__ = None


class HOAPProblem:
    """Most violated ranking of HOAP-SVM's convex CCCP step (Alg. 1-2, Prop. 4-5).

    At the CCCP iterate w_t the labellings Ȳ_i⁺ (i ∈ P) and Ȳ_j⁻ (j ∈ N) are fixed
    (``fixed``). At w, with m_i⁻(w), m_j⁺(w) the max-marginals and Y_i⁻(w), Y_j⁺(w)
    their labellings, the scores s̄_i = w·Ψ(Ȳ_i⁺) − m_i⁻(w) (i ∈ P) and
    s̄_j = m_j⁺(w) − w·Ψ(Ȳ_j⁻) (j ∈ N) go into the AP loss-augmented inference (Prop. 5);
    with δc = coef(R*) − coef(R̂) and a_k = δc_k (k ∈ P), −δc_k (k ∈ N), the constraint's joint-feature
    difference is g = Σ_k a_k (Ψ(Ȳ_k) − Ψ(Y_k(w))), so w·g = F(R*) − F(R̂) on s̄.
    Ψ is not rescaled: with η = 0, s_i = (w₁⁺ − w₁⁻)·ψ_i as in AP-SVM.

    Parameters
    ----------
    features : HighOrderFeatures
    y : array-like (n,)
    fixed : LabellingSet
        Ȳ_k for every sample (label y_k forced).
    lai : {"qs", "greedy"}
    """

    def __init__(self, features, y, fixed, lai="qs"):
        self.features = features
        self.relevant = _split_labels(y, features.n_samples)
        self.fixed = fixed
        self.lai = lai
        self.n_features = features.n_features
        self._coef_true = true_coef(self.relevant)
        self._opposite = (~self.relevant).astype(np.uint8)

    def surrogate_scores(self, w):
        """s̄ (Prop. 5) and the current opposite labellings Y_k(w)."""
        f = self.features
        mm = f.max_marginals(w)
        current = LabellingSet.from_max_marginals(mm, self._opposite)
        fixed_scores = self.fixed.scores(f, w)
        s = np.where(self.relevant, fixed_scores - mm.m0, mm.m1 - fixed_scores)
        return s, current

    def most_violated(self, w):
        s, current = self.surrogate_scores(w)
        res = loss_augmented_inference(s, self.relevant, loss="ap", method=self.lai)
        delta = self._coef_true - res.coef           # ≥ 0 on P, ≤ 0 on N
        a = np.where(self.relevant, delta, -delta)
        g = self.fixed.weighted_feature(self.features, a) - current.weighted_feature(self.features, a)
        return res.loss, g


class HOAPPairProblem:
    """Most violated ranking of HOAP-SVM's local CCCP step: both max-marginal labellings
    of every sample frozen at w_t.

    With Ŷ the MAP labelling at w_t and Ŷ ⊕ F_k the max-marginal labelling of sample k
    with the other label (its flip set F_k, from :func:`max_marginals_compact`), the
    score of k is the linear s̄_k(w) = σ_k w·(Ψ(Ŷ ⊕ F_k) − Ψ(Ŷ)), σ_k = +1 where Ŷ_k = 0,
    −1 where Ŷ_k = 1: it equals s_k = m_k⁺ − m_k⁻ at w_t, and only F_k and the edges
    it cuts enter it, so the part of the graph the two labellings share cancels as in
    s_k. The step is an AP-SVM on the n difference vectors (with η = 0 it is AP-SVM
    itself); it is not a bound of the true objective, so the estimator keeps its result
    only where the true objective decreases (docs/algorithms.md).

    Parameters
    ----------
    features : HighOrderFeatures
    y : array-like (n,)
    mm : MaxMarginalLabellings
        The max-marginals at w_t (compact form).
    lai : {"qs", "greedy"}
    """

    def __init__(self, features, y, mm, lai="qs"):
        self.features = features
        self.relevant = _split_labels(y, features.n_samples)
        self.lai = lai
        self.n_features = features.n_features
        self._coef_true = true_coef(self.relevant)
        self._sign = np.where(np.asarray(mm.labelling) > 0, -1.0, 1.0)
        self._flips = _as_float(mm.flips)
        self._cuts = _as_float(mm.cut_changes)

    def scores(self, w):
        """s̄(w), linear in w."""
        return _pair_scores(self.features, self._sign, self._flips, self._cuts, w)

    def most_violated(self, w):
        s = self.scores(w)
        res = loss_augmented_inference(s, self.relevant, loss="ap", method=self.lai)
        c = self._sign * (self._coef_true - res.coef)
        f = self.features
        pos = f.X.T @ (self._flips.T @ c)     # (flips move samples from one block to the other)
        v = self._cuts.T @ c
        pair = f.eta * (v.sum() - f.phi_c.T @ v) if len(v) else np.zeros(len(f.pairwise_index))
        return res.loss, np.concatenate([pos, -pos, pair])


def _pair_scores(f, sign, flips, cuts, w):
    """σ_k w·(Ψ(Ŷ ⊕ F_k) − Ψ(Ŷ)) from the flip and cut sets (float64, or callables that
    make them: one at a time, then dropped)."""
    k = f.d_unary
    w2 = w[f.pairwise_slice]
    weights = -f.eta * (w2.sum() - f.phi_c @ w2)   # unclipped: exact w·Ψ
    moved = (flips() if callable(flips) else flips) @ (f.X @ (w[:k] - w[k:2 * k]))
    return sign * (moved - (cuts() if callable(cuts) else cuts) @ weights)


def hoap_true_objective(features, relevant, w, C, lai="qs"):
    """HOAP-SVM's objective ½‖w‖² + C max_R [Δ(R) − F(R*) + F(R)] on the ranking scores
    s = m⁺ − m⁻ at w (eq. 12-13), with the max-marginals (compact form) computed there.

    Returns (objective, mm)."""
    mm = features.max_marginals(w)
    # (m⁺ − m⁻ without cancellation, as HOAPPairProblem's scores)
    s = _pair_scores(features, np.where(np.asarray(mm.labelling) > 0, -1.0, 1.0),
                     lambda: _as_float(mm.flips), lambda: _as_float(mm.cut_changes), w)
    res = loss_augmented_inference(s, relevant, loss="ap", method=lai)
    xi = max(0.0, float(res.loss - (true_coef(relevant) - res.coef) @ s))
    return 0.5 * float(w @ w) + float(C) * xi, mm
