"""svmrank.datasets.make_citation_graph: shapes, determinism, community structure."""
import numpy as np
import pytest

from svmrank.datasets import make_citation_graph


def test_shapes_values_and_seed():
    X, labels, edges = make_citation_graph(n_samples=500, n_classes=4, n_features=120,
                                           degree=6.0, random_state=3)
    assert X.shape == (500, 120) and X.format == "csr"
    assert set(np.unique(X.data)) == {1.0}
    assert labels.shape == (500,) and set(np.unique(labels)) <= set(range(4))
    assert edges.ndim == 2 and edges.shape[1] == 2 and (edges[:, 0] < edges[:, 1]).all()
    assert len(np.unique(edges, axis=0)) == len(edges)
    X2, labels2, edges2 = make_citation_graph(n_samples=500, n_classes=4, n_features=120,
                                              degree=6.0, random_state=3)
    assert (X != X2).nnz == 0 and np.array_equal(labels, labels2) and np.array_equal(edges, edges2)


def test_homophily_and_topics():
    X, labels, edges = make_citation_graph(n_samples=2000, n_classes=5, n_features=200,
                                           homophily=0.9, random_state=0)
    same = np.mean(labels[edges[:, 0]] == labels[edges[:, 1]])
    assert same > 0.85
    # a class's own vocabulary block is over-represented among its members
    block = 200 // 5
    own = np.asarray(X[labels == 2][:, 2 * block:3 * block].sum())
    other = np.asarray(X[labels == 3][:, 2 * block:3 * block].sum())
    assert own > 2 * other


@pytest.mark.parametrize("bad", [dict(n_samples=1), dict(n_classes=1), dict(homophily=1.5),
                                 dict(degree=-1.0), dict(words=0), dict(n_features=3)])
def test_refuses_bad_parameters(bad):
    with pytest.raises(ValueError, match="make_citation_graph"):
        make_citation_graph(**{"n_samples": 50, "n_features": 20, **bad})
