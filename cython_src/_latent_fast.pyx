# Per-bag candidate selection for latent ranking (behl2014).
#
# A bag b owns the contiguous candidate rows offsets[b] .. offsets[b+1]-1 (validated at
# the Python boundary: offsets non-decreasing, every bag non-empty, known rows inside
# their bag). Prediction (eq. 6) and the imputation / negative maximisation of latent
# AP-SVM (Prop. 2, Prop. 3) all take a bag's highest scoring candidate; the latent SSVM
# baseline also needs a bag's lowest scoring candidate. Ties go to the first row.
from cython.parallel cimport prange


def bag_argmax(const double[::1] scores, const Py_ssize_t[::1] offsets,
               const Py_ssize_t[::1] known, const unsigned char[::1] minimise,
               Py_ssize_t[::1] out_idx, double[::1] out_val, int n_threads=1):
    """Select one candidate per bag.

    Parameters
    ----------
    scores : float64 (n_rows,)
        Candidate scores w·Φ(h).
    offsets : intp (n_bags + 1,)
        Bag b is rows offsets[b] .. offsets[b+1]-1 (non-empty).
    known : intp (n_bags,) or (0,)
        known[b] >= 0 forces bag b's choice to that row; -1 leaves it free. An empty
        array means no bag is fixed.
    minimise : uint8 (n_bags,) or (0,)
        minimise[b] != 0 selects the first lowest scoring row instead of the first
        highest. An empty array means maximise every bag.
    out_idx : intp (n_bags,)
        Selected row of each bag (written).
    out_val : float64 (n_bags,)
        Its score (written).
    n_threads : int
        OpenMP threads over the bags (each bag's choice is its own: the result does not
        depend on it). Under 4096 bags, one.
    """
    cdef Py_ssize_t n_bags = offsets.shape[0] - 1
    cdef bint has_known = known.shape[0] > 0
    cdef bint has_min = minimise.shape[0] > 0
    cdef Py_ssize_t b, r, best
    cdef double v
    cdef int n_used = n_threads if n_bags >= 4096 and n_threads > 1 else 1
    with nogil:
        for b in prange(n_bags, num_threads=n_used, schedule="static"):
            if has_known and known[b] >= 0:
                best = known[b]
            else:
                best = offsets[b]
                v = scores[best]
                if has_min and minimise[b]:
                    for r in range(offsets[b] + 1, offsets[b + 1]):
                        if scores[r] < v:
                            v = scores[r]
                            best = r
                else:
                    for r in range(offsets[b] + 1, offsets[b + 1]):
                        if scores[r] > v:
                            v = scores[r]
                            best = r
            out_idx[b] = best
            out_val[b] = scores[best]


def bag_max(const double[::1] scores, const Py_ssize_t[::1] offsets, double[::1] out_val):
    """Highest candidate score of every bag (eq. 6-7: a bag's prediction score).

    Same layout as :func:`bag_argmax`; writes out_val (n_bags,).
    """
    cdef Py_ssize_t n_bags = offsets.shape[0] - 1
    cdef Py_ssize_t b, r
    cdef double v
    with nogil:
        for b in range(n_bags):
            v = scores[offsets[b]]
            for r in range(offsets[b] + 1, offsets[b + 1]):
                if scores[r] > v:
                    v = scores[r]
            out_val[b] = v
