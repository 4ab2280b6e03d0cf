"""Build script: compiles every Cython kernel in cython_src/ into svmrank.<name>.

What one kernel cimports from another (and the codes a kernel shares with Python) is
declared in svmrank/<name>.pxd, beside the compiled module, where Cython looks for
``from ._projection_fast cimport ...`` (the project root is on its include path).

Compiler directives are set here, once. Set SVMRANK_DEBUG_CHECKS=1 to build the
kernels with bounds, initialisation and None checks turned back on (for a debug test
run; wraparound stays off, so a negative index fails the bounds check). SVMRANK_ONLY=_a_fast,_b_fast builds only the named kernels
(handy for in-place development builds). Kernels that use ``prange`` are compiled with
OpenMP when the compiler accepts -fopenmp (checked once here); SVMRANK_OPENMP=0 builds
them serial. SVMRANK_SANITIZE=address,undefined builds them with those sanitizers
(-fsanitize=..., -O1 -g), each kept where the compiler builds and links a program with
it (checked once here); docs/install.md gives the command that runs the suite so.
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
SANITIZE_ASKED = [n.strip() for n in os.environ.get("SVMRANK_SANITIZE", "").split(",") if n.strip()]


def compiles_with(flags, source="int main(void) { return 0; }\n"):
    """True when the C compiler builds and links ``source`` with ``flags``."""
    compiler = new_compiler()
    customize_compiler(compiler)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "check.c"
        src.write_text(source)
        try:
            objects = compiler.compile([str(src)], output_dir=tmp, extra_postargs=flags)
            compiler.link_executable(objects, str(Path(tmp) / "check"), extra_postargs=flags)
        except (CompileError, LinkError):
            return False
    return True


def sanitizers():
    """The sanitizers of SVMRANK_SANITIZE the compiler supports (a warning for others)."""
    kept = [name for name in SANITIZE_ASKED if compiles_with([f"-fsanitize={name}"])]
    for name in sorted(set(SANITIZE_ASKED) - set(kept)):
        print(f"setup.py: warning: the C compiler cannot build with -fsanitize={name}; "
              "building without it")
    return kept


# The generated C and the compiled kernels carry the mode (directives, -O3 or -O0 -g,
# sanitizers): when it changes since the last build here, everything is regenerated and
# recompiled (timestamps alone would keep the other mode's files).
SANITIZE = sanitizers()
SANITIZE_FLAGS = ([f"-fsanitize={','.join(SANITIZE)}", "-fno-omit-frame-pointer"]
                  if SANITIZE else [])
MODE = ("debug" if DEBUG else "release") + (f"+sanitize={','.join(SANITIZE)}" if SANITIZE else "")
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
    source = "#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n"
    return ["-fopenmp"] if compiles_with(["-fopenmp"], source) else []


def extension(pyx, omp):
    uses_omp = omp and "prange" in pyx.read_text()
    return Extension(
        f"svmrank.{pyx.stem}",
        [str(pyx.relative_to(HERE))],
        include_dirs=[np.get_include(), "cython_src"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=(["-O0", "-g"] if DEBUG else ["-O1", "-g"] if SANITIZE else ["-O3"])
        + SANITIZE_FLAGS + (omp if uses_omp else []),
        extra_link_args=SANITIZE_FLAGS + (omp if uses_omp else []),
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
