"""Loss-augmented inference for graded relevance (svmrank.graded checks the inputs).

pair_counts: SVM-rank's pairwise loss (Joachims 2006), per sample the number of
    swapped pairs it heads and closes, by one sweep over the scores sorted per query.
ndcg_dp: graded NDCG@k, a dynamic programme over how many samples of each level fill
    the first places (docs/algorithms.md, "Graded NDCG@k").
"""
from libc.stdlib cimport malloc, free
from libc.math cimport INFINITY

ctypedef long long i64


cdef inline void _fenwick_add(i64* tree, Py_ssize_t size, Py_ssize_t pos) noexcept nogil:
    pos += 1
    while pos <= size:
        tree[pos - 1] += 1
        pos += pos & (-pos)


cdef inline i64 _fenwick_below(const i64* tree, Py_ssize_t pos) noexcept nogil:
    # count of inserted levels < pos
    cdef i64 total = 0
    while pos > 0:
        total += tree[pos - 1]
        pos -= pos & (-pos)
    return total


def pair_counts(const double[::1] scores, const i64[::1] levels, const i64[::1] offsets,
                const i64[::1] n_levels, i64[::1] heads, i64[::1] tails):
    """Per sample, in the order given (each query's samples by decreasing score):

    heads[p] = #{q of a lower level: s_q > s_p − 1} (pairs p heads that are swapped),
    tails[p] = #{q of a higher level: s_q − 1 < s_p} (swapped pairs p closes);
    a pair (i above j in relevance) is swapped when s_j > s_i − 1 (floating point).
    levels are 0 .. n_levels[q] − 1 within query q.
    """
    cdef Py_ssize_t n_queries = offsets.shape[0] - 1, q, a, b, p, r, size, largest = 1
    cdef i64 inserted
    cdef i64* tree
    for q in range(n_queries):
        if n_levels[q] > largest:
            largest = n_levels[q]
    tree = <i64*> malloc(largest * sizeof(i64))
    if tree == NULL:
        raise MemoryError()
    with nogil:
        for q in range(n_queries):
            a, b, size = offsets[q], offsets[q + 1], n_levels[q]
            for r in range(size):
                tree[r] = 0
            r = a
            for p in range(a, b):  # decreasing score, decreasing threshold s_p − 1
                while r < b and scores[r] > scores[p] - 1.0:
                    _fenwick_add(tree, size, levels[r])
                    r += 1
                heads[p] = _fenwick_below(tree, levels[p])
            for r in range(size):
                tree[r] = 0
            r = b - 1
            inserted = 0
            for p in range(b - 1, a - 1, -1):  # increasing score
                while r >= a and scores[r] - 1.0 < scores[p]:
                    _fenwick_add(tree, size, levels[r])
                    inserted += 1
                    r -= 1
                tails[p] = inserted - _fenwick_below(tree, levels[p] + 1)
    free(tree)


def ndcg_dp(const double[::1] scores, const i64[::1] starts, const double[::1] gains,
            const double[::1] discount, const i64[::1] counts, const i64[::1] dims,
            double pair_weight, i64 places, signed char[::1] choice, double[::1] value,
            i64[::1] prefix_counts):
    """Best prefix of ``places`` samples for graded NDCG@k (docs/algorithms.md).

    Level l's samples are scores[starts[l]:starts[l] + counts[l]], by decreasing score;
    gains[l] is its gain over the ideal DCG; discount[t] that of place t (0-based);
    pair_weight = 2 / (number of pairs of different levels). The state n (n_l of each
    level placed first) has index Σ n_l · stride_l with dims[l] = min(counts[l],
    places) + 1; ``choice`` (−1: unreachable) and ``value`` hold one entry per state.
    Returns the best objective (without its constants) and writes the n of the best
    final state into prefix_counts; the order of the prefix is read back from choice.
    """
    cdef Py_ssize_t L = counts.shape[0], l, m, t, i, c, lo, hi, mid
    cdef Py_ssize_t n_states = value.shape[0], state, prev, best_state = -1
    cdef Py_ssize_t total_count = 0
    cdef i64* n = <i64*> malloc(L * sizeof(i64))
    cdef i64* stride = <i64*> malloc(L * sizeof(i64))
    cdef double* prefsum = NULL
    cdef i64* above = NULL  # above[(l * K + i) * L + m]: level m samples scored > x_{l,i}
    cdef Py_ssize_t K = places
    cdef double best = -INFINITY, v, inc, s_x, pen
    cdef i64 total
    if n == NULL or stride == NULL:
        free(n)
        free(stride)
        raise MemoryError()
    for l in range(L):
        total_count += counts[l]
    prefsum = <double*> malloc((total_count + L) * sizeof(double))
    above = <i64*> malloc((L * K * L if L * K * L > 0 else 1) * sizeof(i64))
    if prefsum == NULL or above == NULL:
        free(n)
        free(stride)
        free(prefsum)
        free(above)
        raise MemoryError()
    with nogil:
        stride[0] = 1
        for l in range(1, L):
            stride[l] = stride[l - 1] * dims[l - 1]
        # prefix sums of each level's scores: prefsum[starts[l] + l + i] = Σ_{<i}
        for l in range(L):
            prefsum[starts[l] + l] = 0.0
            for i in range(counts[l]):
                prefsum[starts[l] + l + i + 1] = prefsum[starts[l] + l + i] + scores[starts[l] + i]
        for l in range(L):
            for i in range(dims[l] - 1):
                s_x = scores[starts[l] + i]
                for m in range(L):
                    lo, hi = 0, counts[m]  # first index of level m with score <= s_x
                    while lo < hi:
                        mid = (lo + hi) // 2
                        if scores[starts[m] + mid] > s_x:
                            lo = mid + 1
                        else:
                            hi = mid
                    above[(l * K + i) * L + m] = lo
        for l in range(L):
            n[l] = 0
        total = 0
        for state in range(n_states):
            if state > 0:  # odometer: the next n, and its total
                l = 0
                while n[l] + 1 == dims[l]:
                    total -= n[l]
                    n[l] = 0
                    l += 1
                n[l] += 1
                total += 1
            choice[state] = -1
            value[state] = -INFINITY
            if total > places:
                continue
            if state == 0:
                value[state] = 0.0
                choice[state] = -2
                continue
            t = total - 1  # the place of the last sample
            for l in range(L):
                if n[l] == 0:
                    continue
                prev = state - stride[l]
                if value[prev] == -INFINITY:
                    continue
                # the n[l]-th sample of level l at place t, below the others placed:
                # penalty for placed samples of other levels scored lower than it
                i = n[l] - 1
                s_x = scores[starts[l] + i]
                inc = 0.0
                for m in range(L):
                    if m == l:
                        continue
                    c = above[(l * K + i) * L + m]
                    if n[m] > c:
                        inc += (n[m] - c) * s_x - (prefsum[starts[m] + m + n[m]]
                                                    - prefsum[starts[m] + m + c])
                v = value[prev] - gains[l] * discount[t] - pair_weight * inc
                if v > value[state]:
                    value[state] = v
                    choice[state] = <signed char> l
            if total == places and value[state] > -INFINITY:
                # the rest by decreasing score: penalty for each placed sample below a
                # sample of another level left out
                pen = 0.0
                for l in range(L):
                    for i in range(n[l]):
                        s_x = scores[starts[l] + i]
                        for m in range(L):
                            if m == l:
                                continue
                            c = above[(l * K + i) * L + m]
                            if c > n[m]:
                                pen += (prefsum[starts[m] + m + c]
                                        - prefsum[starts[m] + m + n[m]]) - (c - n[m]) * s_x
                v = value[state] - pair_weight * pen
                if v > best:
                    best = v
                    best_state = state
                    for m in range(L):
                        prefix_counts[m] = n[m]
    free(n)
    free(stride)
    free(prefsum)
    free(above)
    return best
