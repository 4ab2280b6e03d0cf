"""Shared test fixtures: where ../shared/data is, and skipping cleanly without it."""
import os
from pathlib import Path

import pytest


def shared_data_dir():
    """The public data folder: $SVMRANK_SHARED_DATA, else ../shared/data beside the repo."""
    env = os.environ.get("SVMRANK_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_file(*parts):
    """Path of a file under the shared data folder, or skip the test with a reason."""
    path = shared_data_dir().joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data file {path} is absent (set SVMRANK_SHARED_DATA)")
    return path


@pytest.fixture
def shared():
    """Fixture form of :func:`shared_file`: ``shared("w8a", "w8a.train")``."""
    return shared_file


def pytest_addoption(parser):
    parser.addoption("--fuzz-long", action="store_true", default=False,
                     help="tests/test_fuzz.py: the long run (50x the inputs, over 1e6)")
