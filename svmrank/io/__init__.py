"""File formats: SVMlight data files and SVM-light linear model files.

``atomic_write`` stays in :mod:`svmrank.io.atomic`.
"""
from .model_file import LinearModel, read_model, write_model
from .svmlight import dump_svmlight, load_svmlight

__all__ = ["load_svmlight", "dump_svmlight", "LinearModel", "read_model", "write_model"]
