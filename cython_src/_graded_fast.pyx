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


cdef double _dp_core(const double* sc, const i64* starts, const double* gains,
                     const double* discount, const i64* counts, const i64* dims, Py_ssize_t L,
                     double pair_weight, i64 places, signed char* choice, double* value,
                     i64* prefix, i64* n, i64* stride, double* prefsum,
                     i64* above) noexcept nogil:
    # The programme of ndcg_dp (its docstring) on one query; scratch: n, stride (L),
    # prefsum (samples + L), above (L * places * L).
    cdef Py_ssize_t l, m, t, i, c, lo, hi, mid, n_states = 1, state, prev
    cdef Py_ssize_t K = places
    cdef double best = -INFINITY, v, inc, s_x, pen
    cdef i64 total
    stride[0] = 1
    for l in range(L):
        if l > 0:
            stride[l] = stride[l - 1] * dims[l - 1]
        n_states *= dims[l]
    # prefix sums of each level's scores: prefsum[starts[l] + l + i] = Σ_{<i}
    for l in range(L):
        prefsum[starts[l] + l] = 0.0
        for i in range(counts[l]):
            prefsum[starts[l] + l + i + 1] = prefsum[starts[l] + l + i] + sc[starts[l] + i]
    for l in range(L):
        for i in range(dims[l] - 1):
            s_x = sc[starts[l] + i]
            for m in range(L):
                lo, hi = 0, counts[m]  # first index of level m with score <= s_x
                while lo < hi:
                    mid = (lo + hi) // 2
                    if sc[starts[m] + mid] > s_x:
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
            s_x = sc[starts[l] + i]
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
                    s_x = sc[starts[l] + i]
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
                for m in range(L):
                    prefix[m] = n[m]
    return best


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
    cdef Py_ssize_t L = counts.shape[0], l, total_count = 0
    for l in range(L):
        total_count += counts[l]
    cdef i64* n = <i64*> malloc(L * sizeof(i64))
    cdef i64* stride = <i64*> malloc(L * sizeof(i64))
    cdef double* prefsum = <double*> malloc((total_count + L) * sizeof(double))
    cdef i64* above = <i64*> malloc((L * places * L if L * places * L > 0 else 1) * sizeof(i64))
    cdef double best
    if n == NULL or stride == NULL or prefsum == NULL or above == NULL:
        free(n)
        free(stride)
        free(prefsum)
        free(above)
        raise MemoryError()
    with nogil:
        best = _dp_core(&scores[0], &starts[0], &gains[0], &discount[0], &counts[0], &dims[0],
                        L, pair_weight, places, &choice[0], &value[0], &prefix_counts[0], n,
                        stride, prefsum, above)
    free(n)
    free(stride)
    free(prefsum)
    free(above)
    return best


def ndcg_queries(const double[::1] scores, const i64[::1] by_level, const i64[::1] by_score,
                 const i64[::1] levels, const i64[::1] offsets, const i64[::1] level_offsets,
                 const i64[::1] counts, const i64[::1] dims, const double[::1] gains,
                 const double[::1] discount, const i64[::1] places, const double[::1] n_pairs,
                 Py_ssize_t max_states, double[::1] d, double[::1] losses, i64[::1] ranking):
    """Most violated ranking of every query for graded NDCG@k.

    Query q holds rows offsets[q] .. offsets[q+1] − 1 (global row numbers); by_level
    lists them by level, then decreasing score (then row), by_score by decreasing score
    (then row), each query contiguous as in offsets. levels[row] is the row's level
    0 .. L_q − 1; query q's levels have counts, dims (min(count, places[q]) + 1) and
    gains over the ideal DCG at level_offsets[q] .. level_offsets[q+1] − 1. Writes, per
    row, d = coef(R*) − coef(R̄) of F = Σ_{y_i>y_j} R_ij (s_i − s_j) / n_pairs[q]; per
    query the loss 1 − NDCG@k of R̄; and R̄ itself into ranking (rows, first place first).
    """
    cdef Py_ssize_t n_queries = offsets.shape[0] - 1, q, a, b, l, m, t, r, x, L
    cdef Py_ssize_t max_n = 1, max_L = 1, max_above = 1, state, w, lo_n, hi_n
    cdef i64 P
    cdef double dcg, lower_above, higher_above
    for q in range(n_queries):
        max_n = max(max_n, offsets[q + 1] - offsets[q])
        max_L = max(max_L, level_offsets[q + 1] - level_offsets[q])
        L = level_offsets[q + 1] - level_offsets[q]
        max_above = max(max_above, L * L * places[q])
    cdef signed char* choice = <signed char*> malloc(max_states * sizeof(signed char))
    cdef double* value = <double*> malloc(max_states * sizeof(double))
    cdef double* sc = <double*> malloc(max_n * sizeof(double))
    cdef double* prefsum = <double*> malloc((max_n + max_L) * sizeof(double))
    cdef i64* scratch = <i64*> malloc((6 * max_L + max_above + 2 * max_n) * sizeof(i64))
    if choice == NULL or value == NULL or sc == NULL or prefsum == NULL or scratch == NULL:
        free(choice)
        free(value)
        free(sc)
        free(prefsum)
        free(scratch)
        raise MemoryError()
    cdef i64* n = scratch
    cdef i64* stride = scratch + max_L
    cdef i64* prefix = scratch + 2 * max_L
    cdef i64* starts = scratch + 3 * max_L
    cdef i64* ptr = scratch + 4 * max_L
    cdef i64* below = scratch + 5 * max_L  # samples of levels < l (then cumulative counts)
    cdef i64* above = scratch + 6 * max_L
    cdef i64* seq = above + max_above
    cdef i64* in_head = seq + max_n
    with nogil:
        for q in range(n_queries):
            a, b = offsets[q], offsets[q + 1]
            w = level_offsets[q]
            L = level_offsets[q + 1] - w
            P = places[q]
            starts[0] = 0
            for l in range(1, L):
                starts[l] = starts[l - 1] + counts[w + l - 1]
            for r in range(a, b):
                sc[r - a] = scores[by_level[r]]
            _dp_core(sc, starts, &gains[w], &discount[0], &counts[w], &dims[w], L,
                     2.0 / n_pairs[q], P, choice, value, prefix, n, stride, prefsum, above)
            state = 0
            for l in range(L):
                state += prefix[l] * stride[l]
            for t in range(P - 1, -1, -1):
                l = choice[state]
                seq[t] = l
                state -= stride[l]
            for l in range(L):
                ptr[l] = 0
            for r in range(b - a):
                in_head[r] = 0
            dcg = 0.0
            for t in range(P):  # the prefix: each level's samples in score order
                l = seq[t]
                x = by_level[a + starts[l] + ptr[l]]
                ptr[l] += 1
                ranking[a + t] = x
                in_head[x - a] = 1
                dcg += gains[w + l] * discount[t]
            losses[q] = 1.0 - dcg
            t = P
            for r in range(a, b):  # the rest by decreasing score
                x = by_score[r]
                if not in_head[x - a]:
                    ranking[a + t] = x
                    t += 1
            # d = coef(R*) − coef(R̄) = 2 (lower above + higher above − higher) / pairs,
            # from coef(R) = (lower below − lower above) − (higher above − higher below)
            below[0] = 0
            for l in range(1, L):
                below[l] = below[l - 1] + counts[w + l - 1]
            for l in range(L):
                n[l] = 0  # samples of each level placed so far
            for t in range(b - a):
                x = ranking[a + t]
                l = levels[x]
                lower_above = 0.0
                higher_above = 0.0
                for m in range(L):
                    if m < l:
                        lower_above += n[m]
                    elif m > l:
                        higher_above += n[m]
                d[x] = 2.0 * (lower_above + higher_above
                              - (b - a - below[l] - counts[w + l])) / n_pairs[q]
                n[l] += 1
    free(choice)
    free(value)
    free(sc)
    free(prefsum)
    free(scratch)
