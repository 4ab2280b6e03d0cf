"""Most violated labelling for SVM-perf's contingency-table losses (Joachims 2005).

No validation here: svmrank.problems.perf checks every argument first.

A labelling ŷ of n samples (P positives, N negatives) is scored by
H(ŷ) = Δ(a, b) + (1/n) Σ_{i flipped} (−y_i s_i), with a the true positives and b the
false positives of ŷ and s = X w (svmrank's scale: Ψ(ŷ) = 1/(2n) Σ ŷ_i x_i, Δ in
[0, 1]). For fixed (a, b) the best labelling takes the a highest-scoring positives and
the b highest-scoring negatives as positive (the paper's Algorithm 2), so with the
positives p and negatives q sorted by decreasing score

    H(a, b) = Δ(a, b) + (Gn(b) − Tp(a)) / n,  Gn(b) = Σ_{j<b} q_j,  Tp(a) = Σ_{i≥a} p_i.

Gn is concave in b (its increments q_b decrease). The scan:

- zero/one: Δ = 1 off (P, 0); H is separable, O(n).
- PRBEP: b = P − a (a+b = P, where precision = recall), O(P).
- Rec@k: a + b ≤ k, Δ = 1 − a/P does not depend on b, O(P).
- F1 (Δ = 1 − 2a/(a+b+P)) and Prec@k (a + b ≥ k, Δ = b/(a+b)): for fixed a, Δ is
  concave in b, so H(a, ·) is concave and a binary search on its increments finds its
  maximum: O(P log N) instead of the paper's O(PN) table.

Codes are SVM-perf's -l numbers. Returns the (a, b) of the maximum over the loss's
labellings, with the true labelling (a, b) = (P, 0) (H = 0) among the candidates.
"""
from libc.stdlib cimport malloc, free

cdef enum:
    ZERO_ONE = 0
    F1 = 1
    PRBEP = 3
    PREC_K = 4
    REC_K = 5


cdef inline double _delta(int code, Py_ssize_t a, Py_ssize_t b, Py_ssize_t P) noexcept nogil:
    # Δ(a, b) of the losses whose maximum over b is found by binary search
    if code == F1:
        return 1.0 - 2.0 * a / <double> (a + b + P)
    return b / <double> (a + b)  # PREC_K (a + b >= k >= 1)


cdef Py_ssize_t _best_b(int code, Py_ssize_t a, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t P,
                        const double* gn, double n) noexcept nogil:
    # the smallest b in [lo, hi) where H(a, b+1) − H(a, b) <= 0 (H(a, ·) is concave), else hi
    cdef Py_ssize_t mid
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if (_delta(code, a, mid + 1, P) - _delta(code, a, mid, P)
                + (gn[mid + 1] - gn[mid]) / n) > 0:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline Py_ssize_t _best_b_positive(const double* neg, Py_ssize_t hi) noexcept nogil:
    # the number of negatives (at most hi) with a positive score: Gn's maximum on [0, hi]
    cdef Py_ssize_t lo = 0, mid
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if neg[mid] > 0:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef void _scan(int code, const double* pos, Py_ssize_t P, const double* neg, Py_ssize_t N,
                Py_ssize_t k, double* tp, double* gn, Py_ssize_t* best) noexcept nogil:
    cdef double n = <double> (P + N)
    cdef Py_ssize_t a, b, lo, hi, i, a_top, b_top, a_next, b_next
    cdef double value, best_value = 0.0
    tp[P] = 0.0
    for i in range(P - 1, -1, -1):
        tp[i] = tp[i + 1] + pos[i]
    gn[0] = 0.0
    for i in range(N):
        gn[i + 1] = gn[i] + neg[i]
    best[0] = P
    best[1] = 0
    if code == ZERO_ONE:
        # maximise Gn and −Tp separately; if that is the true labelling, the runner-up
        # flips one more sample: best a < P with the best b, or the best a with b > 0
        a_top = 0
        for a in range(1, P + 1):
            if tp[a] < tp[a_top]:
                a_top = a
        b_top = 0
        for b in range(1, N + 1):
            if gn[b] > gn[b_top]:
                b_top = b
        if a_top == P and b_top == 0:
            a_next = -1
            for a in range(P):
                if a_next < 0 or tp[a] < tp[a_next]:
                    a_next = a
            b_next = -1
            for b in range(1, N + 1):
                if b_next < 0 or gn[b] > gn[b_next]:
                    b_next = b
            if a_next >= 0 and (b_next < 0 or
                                -tp[a_next] + gn[0] >= -tp[P] + gn[b_next]):
                a_top, b_top = a_next, 0
            elif b_next >= 0:
                a_top, b_top = P, b_next
            else:
                return
        value = 1.0 + (gn[b_top] - tp[a_top]) / n
        if value > best_value:
            best[0], best[1] = a_top, b_top
        return
    for a in range(P + 1):
        if code == PRBEP:
            b = P - a
            if b > N:
                continue
            value = 1.0 - a / <double> P
        elif code == REC_K:
            if a > k:
                break
            hi = k - a if k - a < N else N
            b = _best_b_positive(neg, hi)
            value = 1.0 - a / <double> P
        else:
            lo = 0
            if code == PREC_K and k - a > 0:
                lo = k - a
            if lo > N:
                continue
            b = _best_b(code, a, lo, N, P, gn, n)
            value = _delta(code, a, b, P)
        value += (gn[b] - tp[a]) / n
        if value > best_value:
            best_value = value
            best[0], best[1] = a, b


def most_violated_table(const double[::1] pos, const double[::1] neg, int code, Py_ssize_t k):
    """(a, b): true and false positives of the most violated labelling.

    ``pos`` and ``neg`` are the positives' and negatives' scores sorted in decreasing
    order, ``code`` SVM-perf's -l number (0, 1, 3, 4, 5), ``k`` the k of Prec@k and
    Rec@k (ignored otherwise). (P, 0) is the true labelling (nothing violated).
    """
    cdef Py_ssize_t P = pos.shape[0], N = neg.shape[0]
    cdef Py_ssize_t best[2]
    cdef double* tp = <double*> malloc((P + 1) * sizeof(double))
    cdef double* gn = <double*> malloc((N + 1) * sizeof(double))
    if tp == NULL or gn == NULL:
        free(tp)
        free(gn)
        raise MemoryError()
    with nogil:
        _scan(code, &pos[0] if P else NULL, P, &neg[0] if N else NULL, N, k, tp, gn, best)
    free(tp)
    free(gn)
    return int(best[0]), int(best[1])
