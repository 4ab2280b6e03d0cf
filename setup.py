"""Build script: compiles every Cython kernel in cython_src/ into svmrank.<name>.

What one kernel cimports from another (and the codes a kernel shares with Python) is
declared in svmrank/<name>.pxd, beside the compiled module, where Cython looks for
``from ._projection_fast cimport ...`` (the project root is on its include path).

Compiler directives are set here, once. Set SVMRANK_DEBUG_CHECKS=1 to build the
kernels with bounds, initialisation and None checks turned back on (for a debug test
run; wraparound stays off, so a negative index fails the bounds check). SVMRANK_ONLY=_a_fast,_b_fast builds only the named kernels
(handy for in-place development builds). Kernels that use ``prange`` are compiled with
OpenMP when the compiler accepts -fopenmp (checked once here); SVMRANK_OPENMP=0 builds
them serial.
"""
import os
import tempfile
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools._distutils.ccompiler import new_compiler
from setuptools._distutils.errors import CompileError, LinkError
from setuptools._distutils.sysconfig import customize_compiler

HERE = Path(__file__).parent
DEBUG = os.environ.get("SVMRANK_DEBUG_CHECKS", "0") not in ("", "0")
ONLY = {n for n in os.environ.get("SVMRANK_ONLY", "").split(",") if n}

# The generated C and the compiled kernels carry the mode (directives, -O3 or -O0 -g):
# when it changes since the last build here, everything is regenerated and recompiled
# (timestamps alone would keep the other mode's files).
MODE = "debug" if DEBUG else "release"
MODE_FILE = HERE / "build" / "svmrank-kernel-mode"
FORCE = not MODE_FILE.exists() or MODE_FILE.read_text() != MODE
MODE_FILE.parent.mkdir(exist_ok=True)
MODE_FILE.write_text(MODE)

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": False,
    "initializedcheck": DEBUG,
    "cdivision": not DEBUG,
    "nonecheck": DEBUG,
}


def openmp_flags():
    """["-fopenmp"] when the C compiler builds and links an OpenMP program, else []."""
    if os.environ.get("SVMRANK_OPENMP", "1") in ("", "0"):
        return []
    compiler = new_compiler()
    customize_compiler(compiler)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "omp_check.c"
        src.write_text("#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n")
        try:
            objects = compiler.compile([str(src)], output_dir=tmp, extra_postargs=["-fopenmp"])
            compiler.link_executable(objects, str(Path(tmp) / "omp_check"),
                                     extra_postargs=["-fopenmp"])
        except (CompileError, LinkError):
            return []
    return ["-fopenmp"]


def extension(pyx, omp):
    uses_omp = omp and "prange" in pyx.read_text()
    return Extension(
        f"svmrank.{pyx.stem}",
        [str(pyx.relative_to(HERE))],
        include_dirs=[np.get_include(), "cython_src"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=(["-O3"] if not DEBUG else ["-O0", "-g"]) + (omp if uses_omp else []),
        extra_link_args=omp if uses_omp else [],
    )


OMP = openmp_flags()
SOURCES = sorted((HERE / "cython_src").glob("_*_fast.pyx"))
if not SOURCES:  # (an sdist without them would install a package that cannot import)
    raise SystemExit("setup.py: no Cython sources cython_src/_*_fast.pyx found")
extensions = [extension(pyx, OMP) for pyx in SOURCES if not ONLY or pyx.stem in ONLY]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives=directives,
        include_path=["."],  # (svmrank/*.pxd)
        force=FORCE,
    ),
    options={"build_ext": {"force": FORCE}},
)
