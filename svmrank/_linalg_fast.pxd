# What the test module (_testing_fast.pyx) reads of cython_src/_linalg_fast.pyx.

cdef int max_threads() noexcept nogil  # threads an OpenMP loop would use (1 without OpenMP)
