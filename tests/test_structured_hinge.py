"""The structured-hinge rank loss J(s) = max_R Δ + F(R) − F(R*) and its semi-gradient."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from svmrank.inference import structured_hinge
from svmrank.metrics import average_precision
from lai_reference import brute_force_interleavings, discriminant


def problems(max_n=8):
    return st.integers(2, max_n).flatmap(lambda n: st.tuples(
        st.lists(st.floats(-3, 3, allow_nan=False), min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n).filter(lambda l: 0 < sum(l) < len(l))))


@pytest.mark.parametrize("loss", ["ap", "ndcg", "roc"])
@settings(max_examples=60, deadline=None)
@given(problem=problems())
def test_value_is_brute_force_max_minus_truth(problem, loss):
    scores, labels = map(np.asarray, problem)
    value, _ = structured_hinge(scores, labels, loss=loss)
    truth = np.argsort(~labels, kind="stable")  # every positive above every negative
    expected = brute_force_interleavings(scores, labels, loss)[0] - discriminant(truth, scores, labels)
    assert value == pytest.approx(max(expected, 0.0), abs=1e-9)
    assert value >= 0.0


@settings(max_examples=60, deadline=None)
@given(problem=problems())
def test_upper_bounds_the_ap_loss(problem):
    scores, labels = map(np.asarray, problem)
    value, _ = structured_hinge(scores, labels)
    assert value >= 1.0 - average_precision(labels, scores) - 1e-12


def test_gradient_is_a_subgradient_and_matches_finite_differences():
    rng = np.random.default_rng(0)
    scores, labels = rng.normal(size=40), rng.random(40) < 0.3
    labels[:2] = [True, False]
    value, grad = structured_hinge(scores, labels)
    for _ in range(20):  # convexity: J(s + v) ≥ J(s) + grad·v
        v = rng.normal(size=40)
        assert structured_hinge(scores + v, labels)[0] >= value + grad @ v - 1e-12
    v = rng.normal(size=40)  # piecewise linear: exact along a generic short step
    h = 1e-7
    assert (structured_hinge(scores + h * v, labels)[0] - value) / h == pytest.approx(grad @ v, rel=1e-4)


def test_queries_are_averaged_and_unusable_queries_ignored():
    rng = np.random.default_rng(1)
    scores = rng.normal(size=30)
    labels = rng.random(30) < 0.3
    labels[[0, 10]] = True
    labels[[1, 11]] = False
    labels[20:] = False  # third query: no relevant sample
    qid = np.repeat([1, 2, 3], 10)
    value, grad = structured_hinge(scores, labels, qid=qid)
    parts = [structured_hinge(scores[k:k + 10], labels[k:k + 10]) for k in (0, 10)]
    assert value == pytest.approx(np.mean([p[0] for p in parts]))
    np.testing.assert_allclose(grad[:20], np.concatenate([p[1] for p in parts]) / 2)
    assert not grad[20:].any()


def test_sgd_on_the_hinge_improves_ap():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 5))
    labels = X @ np.array([1.0, -2.0, 0.5, 0.0, 1.0]) + 0.5 * rng.normal(size=300) > 1.5
    w = np.zeros(5)
    for _ in range(200):
        _, g = structured_hinge(X @ w, labels)
        w -= 2.0 * (X.T @ g)
    assert average_precision(labels, X @ w) > 0.9


@pytest.mark.parametrize("scores,labels,match", [
    ([1.0, np.nan], [1, 0], "scores"),
    ([1.0, 2.0], [2, 0], "binary"),
    (np.array([0.3, -0.2]) + 5j, [1, 0], "complex"),
    (0.5, [1, 0], r"^scores: expected a 1-d array, got shape \(\)$"),
    ([-5e307, 5e307], [1, 0], "^scores: the structured-hinge value overflows"),
])
def test_bad_input(scores, labels, match):
    with pytest.raises(ValueError, match=match):
        structured_hinge(scores, labels)


def test_one_class_is_zero():
    """Review 23: a score vector of one class raised, and one such row failed a whole
    vmap batch; every ranking of it is perfect, so the value and gradient are 0."""
    for labels in ([1, 1, 1], [0, 0, 0]):
        value, grad = structured_hinge([1.0, 3.0, 2.0], labels)
        assert value == 0.0 and grad.tolist() == [0.0, 0.0, 0.0]
    value, grad = structured_hinge([1.0, 3.0, 2.0, 0.5], [1, 1, 0, 0], qid=[1, 1, 2, 2])
    assert value == 0.0 and not grad.any()


def test_torch_wrapper():
    torch = pytest.importorskip("torch")
    from svmrank.losses_torch import structured_hinge_loss
    rng = np.random.default_rng(3)
    s = torch.tensor(rng.normal(size=20), requires_grad=True)
    y = torch.tensor(rng.random(20) < 0.3)
    y[:2] = torch.tensor([True, False])
    out = structured_hinge_loss(s, y)
    out.backward()
    value, grad = structured_hinge(s.detach().numpy(), y.numpy())
    assert out.item() == pytest.approx(value)
    np.testing.assert_allclose(s.grad.numpy(), grad)


def test_torch_wrapper_under_torch_func():
    """grad, and vmap over a batch of score vectors (labels shared or batched), give
    each row's value and semi-gradient."""
    torch = pytest.importorskip("torch")
    from torch.func import grad, vmap
    from svmrank.losses_torch import structured_hinge_loss
    rng = np.random.default_rng(5)
    S = rng.normal(size=(4, 15))
    Y = rng.random((4, 15)) < 0.4
    Y[:, :2] = [True, False]
    y = Y[0]
    g = grad(lambda x: structured_hinge_loss(x, torch.tensor(y)))(torch.tensor(S[0]))
    np.testing.assert_allclose(g.numpy(), structured_hinge(S[0], y)[1])
    per_row = vmap(grad(lambda x: structured_hinge_loss(x, torch.tensor(y))))(torch.tensor(S))
    np.testing.assert_allclose(per_row.numpy(), [structured_hinge(r, y)[1] for r in S])
    values = vmap(structured_hinge_loss)(torch.tensor(S), torch.tensor(Y))
    np.testing.assert_allclose(values.numpy(), [structured_hinge(r, l)[0] for r, l in zip(S, Y)])
    listed = vmap(lambda x: structured_hinge_loss(x, y.tolist(), qid=[1] * 15))(torch.tensor(S))
    np.testing.assert_allclose(listed.numpy(), [structured_hinge(r, y)[0] for r in S])
    assert vmap(structured_hinge_loss)(torch.zeros(0, 15, dtype=torch.float64),
                                       torch.zeros(0, 15, dtype=torch.bool)).shape == (0,)
    # an empty batch stays on the graph: backward gives the scores an empty gradient
    empty = torch.zeros(0, 15, dtype=torch.float64, requires_grad=True)
    vmap(lambda x: structured_hinge_loss(x, torch.tensor(y)))(empty).sum().backward()
    assert empty.grad.shape == (0, 15)


def test_torch_wrapper_refuses_integer_scores():
    torch = pytest.importorskip("torch")
    from svmrank.losses_torch import structured_hinge_loss
    with pytest.raises(ValueError, match="floating-point"):
        structured_hinge_loss(torch.tensor([0, 1]), torch.tensor([1, 0]))


def test_value_keeps_its_precision_beside_a_huge_score():
    """J = Δ + (coef − truth)·s: a sample that keeps its ground-truth coefficient (here a
    whole query ranked correctly) adds nothing, so its huge score does not round J away
    (objective − truth·s gave 0.546875), and a huge positive ranked above everything
    no longer hides the violation below it (the value was 0)."""
    value, grad = structured_hinge(np.array([0.0, 0.3, 1e14]), np.array([1, 0, 1]))
    assert value == pytest.approx(7 / 15, rel=1e-12) and grad.tolist() == [-1, 1, 0]
    value, _ = structured_hinge(np.array([0.0, 0.3, 1e14, 0.0]), np.array([1, 0, 1, 0]),
                                qid=[0, 0, 1, 1])
    assert value == pytest.approx(0.55, rel=1e-12)
    # a common offset changes neither the value nor the gradient (the offset scores are
    # rounded the same way; J was 1.2e-4 off at 1e12)
    rng = np.random.default_rng(0)
    s, y = rng.normal(size=200), rng.random(200) < 0.3
    offset = s + 1e12
    for qid in (None, np.arange(200) % 3):
        base, g_base = structured_hinge(offset - 1e12, y, qid=qid)
        moved, g_moved = structured_hinge(offset, y, qid=qid)
        assert moved == pytest.approx(base, rel=1e-12) and np.array_equal(g_moved, g_base)


def test_torch_forward_mode():
    """jvp / jacfwd (and forward-mode AD) give the semi-gradient's directional
    derivative (they raised NotImplementedError)."""
    torch = pytest.importorskip("torch")
    from torch.func import grad, jacfwd, jvp, vmap
    from svmrank.losses_torch import structured_hinge_loss
    rng = np.random.default_rng(5)
    y = torch.tensor([1, 0, 0, 1, 0, 0, 0, 1, 0, 0])
    f = lambda s: structured_hinge_loss(s, y)  # noqa: E731
    s = torch.tensor(rng.normal(size=10))
    t = torch.tensor(rng.normal(size=10))
    value, tangent = jvp(f, (s,), (t,))
    g = grad(f)(s)
    assert value.item() == f(s).item()
    assert tangent.item() == pytest.approx(float(g @ t), rel=1e-12)
    torch.testing.assert_close(jacfwd(f)(s), g)
    batch = torch.tensor(rng.normal(size=(3, 10)))
    torch.testing.assert_close(vmap(jacfwd(f))(batch), vmap(grad(f))(batch))


def test_losses_does_not_import_inference():
    """structured_hinge lives beside the inference it wraps: svmrank.losses imports
    nothing of svmrank.inference (inference imports losses; no circle)."""
    import ast
    import pathlib

    import svmrank.losses
    tree = ast.parse(pathlib.Path(svmrank.losses.__file__).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):  # (from .inference import x, from . import inference)
            imported |= {node.module or ""} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
    assert not [m for m in imported if "inference" in m.split(".")]
    assert not hasattr(svmrank.losses, "structured_hinge")
