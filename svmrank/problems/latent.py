"""Latent ranking and classification over bags of candidates (behl2014).

Each sample is a bag of candidate feature vectors Φ_b(h) (rows of X); the bag's label is
given, the candidate h is latent unless the bag's known candidate is supplied. Three
problems answer the cutting-plane learner's question (``most_violated(w)``) with the
latent variables of the ground truth fixed by ``set_state``, and impute them (``impute``)
for the CCCP outer loop:

- :class:`LatentAPProblem` — latent AP-SVM, problem (11): positives at their imputed
  candidates (Prop. 2), each negative at its highest scoring candidate (Prop. 3), then
  the ordinary AP loss-augmented inference over bag scores.
- :class:`LatentSSVMProblem` — latent structural SVM with the AP loss (Yu & Joachims
  2009; behl2014 eq. 4-5).
- :class:`LatentBinaryProblem` — latent SVM (0-1 loss surrogate, positive weight J,
  robustness c).

Joint feature maps are linear in the chosen candidates: Ψ = Σ_b coef_b Φ_b(h_b) = Xᵀ d
with d = ``candidate_coef(rows, coef)`` the coefficients scattered onto their rows, so
``dot(w, joint_feature(d)) == coef · scores[rows]``. The problems are linear in the
candidate scores s = Xw (``scores``, ``violation_at_scores``, ``joint_feature``), the
interface with which the cutting-plane learner runs its line search.
"""
import warnings

import numpy as np
import scipy.sparse as sp

from ..bags import Bags, check_known
from ..inference import LOSSES, METHODS, lai_queries_unchecked, true_coef
from ..metrics import is_ranked
from .binary import add_bias_column
from .linear import LinearScoreProblem


def _check_choice(value, name, choices):
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


class _BagProblem(LinearScoreProblem):
    """Shared part: data, bag index, bag labels, known candidates (scores, joint feature
    and ``most_violated`` from :class:`~svmrank.problems.linear.LinearScoreProblem`).

    Parameters
    ----------
    X : scipy.sparse.csr_matrix, shape (n_rows, n_features)
        Validated candidates.
    bags : Bags
        Validated bag index.
    labels : ndarray, shape (n_bags,)
        Bag labels; positive means > 0. Needs at least one positive and one negative bag.
    known : ndarray of intp, shape (n_bags,), optional
        Known candidate row of each bag, -1 where latent.
    """

    def __init__(self, X, bags, labels, known=None):
        if not isinstance(bags, Bags):
            raise ValueError("bags: expected a validated svmrank.bags.Bags (see check_bags)")
        X = sp.csr_matrix(X, dtype=np.float64)
        if X.shape[0] != bags.n_rows:
            raise ValueError(f"X has {X.shape[0]} rows but the bags cover {bags.n_rows}")
        self.bags = bags
        self.relevant = np.asarray(labels) > 0
        if self.relevant.shape != (bags.n_bags,):
            raise ValueError(f"labels: expected one label per bag ({bags.n_bags})")
        if not is_ranked(self.relevant):
            n_pos = int(self.relevant.sum())
            raise ValueError(f"y: need at least one positive (label > 0) and one negative bag; "
                             f"got {n_pos} positive of {bags.n_bags}")
        self.known = check_known(known, bags)  # (the kernels trust these rows)
        self._pos = np.flatnonzero(self.relevant)
        super().__init__(X)

    def candidate_coef(self, rows, coef):
        """Per-candidate coefficients d (n_rows,) of Σ_k coef_k Φ(rows_k) = Xᵀ d (at most
        two rows per bag are non-zero)."""
        return np.bincount(np.asarray(rows, dtype=np.intp), weights=np.asarray(coef, dtype=float),
                           minlength=self.bags.n_rows)

    def instance_rows(self):
        """Rows of an instance-level view of the data (the known candidate of a bag that
        has one, every candidate of the others) and their bags' labels, for CCCP's
        instance-level initialisation."""
        bag_of_row = self.bags.bag_of_row()
        keep = (self.known[bag_of_row] < 0) | (np.arange(self.bags.n_rows) == self.known[bag_of_row])
        rows = np.flatnonzero(keep)
        return rows, np.where(self.relevant[bag_of_row[rows]], 1.0, -1.0)

    def random_state(self, rng):
        """A random latent state: a uniformly drawn candidate for every positive bag
        (known candidates kept), as CCCP's initialisation."""
        state = self.known.copy()
        free = self._pos[self.known[self._pos] < 0]
        sizes = self.bags.sizes[free]
        state[free] = self.bags.offsets[free] + (rng.random(free.size) * sizes).astype(np.intp)
        return state


class LatentAPProblem(_BagProblem):
    """Latent AP-SVM (behl2014 §4.2): the convex problem (11) for a fixed imputation.

    The latent state is an intp array over bags: the imputed candidate row of every
    positive bag, the known row (or -1) of every negative bag.

    Parameters
    ----------
    X, bags, labels, known : see :class:`_BagProblem`
    loss : {"ap", "ndcg", "roc"}
        Rank loss of the inference (the paper: "ap").
    lai : str
        Loss-augmented inference method, a key of ``svmrank.inference.METHODS``.
    """

    def __init__(self, X, bags, labels, known=None, loss="ap", lai="qs"):
        super().__init__(X, bags, labels, known)
        self.loss = _check_choice(loss, "loss", LOSSES)
        self.lai = _check_choice(lai, "lai", METHODS)
        self._offsets = np.array([0, bags.n_bags], dtype=np.int64)
        self._true = true_coef(self.relevant)
        self.state = None

    def impute(self, w):
        """Prop. 2 (eq. 10): every positive bag takes its highest scoring candidate under
        w; known candidates stay fixed; negative bags stay free (-1) unless known."""
        rows, _ = self.bags._argmax(self.scores(w), known=self.known)
        return np.where(self.relevant, rows, self.known).astype(np.intp)

    def set_state(self, state):
        self.state = check_known(state, self.bags, name="state")

    def inference(self, s):
        """Loss-augmented inference (12) at candidate scores s by Prop. 3: every negative
        bag's highest scoring candidate, then the rank-loss inference over bag scores.

        Returns
        -------
        rows : ndarray of intp, shape (n_bags,)
            Chosen candidate of every bag.
        coef : ndarray, shape (n_bags,)
            The most violated ranking's coefficients over bag scores.
        loss, objective : float
        """
        rows, values = self.bags._argmax(s, known=self.state)
        coef, losses, objectives = lai_queries_unchecked(values, self.relevant, None,
                                                         self._offsets, self.loss, self.lai)
        return rows, coef, float(losses[0]), float(objectives[0])

    def violation_at_scores(self, s):
        """(Δ̄, d) with Xᵀ d = Ψ(R*, H) − Ψ(R̄, H), H the imputed positives and the
        maximising negatives (the same H on both sides, as in (11))."""
        rows, coef, loss, _ = self.inference(s)
        return loss, self.candidate_coef(rows, self._true - coef)


class LatentSSVMProblem(_BagProblem):
    """Latent structural SVM with a rank loss (Yu & Joachims 2009; behl2014 eq. 5).

    Ground truth: max over H of w·Ψ(R*, H) takes each positive bag's highest and each
    negative bag's lowest scoring candidate (the sign of its coefficient in F(R*)); that
    is the imputed state (intp array of one row per bag).

    Most violated output: max over (R, H) of Δ(R*, R) + w·Ψ(R, H) jointly. The exact
    joint maximisation is not tractable in general (behl2014 §4.1); we alternate, from
    every bag at its highest scoring candidate (the choice of Prop. 3) and from the
    ground truth's H*, and keep the better end point: (a) the exact ranking R for the
    current H (loss-augmented inference over bag scores), (b) the exact H for that R —
    a bag whose coefficient in F(R) is ≥ 0 takes its highest, one with a negative
    coefficient its lowest scoring candidate. Each step cannot lower Δ + w·Ψ; we stop
    when a round does not raise it (or H repeats), at most ``max_rounds`` rounds per
    start. Known candidates stay fixed throughout.
    """

    def __init__(self, X, bags, labels, known=None, loss="ap", lai="qs", max_rounds=50):
        super().__init__(X, bags, labels, known)
        self.loss = _check_choice(loss, "loss", LOSSES)
        self.lai = _check_choice(lai, "lai", METHODS)
        self.max_rounds = int(max_rounds)
        self._offsets = np.array([0, bags.n_bags], dtype=np.int64)
        self._true = true_coef(self.relevant)
        self.state = None

    def impute(self, w):
        """argmax_H w·Ψ(R*, H): positives' highest, negatives' lowest candidates."""
        rows, _ = self.bags._argmax(self.scores(w), known=self.known, minimise=~self.relevant)
        return rows

    def random_state(self, rng):
        state = super().random_state(rng)
        neg = np.flatnonzero(~self.relevant & (self.known < 0))
        state[neg] = self.bags.offsets[neg] + (rng.random(neg.size)
                                               * self.bags.sizes[neg]).astype(np.intp)
        return state

    def set_state(self, state):
        state = check_known(state, self.bags, name="state")
        if (state < 0).any():
            raise ValueError("state: every bag needs its ground-truth candidate row (got -1)")
        self.state = state

    def inference(self, s):
        """Approximate joint maximisation of Δ(R*, R) + w·Ψ(R, H) by alternation, at
        candidate scores s = Xw: from every bag at its highest candidate and, once a
        state is set, also from the ground truth's H*, keeping the better end point (so
        the value is never below Δ(R*, R*) + w·Ψ(R*, H*), so ξ ≥ 0; a violation that
        neither start leads to can go unseen: the value is a lower bound on the maximum).

        Returns (rows, coef, loss, objective) as :meth:`LatentAPProblem.inference`.
        """
        best = self._alternate(s, *self.bags._argmax(s, known=self.known))
        if self.state is not None:
            from_truth = self._alternate(s, self.state, s[self.state])
            if from_truth[3] > best[3]:
                best = from_truth
        return best

    def _alternate(self, s, rows, values):
        """Steps (a) and (b) from the candidate rows given (values = s[rows])."""
        best = None
        for _ in range(self.max_rounds):
            coef, losses, objectives = lai_queries_unchecked(values, self.relevant, None,
                                                             self._offsets, self.loss,
                                                             self.lai)
            objective = float(objectives[0])
            if best is not None and objective <= best[3] + 1e-12 * (1.0 + abs(best[3])):
                break
            best = (rows, coef, float(losses[0]), objective)
            new_rows, values = self.bags._argmax(s, known=self.known, minimise=coef < 0)
            if np.array_equal(new_rows, rows):
                break
            rows = new_rows
        return best

    def violation_at_scores(self, s):
        """(Δ̄, d) with Xᵀ d = Ψ(R*, H*) − Ψ(R̄, H̄): the ground truth at the imputed H*,
        the violator at its own H̄ (independent, as in (5))."""
        rows, coef, loss, _ = self.inference(s)
        return loss, self.candidate_coef(np.concatenate([self.state, rows]),
                                         np.concatenate([self._true, -coef]))


class LatentBinaryProblem(_BagProblem):
    """Latent SVM (Felzenszwalb et al. 2010) as a 1-slack problem, with a positive-bag
    weight J and robustness c (behl2014 §5.1).

    Per-bag hinge with a bias: the bias is the last weight, on a constant feature
    ``bias`` appended to every candidate (regularised, as liblinear does). The 1-slack constraint averages over bags (SVM-struct's C semantics):
    Δ = (1/n) Σ_b J_b [y_b s_b < 1], ḡ = (1/n) Σ_b J_b [y_b s_b < 1] y_b Φ_b(h_b), with
    J_b = J for positive bags, 1 for negative bags, s_b the score of the imputed
    candidate (positives) or the highest scoring kept candidate (negatives).

    The latent state is ``(rows, kept)``: the imputed row of every positive bag (known
    row or -1 for negatives), and a boolean mask of the negative candidates still
    considered. Robustness c ignores ⌊c·n⌋ of the n candidates of latent negative bags,
    at least one kept per bag (see :func:`robust_drops`): a bag of one candidate is
    never ignored, so c does nothing on bags of one.
    """

    def __init__(self, X, bags, labels, known=None, J=1.0, c=0.0, bias=1.0):
        super().__init__(add_bias_column(sp.csr_matrix(X), float(bias)), bags, labels, known)
        self.J = float(J)
        self.c = float(c)
        self.bias = float(bias)
        self._weight = np.where(self.relevant, self.J, 1.0)
        self._sign = np.where(self.relevant, 1.0, -1.0)
        self._free_neg_rows = np.zeros(bags.n_rows, dtype=bool)
        free_neg = np.flatnonzero(~self.relevant & (self.known < 0))
        for b in free_neg:  # once, at construction
            self._free_neg_rows[bags.offsets[b]:bags.offsets[b + 1]] = True
        self._free_neg = free_neg
        if self.c > 0 and not (np.diff(bags.offsets)[free_neg] > 1).any():
            warnings.warn(f"c = {self.c:g} ignores nothing: no negative bag without a known "
                          "candidate has more than one candidate, and each keeps one",
                          UserWarning, stacklevel=3)
        self.state = None

    def random_state(self, rng):
        return super().random_state(rng), np.ones(self.bags.n_rows, dtype=bool)

    def kept_candidates(self, s):
        """Mask of candidates kept under robustness c at scores s (see class doc)."""
        kept = np.ones(self.bags.n_rows, dtype=bool)
        n_drop = int(np.floor(self.c * np.count_nonzero(self._free_neg_rows) + 1e-9))
        if n_drop:
            kept[robust_drops(s, self.bags.offsets, self._free_neg, n_drop)] = False
        return kept

    def impute(self, w):
        """Positives: highest scoring candidate (known fixed); negatives: the robust
        candidate set at w."""
        s = self.scores(w)
        rows, _ = self.bags._argmax(s, known=self.known)
        return np.where(self.relevant, rows, self.known).astype(np.intp), self.kept_candidates(s)

    def set_state(self, state):
        rows, kept = state
        kept = np.asarray(kept)
        if kept.shape != (self.bags.n_rows,) or kept.dtype != bool:
            raise ValueError(f"state: expected a boolean mask of kept candidates over the "
                             f"{self.bags.n_rows} rows")
        self.state = (check_known(rows, self.bags, name="state"), kept)

    def chosen(self, s):
        """Each bag's candidate in the hinge terms, and its score, at scores s."""
        rows, kept = self.state
        return self.bags._argmax(np.where(kept, s, -np.inf), known=rows)

    def violation_at_scores(self, s):
        """(Δ̄, d): the weighted error rate of the margin violators and Xᵀ d their
        averaged y_b J_b Φ_b(h_b)."""
        rows, values = self.chosen(s)
        active = self._sign * values < 1.0
        n = self.bags.n_bags
        weights = self._weight[active]
        loss = float(weights.sum()) / n
        return loss, self.candidate_coef(rows[active], weights * self._sign[active] / n)


KNAPSACK_LIMIT = 10**8  # robust_drops' exact choice: about a second and 100 MB at most


def robust_drops(s, offsets, bag_ids, k):
    """The k candidates of bags ``bag_ids`` that robustness ignores at scores s.

    behl2014 §5.1 ignores "the most confusing c% bounding boxes in the negative samples",
    at least one kept per image. Ignored here are the candidates whose removal lowers the
    objective most, so that imputation minimises it as CCCP needs: dropping the j
    highest of bag b's sorted scores a_1 ≥ a_2 ≥ ... leaves the hinge h_b(j) =
    max(0, 1 + a_{j+1}), and a knapsack over bags (budget k, j_b < |b|) minimises
    Σ_b h_b(j_b). Drops that change no hinge go to the highest scoring candidates left.
    The knapsack costs (useful drops) × k steps and as many bytes; beyond
    ``KNAPSACK_LIMIT`` the highest scoring candidates are dropped, with a warning.

    Returns
    -------
    ndarray of int, the rows dropped (k of them when the bags have that many to spare).
    """
    sorted_rows, gains = [], []  # per bag: rows by score (desc, row asc); j_b's useful range
    for b in bag_ids:
        rows = np.arange(offsets[b], offsets[b + 1])
        rows = rows[np.argsort(-s[rows], kind="stable")]
        sorted_rows.append(rows)
        gains.append(min(rows.size - 1, int(np.count_nonzero(s[rows] > -1.0))))
    budget = min(k, sum(gains))
    if budget == sum(gains):  # every useful drop fits (h_b only falls with j)
        drops = gains
    elif sum(gains) * budget > KNAPSACK_LIMIT:
        # (one text, so that the warning is shown once, not at every imputation)
        warnings.warn(f"robustness: the exact choice of the candidates to drop is a knapsack "
                      f"above KNAPSACK_LIMIT={KNAPSACK_LIMIT:.0e} steps; the highest scoring "
                      "ones are dropped instead", UserWarning, stacklevel=4)
        drops = [0] * len(sorted_rows)
    else:
        drops = _knapsack_drops(s, sorted_rows, gains, budget)
    dropped = [rows[:j] for rows, j in zip(sorted_rows, drops)]
    spare = [rows[j:-1] for rows, j in zip(sorted_rows, drops)]  # each bag keeps its lowest
    spare = np.concatenate(spare) if spare else np.zeros(0, dtype=np.intp)
    rest = k - sum(drops)
    if rest > 0 and spare.size:
        dropped.append(spare[np.argsort(-s[spare], kind="stable")[:rest]])
    return np.concatenate(dropped) if dropped else np.zeros(0, dtype=np.intp)


def _knapsack_drops(s, sorted_rows, gains, budget):
    """j_b per bag minimising Σ_b h_b(j_b) with Σ j_b ≤ budget (see robust_drops)."""
    best = np.zeros(budget + 1)  # least Σ h_b over the bags so far, with at most t drops
    choices = []
    for rows, J in zip(sorted_rows, gains):
        if J == 0:
            choices.append(None)
            continue
        hinge = np.maximum(0.0, 1.0 + s[rows[:J + 1]])
        new, pick = best + hinge[0], np.zeros(budget + 1, dtype=np.min_scalar_type(J))
        for j in range(1, min(J, budget) + 1):
            cost = best[:budget + 1 - j] + hinge[j]
            better = cost < new[j:]
            new[j:][better] = cost[better]
            pick[j:][better] = j
        best = new
        choices.append(pick)
    drops, t = [0] * len(sorted_rows), budget
    for i in reversed(range(len(sorted_rows))):
        if choices[i] is not None:
            drops[i] = int(choices[i][t])
            t -= drops[i]
    return drops
