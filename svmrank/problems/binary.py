"""The binary (0-1 / error-rate) structural SVM the papers compare against.

With Δ the error rate and Ψ(ŷ) = 1/(2n) Σ ŷ_i x_i, the most violated labelling flips
exactly the samples with y_i w·x_i < 1, and the 1-slack problem ½‖w‖² + C ξ equals the
hinge-loss SVM ½‖w‖² + (C/n) Σ max(0, 1 − y_i w·x_i) (LinearSVC with C_lin = C / n).
The bias is a constant feature (SVM-perf's ``--b``), so it is regularised as well.
"""
import numpy as np
import scipy.sparse as sp

from .._validation import check_matrix, check_vector
from .linear import LinearScoreProblem


def add_bias_column(X, bias):
    """Append a constant column of value ``bias`` to CSR X (no-op for bias = 0)."""
    if bias == 0:
        return X
    return sp.hstack([X, np.full((X.shape[0], 1), bias)], format="csr")


class BinaryProblem(LinearScoreProblem):
    """Most-violated-constraint oracle for the error-rate loss (O(n) inference).

    Parameters
    ----------
    X : array-like or sparse matrix, shape (n_samples, n_features)
    y : array-like, shape (n_samples,)
        Positive means y > 0.
    bias : float
        Value of the constant bias feature appended to X (0: none).
    """

    def __init__(self, X, y, bias=1.0):
        X = check_matrix(X)
        y = check_vector(y, "y", n=X.shape[0])
        super().__init__(add_bias_column(X, bias))
        self.sign = np.where(y > 0, 1.0, -1.0)

    def violation_at_scores(self, scores):
        """Error rate of the most violated labelling and d with g = Xᵀ d."""
        flipped = self.sign * scores < 1.0
        n = len(self.sign)
        return float(flipped.sum()) / n, np.where(flipped, self.sign / n, 0.0)
