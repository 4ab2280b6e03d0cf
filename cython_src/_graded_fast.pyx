"""Loss-augmented inference for graded relevance (svmrank.graded checks the inputs).

pairs_queries: SVM-rank's pairwise loss (Joachims 2006), per sample the number of
    swapped pairs it heads and closes: each query's rows sorted by score here and swept
    in the same pass (on OpenMP threads, one workspace each).
query_levels: each query's levels made dense (0 .. n_levels − 1) and its pairs of
    different levels counted, in one pass (the problems' set-up).
ndcg_dp: graded NDCG@k, a dynamic programme over how many samples of each level fill
    the first places (docs/algorithms.md, "Graded NDCG@k").
"""
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy
from libc.stdint cimport uint64_t
from libc.math cimport INFINITY
from cython.parallel cimport prange, threadid

ctypedef long long i64

PARALLEL_MIN_ROWS = 1 << 14  # fewer samples in all: one thread


cdef struct Item:
    uint64_t key  # ascending key = decreasing score (a total order, NaN included)
    i64 row


cdef inline uint64_t _descending_key(double s) noexcept nogil:
    # IEEE-754 bits mapped to an unsigned order that follows the doubles' order, then
    # inverted: ascending keys are decreasing scores
    cdef uint64_t b
    memcpy(&b, &s, 8)
    if b >> 63:
        b = ~b
    else:
        b |= (<uint64_t> 1) << 63
    return ~b


cdef void _sift_down(Item* a, Py_ssize_t start, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t root = start, child
    cdef Item t
    while 2 * root + 1 < n:
        child = 2 * root + 1
        if child + 1 < n and a[child].key < a[child + 1].key:
            child += 1
        if a[root].key >= a[child].key:
            return
        t = a[root]; a[root] = a[child]; a[child] = t
        root = child


cdef void _sort_items(Item* a, Py_ssize_t n, int depth) noexcept nogil:
    # introsort by key: quicksort (median of three), insertion sort below 17 items,
    # heapsort past the depth limit
    cdef Py_ssize_t i, j, mid
    cdef Item t, pivot
    cdef uint64_t pk
    while n > 16:
        if depth == 0:
            for i in range(n // 2 - 1, -1, -1):
                _sift_down(a, i, n)
            for i in range(n - 1, 0, -1):
                t = a[0]; a[0] = a[i]; a[i] = t
                _sift_down(a, 0, i)
            return
        depth -= 1
        mid = n // 2
        if a[mid].key < a[0].key:
            t = a[mid]; a[mid] = a[0]; a[0] = t
        if a[n - 1].key < a[0].key:
            t = a[n - 1]; a[n - 1] = a[0]; a[0] = t
        if a[n - 1].key < a[mid].key:
            t = a[n - 1]; a[n - 1] = a[mid]; a[mid] = t
        pk = a[mid].key  # a[0] <= pivot <= a[n-1]: both scans stop inside
        i, j = 0, n - 1
        while True:
            i += 1
            while a[i].key < pk:
                i += 1
            j -= 1
            while a[j].key > pk:
                j -= 1
            if i >= j:
                break
            t = a[i]; a[i] = a[j]; a[j] = t
        # [0, j] <= pivot <= [j + 1, n): recurse on the smaller part
        if j + 1 < n - j - 1:
            _sort_items(a, j + 1, depth)
            a, n = a + j + 1, n - j - 1
        else:
            _sort_items(a + j + 1, n - j - 1, depth)
            n = j + 1
    for i in range(1, n):
        t = a[i]
        j = i - 1
        while j >= 0 and a[j].key > t.key:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = t


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


cdef void _pairs_one(const double* scores, const i64* levels, Py_ssize_t a, Py_ssize_t b,
                     Py_ssize_t size, Item* items, i64* tree, double* coef,
                     double* swapped, i64* order) noexcept nogil:
    # Query a..b-1 (levels 0 .. size - 1) sorted by decreasing score, then per row
    #   heads = #{q of a lower level: s_q > s_p − 1} (pairs p heads that are swapped),
    #   tails = #{q of a higher level: s_q − 1 < s_p} (swapped pairs p closes),
    # a pair (i above j in relevance) being swapped when s_j > s_i − 1 (floating point);
    # coef[row] = heads − tails in row order, *swapped = Σ heads
    cdef Py_ssize_t m = b - a, p, r, depth = 2
    cdef i64 inserted, total = 0, count
    cdef double s, lo, hi
    if m == 0:
        swapped[0] = 0.0
        return
    lo, hi = scores[a], scores[a]
    for p in range(a + 1, b):
        if scores[p] < lo:
            lo = scores[p]
        if scores[p] > hi:
            hi = scores[p]
    if lo > hi - 1.0:
        # every pair is swapped (both sweeps test s_j > s_i − 1 in this form, and
        # fl(s_i − 1) <= fl(hi − 1)): heads = rows of lower levels, tails = of higher
        # ones; tree[0 .. size] becomes the rows below each level
        for r in range(size + 1):
            tree[r] = 0
        for p in range(a, b):
            tree[levels[p] + 1] += 1
        for r in range(size):
            tree[r + 1] += tree[r]
        for p in range(a, b):
            count = tree[levels[p]]
            coef[p] = <double> (count - (m - tree[levels[p] + 1]))
            total += count
        swapped[0] = <double> total
        return
    for p in range(m):
        r = a + p if order == NULL else order[a + p]
        items[p].key = _descending_key(scores[r])
        items[p].row = r
    while (<Py_ssize_t> 1 << (depth // 2)) < m:
        depth += 2
    _sort_items(items, m, depth)
    if order != NULL:
        for p in range(m):
            order[a + p] = items[p].row
    for r in range(size):
        tree[r] = 0
    r = 0
    for p in range(m):  # decreasing score, decreasing threshold s_p − 1
        s = scores[items[p].row] - 1.0
        while r < m and scores[items[r].row] > s:
            _fenwick_add(tree, size, levels[items[r].row])
            r += 1
        count = _fenwick_below(tree, levels[items[p].row])
        coef[items[p].row] = <double> count
        total += count
    swapped[0] = <double> total
    for r in range(size):
        tree[r] = 0
    r = m - 1
    inserted = 0
    for p in range(m - 1, -1, -1):  # increasing score
        s = scores[items[p].row]
        while r >= 0 and scores[items[r].row] - 1.0 < s:
            _fenwick_add(tree, size, levels[items[r].row])
            inserted += 1
            r -= 1
        coef[items[p].row] -= <double> (inserted - _fenwick_below(tree, levels[items[p].row] + 1))


def pairs_queries(const double[::1] scores, const i64[::1] levels, const i64[::1] offsets,
                  const i64[::1] n_levels, double[::1] coef, double[::1] swapped,
                  int n_threads=1, i64[::1] order=None):
    """Swapped-pair counts of every query (rows grouped by query, ``offsets``; levels
    0 .. n_levels[q] − 1 within query q), scores in row order: each query's rows sorted
    by decreasing score and swept in one pass (_pairs_one). Fills coef (heads − tails
    per row, in row order) and swapped (Σ heads per query). A query's counts
    depend on its rows alone, so the results are the same for any ``n_threads``
    (fewer than PARALLEL_MIN_ROWS samples in all: one thread). ``order`` (optional, each
    query's rows in any order, as row indices) is where each query's sort starts and
    receives its sorted rows: a caller whose scores change little between calls passes
    the same array each time and the sorts start nearly sorted (the results do not
    depend on it)."""
    cdef Py_ssize_t n_queries = offsets.shape[0] - 1, q, largest = 1, levels_max = 1
    cdef Py_ssize_t one
    cdef int n_used, t
    cdef char* mem
    cdef i64* order_ptr = NULL
    if order is not None and order.shape[0] > 0:
        order_ptr = &order[0]
    if n_queries < 1 or scores.shape[0] == 0:
        return
    for q in range(n_queries):
        largest = max(largest, offsets[q + 1] - offsets[q])
        levels_max = max(levels_max, n_levels[q])
    n_used = (1 if offsets[n_queries] - offsets[0] < PARALLEL_MIN_ROWS
              else <int> max(1, min(n_threads, n_queries)))
    one = largest * sizeof(Item) + (levels_max + 1) * sizeof(i64)
    mem = <char*> malloc(one * n_used)
    if mem == NULL:
        raise MemoryError()
    with nogil:
        if n_used == 1:
            for q in range(n_queries):
                _pairs_one(&scores[0], &levels[0], offsets[q], offsets[q + 1], n_levels[q],
                           <Item*> mem, <i64*> (mem + largest * sizeof(Item)), &coef[0],
                           &swapped[q], order_ptr)
        else:
            for q in prange(n_queries, schedule="dynamic", num_threads=n_used):
                t = threadid()
                _pairs_one(&scores[0], &levels[0], offsets[q], offsets[q + 1], n_levels[q],
                           <Item*> (mem + t * one),
                           <i64*> (mem + t * one + largest * sizeof(Item)), &coef[0],
                           &swapped[q], order_ptr)
    free(mem)


def query_levels(const i64[::1] labels, const i64[::1] offsets, i64[::1] dense,
                 i64[::1] n_levels, double[::1] n_pairs):
    """Per query (rows offsets[q] .. offsets[q + 1] − 1 of non-negative integer
    ``labels``): dense[i], the rank of labels[i] among the query's distinct labels;
    n_levels[q], their number; n_pairs[q], its pairs of different labels."""
    cdef Py_ssize_t n_queries = offsets.shape[0] - 1, q, i, j, k, n = labels.shape[0]
    cdef i64 top = 0, v, m, same
    cdef i64* count
    cdef i64* rank
    cdef i64* distinct
    for i in range(n):
        top = max(top, labels[i])
    count = <i64*> malloc((2 * (top + 1) + n + 1) * sizeof(i64))
    if count == NULL:
        raise MemoryError()
    rank, distinct = count + top + 1, count + 2 * (top + 1)
    with nogil:
        for i in range(top + 1):
            count[i] = 0
        for q in range(n_queries):
            k = 0
            for i in range(offsets[q], offsets[q + 1]):
                v = labels[i]
                if count[v] == 0:
                    distinct[k] = v
                    k += 1
                count[v] += 1
            for i in range(1, k):  # (few levels: insertion sort)
                v = distinct[i]
                j = i - 1
                while j >= 0 and distinct[j] > v:
                    distinct[j + 1] = distinct[j]
                    j -= 1
                distinct[j + 1] = v
            same = 0
            for i in range(k):
                rank[distinct[i]] = i
                same += count[distinct[i]] * count[distinct[i]]
                count[distinct[i]] = 0
            for i in range(offsets[q], offsets[q + 1]):
                dense[i] = rank[labels[i]]
            m = offsets[q + 1] - offsets[q]
            n_levels[q] = k
            n_pairs[q] = <double> ((m * m - same) // 2)
    free(count)


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
