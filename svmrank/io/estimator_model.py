"""Fitted estimators as model files and back: :func:`to_model` and :func:`from_model`.

Every family the console scripts write maps here, and only here:

============================  ============================================================
estimator                     model file (metadata beyond C, epsilon, ...)
============================  ============================================================
RankSVM, APSVM                SVM-light, ``loss=ap|ndcg|roc``
BinarySVM                     SVM-light, ``loss=error|zero_one|f1|prbep|prec@k|rec@k``,
                              ``k_fraction=``, ``bias=`` (when not 1)
LatentAPSVM, LatentSSVM       SVM-light, ``loss=ap latent=1 max_bag_size=`` (LatentSSVM:
                              ``max_rounds=``)
LatentSVM                     SVM-light, ``loss=error latent=1 max_bag_size=`` (``bias=``,
                              ``J=``, ``robust=`` (its c) when not their defaults)
HOBSVM, HOAPSVM               SVM-light, ``model=hob|hoap eta= bias= pairwise=``
TopKSVM                       SVM-multiclass, ``model=topk-svm k= loss=alpha|beta``
============================  ============================================================

A model file of another tool (svm_learn, svm_perf_learn, svm_rank_learn,
svm_multiclass_learn) has no such metadata and reads as a plain linear estimator.
Our ``svm_perf_learn`` writes SVM-perf's weights, ``w_scale`` × those of the estimator
at the file's C (svmrank's scale), and says so with ``w_scale=`` when it is not 1.

Sign: SVM-light scores ``w·x − b``, an estimator ``X @ coef_ + intercept_``; the threshold
is ``b = −intercept_`` (:func:`flip_sign`, both ways). Scale: SVM-multiclass counts its loss
in percent, so its file holds ``MULTICLASS_SCALE`` × TopKSVM's ``coef_`` and its C is
TopKSVM's C × ``MULTICLASS_SCALE`` × n_train (svm_multiclass_learn's C, divided by n).

The estimator classes are imported inside the functions: reading and writing model
files (and the console scripts' start-up) never imports scikit-learn.
"""
import warnings

import numpy as np

from .. import __version__
from .model_file import LinearModel
from .multiclass_model import MulticlassModel, labels_text, labels_value

__all__ = ["to_model", "from_model", "training_info", "flip_sign", "MULTICLASS_SCALE"]

MULTICLASS_SCALE = 100.0
HIGH_ORDER_MODELS = ("hob", "hoap")
TOPK_MODEL = "topk-svm"
_RANK_LOSSES = ("ap", "ndcg", "roc", "pairs")
_BINARY_LOSS = "error"
# BinarySVM's multivariate losses (SVM-perf's): svmrank.problems.perf.PERF_LOSSES
_PERF_LOSSES = ("zero_one", "f1", "prbep", "prec@k", "rec@k")


def _pairwise_text(weights):
    return ",".join(f"{i}:{v:.17g}" for i, v in weights) if weights else "none"


def _pairwise_value(text):
    """[(feature index, or 'b' for the constant feature, weight), ...] of ``pairwise=``."""
    if text == "none":
        return []
    weights = []
    for token in text.split(","):
        index, value = token.split(":", 1)
        weights.append((index if index == "b" else int(index), float(value)))
    return weights


def _number(spec):
    return lambda value: format(float(value), spec)


def _classes_value(text):
    return _whole_as_int(labels_value(text))


def _whole_as_int(labels):
    """Float labels that are all whole numbers (below 2^53) as int64: integer labels
    come back from a file as integers."""
    if labels.dtype.kind == "f" and np.all(labels == np.round(labels)) and \
            np.all(np.abs(labels) < 2.0 ** 53):
        return labels.astype(np.int64)
    return labels


# The metadata schema: key -> (its text from a value, its value from the text), in the
# order the keys are written. n_train fills the SVM-light header line, not a token.
_LINEAR_KEYS = {
    "svmrank": (str, str),                  # the version that wrote the file
    "loss": (str, str),                     # ap, ndcg, roc, pairs, error or a PERF loss
    "pair_loss": (str, str),                # pairs: fraction or count
    "gains": (str, str),                    # graded ndcg: exp or linear
    "k": (str, int),                        # graded ndcg: NDCG@k (absent: every place)
    "C": (_number(".12g"), float),
    "epsilon": (_number(".12g"), float),
    "iterations": (str, int),               # cutting-plane iterations (all of CCCP's)
    "n_train": (str, int),                  # training rows (candidates, linked samples)
    "latent": (lambda v: "1" if v else "0", lambda text: text != "0"),
    "cccp_iterations": (str, int),
    "max_bag_size": (str, int),             # latent: the largest training bag
    "max_rounds": (str, int),               # LatentSSVM's alternation rounds
    "J": (_number(".17g"), float),          # LatentSVM's positive-bag weight
    "robust": (_number(".17g"), float),     # LatentSVM's robustness c
    "model": (str, str),                    # hob or hoap
    "eta": (_number(".17g"), float),
    "bias": (_number(".17g"), float),       # value of the constant feature
    "pairwise": (_pairwise_text, _pairwise_value),
    "k_fraction": (_number(".17g"), float),  # BinarySVM's k (prec@k, rec@k): of the positives
    # svm_perf_learn: the file holds w_scale x the weights and threshold of the estimator
    # at C (SVM-perf's scale: svmrank.problems.perf.perf_scale's w_factor)
    "w_scale": (_number(".17g"), float),
    # RankSVM's and BinarySVM's labels (classes_, which predict returns), unless
    # SVM-light's -1 and 1
    "classes": (labels_text, _classes_value),
}
_MULTICLASS_KEYS = {
    "svmrank": (str, str),
    "model": (str, str),                    # topk-svm
    "k": (str, int),
    "loss": (str, str),                     # alpha or beta
    "C": (_number(".12g"), float),          # svm_multiclass_learn's C
    "epsilon": (_number(".12g"), float),
    "epochs": (str, int),
    "gap": (_number(".3g"), float),
}


def _positive(value):
    return bool(np.isfinite(value) and value > 0)


# What a key's value must be (beyond parsing) for the estimators to take it.
_VALUE_CHECKS = {
    "C": ("a positive number", _positive),
    "epsilon": ("a positive number", _positive),
    "k": ("an integer >= 1", lambda value: value >= 1),
    "k_fraction": ("a positive number", _positive),
    "w_scale": ("a positive number", _positive),
    "J": ("a positive number", _positive),
    "eta": ("a number >= 0", lambda value: bool(np.isfinite(value) and value >= 0)),
    "bias": ("a number >= 0", lambda value: bool(np.isfinite(value) and value >= 0)),
    "robust": ("a number >= 0", lambda value: bool(np.isfinite(value) and value >= 0)),
    "loss": ("a loss svmrank writes", lambda value: value in (
        *_RANK_LOSSES, _BINARY_LOSS, *_PERF_LOSSES, "alpha", "beta")),
    "model": ("hob, hoap or topk-svm", lambda value: value in (*HIGH_ORDER_MODELS, TOPK_MODEL)),
    "pair_loss": ("fraction or count", lambda value: value in ("fraction", "count")),
    "gains": ("exp or linear", lambda value: value in ("exp", "linear")),
    "classes": ("distinct finite labels", lambda value: len(np.unique(value)) == len(value) and (
        value.dtype.kind != "f" or bool(np.all(np.isfinite(value))))),
}


def metadata_problem(metadata):
    """``(key, what it must be)`` of the first value of svmrank's ``metadata`` (a file's
    ``key=value`` pairs) that does not parse or that the estimators cannot take; None
    when every one can. Keys of other versions are left alone."""
    keys = _MULTICLASS_KEYS if metadata.get("model") == TOPK_MODEL else _LINEAR_KEYS
    for key, text in metadata.items():
        if key not in keys:
            continue
        kind = {int: "an integer", float: "a number"}.get(keys[key][1], "a readable value")
        expected, valid = _VALUE_CHECKS.get(key, (kind, lambda value: True))
        try:
            value = keys[key][1](text)
        except ValueError:
            return key, expected
        if not valid(value):
            return key, expected
    for key in ("eta", "bias"):
        if metadata.get("model") in HIGH_ORDER_MODELS and key not in metadata:
            return key, "(a high-order model has one)"
    return None


def flip_sign(value):
    """SVM-light's threshold b from an intercept, or an intercept from b (``0.0 − value``,
    so that 0 stays 0, never −0)."""
    return 0.0 - float(value)


def _metadata(keys, info):
    """The metadata text of the values in ``info`` (None: left out), in schema order."""
    unknown = sorted(set(info) - set(keys))
    if unknown:
        raise ValueError(f"training_info: unknown key {unknown[0]!r}; the model file "
                         f"keeps {', '.join(keys)}")
    return {key: keys[key][0](info[key]) for key in keys if info.get(key) is not None}


def _parsed(keys, metadata):
    """The values of the schema keys in ``metadata`` that parse (the others left out)."""
    info = {}
    for key, text in metadata.items():
        if key in keys:
            try:
                info[key] = keys[key][1](text)
            except ValueError:
                pass
    return info


def training_info(model):
    """The metadata of a model file as values (the inverse of :func:`to_model`'s
    ``training_info``).

    Parameters
    ----------
    model : LinearModel or MulticlassModel

    Returns
    -------
    dict
        The schema keys the file holds with a readable value: ``svmrank`` (version),
        ``loss``, ``pair_loss``, ``gains``, ``k`` (RankSVM's graded losses), ``C``,
        ``epsilon``, ``iterations``, ``n_train``, ``latent`` (bool),
        ``cccp_iterations``, ``model``, ``eta``, ``bias``, ``pairwise`` (list of
        (feature index or "b", weight)), ``k_fraction``, ``w_scale`` (the file's weights
        over those of the estimator at C: svm_perf_learn's models), ``classes`` (array); for a multiclass
        file ``model``, ``k``, ``loss``, ``C``, ``epsilon``, ``epochs``, ``gap`` and
        ``n_train``. Empty (but for ``n_train``) for a file of another tool.
    """
    if isinstance(model, MulticlassModel):
        return {**_parsed(_MULTICLASS_KEYS, model.metadata), "n_train": int(model.n_train)}
    if isinstance(model, LinearModel):
        return _parsed(_LINEAR_KEYS, model.metadata)
    raise ValueError(f"model: expected a LinearModel or MulticlassModel, got "
                     f"{type(model).__name__}")


# ------------------------------------------------------------------ to_model
def to_model(estimator, **training_info):
    """A fitted estimator as a model file's content.

    Parameters
    ----------
    estimator : fitted RankSVM, APSVM, BinarySVM, LatentAPSVM, LatentSSVM, LatentSVM,
        HOBSVM, HOAPSVM or TopKSVM
    **training_info
        Metadata the estimator does not hold, by schema key (see :func:`training_info`):
        ``n_train`` above all (the number of training rows, for the header). A key
        given here replaces the estimator's value.

    Returns
    -------
    LinearModel, or MulticlassModel for TopKSVM
        Write it with :func:`~svmrank.io.write_model` / :func:`~svmrank.io.write_multiclass_model`.
        A high-order model's weights are its unary part w₁⁺ − w₁⁻ (what SVM-light's
        tools score); its pairwise weights travel in the metadata.
    """
    from ..estimators import (HOAPSVM, HOBSVM, BinarySVM, LatentAPSVM, LatentSVM, RankSVM,
                              TopKSVM)
    if not isinstance(estimator, (RankSVM, BinarySVM, LatentAPSVM, LatentSVM, HOBSVM, HOAPSVM,
                                  TopKSVM)):
        raise ValueError(f"estimator: no model file holds a {type(estimator).__name__}")
    from sklearn.utils.validation import check_is_fitted
    check_is_fitted(estimator)
    if isinstance(estimator, TopKSVM):
        return _topk_model(estimator, training_info)
    info = {"svmrank": __version__, "C": estimator.C, "epsilon": estimator.epsilon,
            "iterations": getattr(estimator, "n_iter_", None)}
    if isinstance(estimator, (HOBSVM, HOAPSVM)):
        w, intercept = _high_order_part(estimator, info)
        info["loss"] = "ap" if isinstance(estimator, HOAPSVM) else _BINARY_LOSS
        info["model"] = "hoap" if isinstance(estimator, HOAPSVM) else "hob"
    else:
        w, intercept = estimator.coef_, estimator.intercept_
        if isinstance(estimator, BinarySVM) and getattr(estimator, "loss", None) in _PERF_LOSSES:
            info["loss"], info["k_fraction"] = estimator.loss, estimator.k
        elif isinstance(estimator, (BinarySVM, LatentSVM)):
            info["loss"] = _BINARY_LOSS
        elif isinstance(estimator, LatentAPSVM):
            info["loss"] = "ap"
        elif getattr(estimator, "loss_", None) is not None and estimator.loss_.name in _RANK_LOSSES:
            info["loss"] = estimator.loss_.name  # (a user's QSLoss is not written)
            info.update(_graded_info(estimator.loss_))
        if isinstance(estimator, (LatentAPSVM, LatentSVM)):
            info.update(latent=True, cccp_iterations=getattr(estimator, "n_outer_iter_", None),
                        max_bag_size=getattr(estimator, "max_bag_size_", None),
                        max_rounds=getattr(estimator, "max_rounds", None))
        if isinstance(estimator, LatentSVM):  # (defaults left out)
            info.update(J=None if estimator.J == 1.0 else estimator.J,
                        robust=None if estimator.c == 0.0 else estimator.c)
        if isinstance(estimator, (BinarySVM, LatentSVM)) and estimator.bias != 1.0:
            info["bias"] = estimator.bias  # (the default 1 is left out: files stay as they were)
    classes = getattr(estimator, "classes_", None)  # (the labels predict returns)
    # (a high-order file always has them: one without is from before they predicted y's
    # labels, and predicts 0/1)
    if not isinstance(estimator, (LatentAPSVM, LatentSVM)) and classes is not None and (
            isinstance(estimator, (HOBSVM, HOAPSVM)) or not (
                len(classes) == 2 and np.array_equal(classes, [-1, 1]))):
        info["classes"] = np.asarray(classes)
    info.update(training_info)
    return LinearModel(w=np.array(w, dtype=np.float64), b=flip_sign(intercept),
                       metadata=_metadata(_LINEAR_KEYS, info))


def _graded_info(loss):
    """The metadata of a PairwiseLoss or GradedNDCG (binary losses: none, so that their
    files stay as they were)."""
    from ..losses import GradedNDCG, PairwiseLoss
    if isinstance(loss, PairwiseLoss):
        return {"pair_loss": loss.pair_loss}
    if isinstance(loss, GradedNDCG):
        return {"gains": loss.gains, "k": loss.k}
    return {}


def _graded_loss(info):
    """RankSVM parameters and fitted loss of the metadata ``info`` (a binary loss by name
    when it holds no graded key)."""
    from ..losses import GradedNDCG, PairwiseLoss, get_loss
    loss = info.get("loss") if info.get("loss") in _RANK_LOSSES else "ap"
    try:
        if loss == "pairs":
            fitted = PairwiseLoss(info.get("pair_loss", "fraction"))
            return {"loss": loss, "pair_loss": fitted.pair_loss}, fitted
        if loss == "ndcg" and "gains" in info:
            fitted = GradedNDCG(info["gains"], info.get("k"))
            return {"loss": loss, "gains": fitted.gains, "k": fitted.k}, fitted
    except ValueError as exc:
        raise ValueError(f"model: malformed rank-loss metadata ({exc})") from None
    return {"loss": loss}, get_loss(loss)


def _high_order_part(estimator, info):
    """(w, intercept) of a high-order estimator's unary part; its η, bias and pairwise
    weights (indices into X, ``"b"`` the constant feature) go to ``info``."""
    d = estimator.n_features_in_
    v = estimator.unary_coef_
    eta, _, bias = getattr(estimator, "layout_", (estimator.eta, None, estimator.bias))
    info.update(eta=eta, bias=bias, pairwise=[
        ("b" if i == d else i, weight)
        for i, weight in zip(estimator.pairwise_index_.tolist(), estimator.pairwise_coef_.tolist())])
    return v[:d], (float(v[d]) * bias if bias else 0.0)


def _topk_model(estimator, training_info):
    n_train = training_info.pop("n_train", None)
    if n_train is None:
        dual = getattr(estimator, "dual_coef_", None)
        n_train = 0 if dual is None else dual.shape[0]
    coef = getattr(estimator, "coef_", None)
    if coef is None:
        raise ValueError("estimator: a TopKSVM with kernel='precomputed' has no weights to write")
    info = {"svmrank": __version__, "model": TOPK_MODEL,
            "k": getattr(estimator, "k_", estimator.k), "loss": estimator.loss,
            # (svm_multiclass_learn's C: its loss in percent, its slacks summed over n)
            "C": estimator.C * MULTICLASS_SCALE * n_train if n_train else None,
            "epsilon": estimator.epsilon, "epochs": getattr(estimator, "n_iter_", None),
            "gap": getattr(estimator, "duality_gap_", None), **training_info}
    return MulticlassModel(coef=MULTICLASS_SCALE * coef, classes=estimator.classes_,
                           n_train=int(n_train), metadata=_metadata(_MULTICLASS_KEYS, info))


# ------------------------------------------------------------------ from_model
def from_model(model, latent=None):
    """A fitted estimator from a model file's content (:func:`~svmrank.io.read_model`,
    :func:`~svmrank.io.read_multiclass_model`).

    Its ``decision_function`` scores as the file says (``X @ w − b`` for a linear
    model; the bags' best candidate for a latent one, max-marginal differences over
    ``edges`` for a high-order one); the hyper-parameters the metadata holds (C,
    epsilon, loss, η, bias (BinarySVM's and LatentSVM's too), pairwise features, k)
    are restored, the others are the class defaults. A file with ``w_scale``
    (svm_perf_learn's zero/one, ROC area and AP models: SVM-perf's weights) scores as
    svm_perf_classify does, and refitting the estimator on the training data gives
    ``coef_`` = the file's ``w / w_scale``.

    Parameters
    ----------
    model : LinearModel or MulticlassModel
    latent : bool, optional
        True: a latent estimator whatever the metadata says (the linear part w·x − b
        scores the candidates: ``svm_ap_classify --latent``); False: never a latent
        one; None (default): as the metadata says.

    Returns
    -------
    estimator
        RankSVM or BinarySVM (``loss=error``) for a plain linear model, with the
        ``classes_`` (what ``predict`` returns) of the fitted estimator, or for a file
        of another tool SVM-light's labels -1 and 1; LatentAPSVM or LatentSVM; HOBSVM or HOAPSVM; TopKSVM for a
        multiclass model (its ``dual_coef_`` is None: a file keeps no dual variables).

    Raises
    ------
    ValueError
        Starting "model: ", for malformed high-order metadata or a multiclass
        threshold b ≠ 0 (TopKSVM scores have none).
    """
    info = training_info(model)
    if isinstance(model, MulticlassModel):
        return _topk_estimator(model, info)
    from ..estimators import (HOAPSVM, HOBSVM, BinarySVM, LatentAPSVM, LatentSSVM, LatentSVM,
                              RankSVM)
    params = {key: info[key] for key in ("C", "epsilon") if key in info}
    binary = info.get("loss") == _BINARY_LOSS
    bias = {"bias": info["bias"]} if "bias" in info else {}  # (BinarySVM's, LatentSVM's)
    if latent if latent is not None else info.get("latent", False):
        if binary:
            params.update(bias, J=info.get("J", 1.0), c=info.get("robust", 0.0))
            estimator = LatentSVM(**params)
        elif "max_rounds" in info:
            estimator = LatentSSVM(max_rounds=info["max_rounds"], **params)
        else:
            estimator = LatentAPSVM(**params)
        if "max_bag_size" in info:  # (score without bags warns, as after fit)
            estimator.max_bag_size_ = info["max_bag_size"]
    elif info.get("model") in HIGH_ORDER_MODELS:
        estimator = _high_order_estimator(model, HOAPSVM if info["model"] == "hoap" else HOBSVM,
                                          params)
    else:
        if binary:
            estimator = BinarySVM(**params, **bias)
        elif info.get("loss") in _PERF_LOSSES:
            estimator = BinarySVM(loss=info["loss"], k=info.get("k_fraction"), **params, **bias)
        else:
            loss_params, fitted = _graded_loss(info)
            estimator = RankSVM(**loss_params, **params)
            estimator.loss_ = fitted
    if not isinstance(estimator, (LatentAPSVM, LatentSVM)):
        # the labels written (svmrank's files), else SVM-light's -1 and 1 (0/1 for a
        # high-order file, whose labellings are 0/1)
        estimator.classes_ = info.get("classes", np.array(
            [0, 1] if info.get("model") in HIGH_ORDER_MODELS else [-1, 1]))
    if info.get("model") in HIGH_ORDER_MODELS:
        return estimator
    estimator.coef_ = model.w.copy()
    estimator.intercept_ = flip_sign(model.b)
    estimator.n_features_in_ = model.n_features
    return estimator


def _high_order_estimator(model, cls, params):
    """HOBSVM / HOAPSVM with coef_ = (unary part; 0; pairwise weights) in its layout."""
    meta = model.metadata
    d = model.n_features
    try:
        eta, bias = float(meta["eta"]), float(meta["bias"])
        weights = {}
        for i, value in _pairwise_value(meta.get("pairwise", "none")):
            if i != "b" and not 0 <= i < d:
                raise ValueError(f"pairwise feature {i} outside 0..{d - 1}")
            i = d if i == "b" else i
            if i in weights:
                raise ValueError(f"pairwise feature {'b' if i == d else i} listed twice")
            weights[i] = value
    except (KeyError, ValueError) as exc:
        raise ValueError(f"model: malformed high-order metadata ({exc})") from None
    if not (np.isfinite(eta) and np.isfinite(bias) and eta >= 0 and bias >= 0
            and all(np.isfinite(list(weights.values())))):
        raise ValueError("model: malformed high-order metadata (eta, bias and the pairwise "
                         "weights must be finite, eta and bias non-negative)")
    positive = [f"{'b' if i == d else i}:{v:g}" for i, v in weights.items() if v > 0]
    if positive:  # training keeps w₂ ≤ 0 (a submodular energy that graph cuts solve)
        raise ValueError(f"model: pairwise weight {positive[0]} is positive; the pairwise "
                         "weights of a high-order model are <= 0 (w₂ > 0 rewards cut edges, "
                         "an energy graph cuts cannot minimise)")
    features_pf = sorted(i for i in weights if i != d)
    if any(i < 0 or i >= d for i in features_pf) or ((d in weights) != bool(bias)):
        raise ValueError("model: pairwise feature indices out of range, or the constant "
                         "feature's weight 'b' given without a bias or missing with one")
    index = features_pf + ([d] if bias else [])  # HighOrderFeatures' order
    estimator = cls(eta=eta, bias=bias, pairwise_features=features_pf, **params)
    k = d + (1 if bias else 0)
    w = np.zeros(2 * k + len(index))
    w[:d] = model.w
    if bias:
        w[d] = flip_sign(model.b) / bias
    w[2 * k:] = [weights[i] for i in index]
    estimator.coef_ = w
    estimator.unary_coef_ = w[:k].copy()
    estimator.pairwise_coef_ = w[2 * k:].copy()
    estimator.pairwise_index_ = np.asarray(index, dtype=np.int64)
    estimator.layout_ = (eta, np.asarray(features_pf, dtype=np.int64), bias)
    estimator.n_features_in_ = d
    return estimator


def _topk_estimator(model, info):
    from ..estimators import TopKSVM
    if model.b != 0:  # (svm_topk_classify scores with it: the same predictions)
        warnings.warn(f"model: threshold b = {model.b:g} is dropped: TopKSVM's class scores "
                      "have none, and it shifts every class score alike (the predictions "
                      "are the same)", UserWarning, stacklevel=3)
    classes = np.asarray(model.classes)
    m = len(classes)
    order = np.argsort(classes, kind="stable")  # (TopKSVM's classes_ are sorted; a file's
    classes = _whole_as_int(classes[order])     # need not be: its weight rows follow them)
    if m < 2 or np.any(classes[1:] == classes[:-1]):
        raise ValueError("model: the class labels (classes=) must be distinct")
    params = {key: info[key] for key in ("k", "epsilon") if key in info}
    if not 1 <= params.get("k", 1) < m:
        raise ValueError(f"model: k={params['k']} is outside 1..{m - 1} for {m} classes")
    if params.get("epsilon", 1.0) <= 0 or info.get("C", 1.0) <= 0:
        raise ValueError("model: C and epsilon must be positive")
    if info.get("loss") in ("alpha", "beta"):
        params["loss"] = info["loss"]
    if "C" in info and info["n_train"]:
        params["C"] = info["C"] / (MULTICLASS_SCALE * info["n_train"])
    estimator = TopKSVM(**params)
    coef = np.asarray(model.coef, dtype=np.float64)[order]
    estimator.coef_ = coef / MULTICLASS_SCALE
    estimator.classes_ = classes.copy()
    estimator.intercept_ = np.zeros(coef.shape[0])
    estimator.k_, estimator.kernel_ = estimator.k, "linear"
    estimator.dual_coef_ = None
    estimator.n_features_in_ = coef.shape[1]
    return estimator
