"""The package's import rules, read from the source (ast): no module imports another
module's private name, and no problem imports a learner."""
import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "svmrank"
MODULES = sorted(PACKAGE.rglob("*.py"))


def imports(path):
    """(line, module, name) of every ``import`` and ``from ... import`` in ``path``."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                yield node.lineno, module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, None


def is_private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def is_kernel(module, name):
    """A compiled kernel module (``from .. import _lai_fast``): private to the package,
    imported by the Python module that wraps it."""
    return module.strip(".") in ("", "svmrank") and name.endswith("_fast")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_a_private_name(path):
    bad = [f"{path.name}:{line}: from {module} import {name}"
           for line, module, name in imports(path)
           if name is not None and is_private(name) and not is_kernel(module, name)]
    assert not bad, "private names imported (give them a public name in their owner):\n" + \
        "\n".join(bad)


@pytest.mark.parametrize("path", sorted((PACKAGE / "problems").glob("*.py")), ids=lambda p: p.name)
def test_no_problem_imports_a_learner(path):
    bad = [f"{path.name}:{line}: {module}" for line, module, _ in imports(path)
           if "learners" in module.split(".")]
    assert not bad, "a problem knows no solver:\n" + "\n".join(bad)


def test_the_rules_catch_what_they_are_for(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from .ranking import _mean\nfrom ..learners.cutting_plane import cutting_plane\n"
                   "from .. import _lai_fast\nfrom ._products import SparseProducts\n")
    found = list(imports(bad))
    assert [is_private(n) and not is_kernel(m, n) for _, m, n in found] == [True, False, False,
                                                                             False]
    assert "learners" in found[1][1].split(".")
