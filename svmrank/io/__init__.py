"""File formats: SVMlight data files, SVM-light linear models, SVM-multiclass models, and
the mapping between fitted estimators and model files (:func:`to_model`, :func:`from_model`).

``atomic_write`` stays in :mod:`svmrank.io.atomic`.
"""
from .estimator_model import from_model, to_model, training_info
from .model_file import LinearModel, read_model, write_model
from .multiclass_model import MulticlassModel, read_multiclass_model, write_multiclass_model
from .svmlight import dump_svmlight, iter_svmlight, load_svmlight

__all__ = ["load_svmlight", "iter_svmlight", "dump_svmlight", "LinearModel", "read_model", "write_model",
           "MulticlassModel", "read_multiclass_model", "write_multiclass_model",
           "to_model", "from_model", "training_info"]
