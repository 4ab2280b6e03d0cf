"""The generic CCCP outer loop (svmrank.learners.cccp): its stopping rules."""
import io
import warnings

import numpy as np
import pytest

from svmrank.exceptions import ConvergenceWarning
from svmrank.learners.cccp import cccp, same_state


class Script:
    """impute/solve pair replaying scripted objectives; states are counters."""

    def __init__(self, objectives, repeat_state_at=None):
        self.objectives = list(objectives)
        self.solves = []
        self.imputes = 0
        self.repeat_state_at = repeat_state_at

    def impute(self, w):
        self.imputes += 1
        if self.repeat_state_at is not None and self.imputes >= self.repeat_state_at:
            return self.solves[-1][0]
        return ("state", self.imputes)

    def solve(self, state, w):
        k = len(self.solves)
        self.solves.append((state, w))
        return np.array([float(k)]), self.objectives[k]


def test_stops_when_the_decrease_falls_below_tol():
    s = Script([10.0, 5.0, 4.9995, 1.0])
    res = cccp(s.impute, s.solve, state0="init", tol=1e-3)
    assert res.converged and res.n_iter == 3
    assert res.history == [10.0, 5.0, 4.9995]
    assert res.objective == 4.9995 and res.w[0] == 2.0
    assert s.solves[0] == ("init", None)          # first solve from the given state
    np.testing.assert_array_equal(s.solves[1][1], [0.0])  # warm start with the last w


def test_stops_when_imputation_repeats_the_state():
    s = Script([10.0, 8.0, 6.0, 4.0], repeat_state_at=2)
    res = cccp(s.impute, s.solve, state0="init", tol=1e-9)
    assert res.converged and res.n_iter == 2 and res.objective == 8.0


def test_uphill_solve_keeps_the_previous_solution():
    s = Script([10.0, 11.0])
    res = cccp(s.impute, s.solve, state0="init", tol=1e-9)
    assert res.converged and res.objective == 10.0 and res.w[0] == 0.0 and res.state == "init"
    assert res.history == [10.0, 11.0]


def test_warns_at_max_iter():
    s = Script([10.0, 9.0, 8.0, 7.0])
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        res = cccp(s.impute, s.solve, state0="init", tol=1e-9, max_iter=3)
    assert not res.converged and res.n_iter == 3 and res.objective == 8.0


def test_starts_from_w0_by_imputing():
    s = Script([3.0, 3.0])
    res = cccp(s.impute, s.solve, w0=np.zeros(1), tol=1e-3)
    assert s.solves[0][0] == ("state", 1) and res.n_iter == 2


def test_needs_a_start_and_a_positive_cap():
    s = Script([1.0])
    with pytest.raises(ValueError, match="state0"):
        cccp(s.impute, s.solve)
    with pytest.raises(ValueError, match="max_iter"):
        cccp(s.impute, s.solve, state0=1, max_iter=0)


def test_verbose_prints_one_line_per_iteration():
    s = Script([2.0, 1.0, 1.0])
    out = io.StringIO()
    cccp(s.impute, s.solve, state0=0, verbose=1, out=out)
    assert out.getvalue().count("CCCP iteration") == 3


def test_same_state():
    a = (np.array([1, 2]), np.array([True, False]))
    assert same_state(a, (np.array([1, 2]), np.array([True, False])))
    assert not same_state(a, (np.array([1, 3]), np.array([True, False])))
    assert not same_state(np.array([1]), np.array([1, 1]))
    assert not same_state(np.array([1]), [1])
    assert same_state(3, 3)


def test_minimises_a_difference_of_convex_toy():
    """f(w) = (w - 3)² - |w| is DC; CCCP linearises -|w| at w_t (the latent sign)."""
    def impute(w):
        return 1.0 if w >= 0 else -1.0

    def solve(sign, w):
        w_new = 3.0 + sign / 2.0          # argmin (w-3)² - sign·w
        return np.float64(w_new), (w_new - 3.0) ** 2 - sign * w_new

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = cccp(impute, solve, state0=-1.0, tol=1e-12)
    assert res.w == pytest.approx(3.5) and res.objective == pytest.approx(0.25 - 3.5)
    assert np.all(np.diff(res.history) <= 0)
