# Loss-augmented inference for QS-suitable rank losses (AP, NDCG, ROC area, user losses).
#
# Notation (NOTES.md, 2018 supplement): P positives sorted by decreasing score
# s+_1 >= ... >= s+_P; N negatives, the j-th highest scored s*_j; the interleaving rank
# r_j in 1..P+1 of negative j is one plus the number of positives ranked above it.
# The objective is sum_j f_j(r_j) with
#   f_j(i+1) - f_j(i) = 2 (s+_i - s*_j) / (P N) + delta_j(i+1) - delta_j(i)
# and opt_j, the largest maximiser of f_j, is non-decreasing in j (2018 Observation 2).
#
# Ties. Samples are ordered by (score descending, row index ascending), a total order,
# so every method assigns the same rank j to the same sample. Two interleaving ranks
# whose f_j differ by less than a rounding tolerance tau count as tied, and ties go to
# the larger rank: opt_j = max{i : f_j(i) >= max f_j - tau}. Every method applies this
# one rule, so exactly tied objectives (tied scores, scores that cancel the loss step)
# give the same maximiser whatever the order of the floating-point sums. The scans keep
# f_j(i) - max f_j as the sum of the steps since the maximum (gap_add), so the steps
# before it, which may be huge, do not round the comparison.
from libc.math cimport log2, NAN, INFINITY, fabs, isfinite
from libc.stdlib cimport malloc, free, qsort
from libc.stdint cimport PTRDIFF_MAX as PY_SSIZE_T_MAX

import threading

from cython.parallel cimport prange, threadid

cdef extern from *:
    """
    #define svmrank_prefetch(p) __builtin_prefetch(p)
    typedef struct { double s; Py_ssize_t idx; } svmrank_item;
    static int svmrank_item_desc(const void *a, const void *b) {
        const svmrank_item *x = (const svmrank_item *)a, *y = (const svmrank_item *)b;
        if (x->s > y->s) return -1;
        if (x->s < y->s) return 1;
        return (x->idx > y->idx) - (x->idx < y->idx);
    }
    """
    ctypedef struct svmrank_item:
        double s
        Py_ssize_t idx
    int svmrank_item_desc(const void *a, const void *b) noexcept nogil
    void svmrank_prefetch(const void *p) noexcept nogil

ctypedef svmrank_item Item

# The loss and method codes (LOSS_AP, ..., METHOD_QS, ...) are the cpdef enums of
# svmrank/_lai_fast.pxd, read here and, as Python ints, by svmrank.losses and
# svmrank.inference.
cdef unsigned long long RNG_SEED = 0x9E3779B97F4A7C15ULL  # of each query's xorshift

# tau = TIE_ULPS * eps * (P + 1) * (largest |f_j(i+1) - f_j(i)| bound): a bound on the
# rounding error of a sum of at most P + 1 steps, with margin. It is one tolerance for
# the whole query, which keeps opt_j monotone in j and every method's tie decisions
# identical. The bound takes the scores of the contested samples only (contested_scale):
# a sample whose every step has a certain sign (a positive above all negatives by more
# than the loss can weigh, a negative below all positives, ...) only restarts the gap
# or ends the ties, so an outlier does not widen tau for the others.
cdef double TIE_ULPS = 16.0
cdef double EPS = 2.220446049250313e-16


cdef struct Ctx:
    int loss
    Py_ssize_t P, N
    double pn, scale, ndcg_norm, tau
    const Item* pos
    double* dtab      # NDCG steps (D(k) - D(k-1)) / norm by k = i + j, or NULL
    double* ubuf      # user-loss steps of the negative being scanned, by i
    void* user        # the user-loss step provider (a Python callable), or NULL
    void* errors      # a list of this call's own: the exception a step raised goes there
    int error         # ERR_USER: a user step raised; ERR_SPAN: a query's scores overflow
    double shift      # subtracted from every score of the query (score_shift)
    bint keep_ranks   # write every negative's rank (else only where the method needs them)


cdef enum:
    ERR_USER = 1
    ERR_SPAN = 2


cdef inline Py_ssize_t row_at(const Py_ssize_t* rows, Py_ssize_t base, Py_ssize_t k) noexcept nogil:
    """Row of the k-th sample of a query: rows[k], or base + k for rows in place (NULL)."""
    return base + k if rows == NULL else rows[k]


cdef inline double discount(double position) noexcept nogil:
    # NDCG discount D(i) = 1 / log2(1 + i)
    return 1.0 / log2(1.0 + position)


cdef inline bint before(const Item* a, const Item* b) noexcept nogil:
    """a precedes b in the order (score descending, index ascending); branch-free."""
    return (a.s > b.s) | ((a.s == b.s) & (a.idx < b.idx))


cdef enum:  # what gap_add finds
    GAP_BELOW = 0    # below the maximum by more than tau
    GAP_TIE = 1      # within tau of the maximum
    GAP_NEW_MAX = 2  # a new strict maximum


cdef inline int gap_add(double* gap, double step, double tau) noexcept nogil:
    """One step of f_j with *gap = f_j(i) - max f_j so far: GAP_NEW_MAX at a new strict
    maximum (the gap restarts at 0), GAP_TIE within tau of the maximum, else GAP_BELOW
    (non-zero: a maximiser up to the tolerance)."""
    gap[0] += step
    if gap[0] > 0.0:
        gap[0] = 0.0
        return GAP_NEW_MAX
    return gap[0] >= -tau  # GAP_TIE or GAP_BELOW


cdef inline bint certain(double s, double lo, double hi, double w) noexcept nogil:
    """s lies above hi or below lo by more than w score units plus rounding: every step
    between s and a score of [lo, hi] then has the sign of the score difference."""
    return (s - hi > w + 8.0 * EPS * (fabs(s) + fabs(hi))
            or lo - s > w + 8.0 * EPS * (fabs(s) + fabs(lo)))


cdef double contested_scale(Ctx* c, const double* scores, const unsigned char* rel,
                            const Py_ssize_t* rows, Py_ssize_t base, Py_ssize_t n,
                            double neg_lo, double neg_hi, double w) noexcept nogil:
    """Largest |score| of the samples whose steps are not all of a certain sign: those
    within w = 2 dmax / scale score units (twice the largest loss step) of the other
    class's range. A positive above it always raises f_j (a new maximum, the gap restarts), a
    negative above it always lowers f_j from rank 1, and samples below it give steps
    that only lower (or, for a negative, only raise) f_j: their decisions need no
    tolerance, and their magnitudes never enter a gap that is compared with it."""
    cdef double big = 0.0, s
    cdef double pos_hi = c.pos[0].s, pos_lo = c.pos[c.P - 1].s
    cdef Py_ssize_t k, row
    for k in range(n):
        row = row_at(rows, base, k)
        s = scores[row] - c.shift
        if rel[row]:
            if not certain(s, neg_lo, neg_hi, w):
                big = fabs(s) if fabs(s) > big else big
        elif not certain(s, pos_lo, pos_hi, w):
            big = fabs(s) if fabs(s) > big else big
    return big


cdef inline double fstep(Ctx* c, Py_ssize_t i, Py_ssize_t j, double s) noexcept nogil:
    """f_j(i+1) - f_j(i) for 1 <= i <= P (2018 supplement, proof of Observation 3)."""
    cdef double dl
    if c.loss == LOSS_AP:  # AP (Yue et al.): (j-1)/(j+i-1) - j/(j+i) = -i / ((j+i-1)(j+i))
        dl = -i / ((j + i - 1.0) * (j + i) * c.P)
    elif c.loss == LOSS_NDCG:  # NDCG, binary relevance: (D(i+j) - D(i+j-1)) / sum_{i<=P} D(i)
        if c.dtab != NULL:
            dl = c.dtab[i + j]
        else:
            dl = (discount(i + j) - discount(i + j - 1)) / c.ndcg_norm
    elif c.loss == LOSS_ROC:  # ROC area: each positive moved above negative j removes one pair
        dl = -1.0 / c.pn
    else:
        dl = c.ubuf[i]
    return c.scale * (c.pos[i - 1].s - s) + dl


cdef int fill_user(Ctx* c, Py_ssize_t j, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """User loss: ubuf[i] = delta_j(i+1) - delta_j(i) for lo <= i < hi (one Python call)."""
    cdef Py_ssize_t i
    cdef double[::1] values
    if hi <= lo or c.error:
        return c.error
    with gil:
        try:
            values = (<object>c.user)(lo, hi, j, c.P, c.N)
            for i in range(lo, hi):
                c.ubuf[i] = values[i - lo]
        except BaseException as exc:
            (<list> c.errors).append(exc)
            c.error = ERR_USER
            for i in range(lo, hi):
                c.ubuf[i] = 0.0
    return c.error


cdef Py_ssize_t scan_rank(Ctx* c, Py_ssize_t j, double s, Py_ssize_t lo,
                          Py_ssize_t hi) noexcept nogil:
    """opt_j restricted to ranks lo..hi (1-based) by a linear scan of f_j."""
    cdef Py_ssize_t i, best = lo
    cdef double gap = 0.0
    if c.loss == LOSS_USER:
        fill_user(c, j, lo, hi)
    for i in range(lo, hi):
        if gap_add(&gap, fstep(c, i, j, s), c.tau):
            best = i + 1
    return best


cdef Py_ssize_t scan_opt(Ctx* c, Py_ssize_t j, double s, Py_ssize_t start, Py_ssize_t lo,
                         Py_ssize_t hi, Py_ssize_t* arg) noexcept nogil:
    """opt_j for QS, knowing that lo <= opt_j <= hi and that f_j's first maximiser is at
    least start (start <= lo): scan_rank's linear scan over start..hi, its result raised
    to lo if rounding put it lower (opt stays monotone). Sets *arg to the first
    maximiser found.

    Why start and not lo: the ties within tau go to the largest rank, so opt_j can lie
    beyond f_j's maximum, and a scan from a lower bound lo > argmax f_j would measure
    the tolerance against a lower top and could drift further up. The maximisers are
    monotone in j as opt_j is (Observation 2: f_j + g with g non-decreasing in i moves
    the smallest and largest maximiser, and the largest rank within tau of the maximum,
    only upwards), so the first maximiser of a negative ranked above is a safe start."""
    cdef Py_ssize_t i, best = start, first = start
    cdef double gap = 0.0, d_prev, d_next
    cdef int at
    if c.loss == LOSS_USER:
        fill_user(c, j, start, hi)
    if c.loss == LOSS_NDCG and c.dtab == NULL:
        # NDCG: fstep's two discounts per step, the lower one carried over (same values)
        d_prev = discount(start + j - 1)
        for i in range(start, hi):
            d_next = discount(i + j)
            at = gap_add(&gap, c.scale * (c.pos[i - 1].s - s) + (d_next - d_prev) / c.ndcg_norm,
                         c.tau)
            d_prev = d_next
            if at:
                best = i + 1
                if at == GAP_NEW_MAX:
                    first = i + 1
    else:
        for i in range(start, hi):
            at = gap_add(&gap, fstep(c, i, j, s), c.tau)
            if at:
                best = i + 1
                if at == GAP_NEW_MAX:
                    first = i + 1
    arg[0] = first
    return best if best > lo else lo


cdef Py_ssize_t search_rank(Ctx* c, Py_ssize_t j, double s, Py_ssize_t P) noexcept nogil:
    """opt_j over 1..P+1 by the 2014 paper's Algorithm 2 (AP and ROC area only).

    f_j is concave on ranks 1..p+1 with p = min(P, j) (its steps are non-increasing
    there: Proposition 1 of the 2014 paper; for ROC area p = P): a binary search finds
    the first negative step, the largest maximiser up to the tie tolerance lies right
    of it; ranks beyond p+1 (only when j < P) are scanned linearly."""
    cdef Py_ssize_t p = P if (c.loss == LOSS_ROC or j >= P) else j
    cdef Py_ssize_t a = 1, b = p + 1, m, i, best
    cdef double gap = 0.0
    while a < b:  # first i in [1, p] with a negative step, p + 1 if none
        m = a + (b - a) // 2
        if fstep(c, m, j, s) < 0.0:
            b = m
        else:
            a = m + 1
    best = a
    if p < P:  # Algorithm 2 step 3: linear part, from the concave part's maximiser
        return scan_rank(c, j, s, a, P + 1)
    for i in range(a, P + 1):  # concave: f only falls from here; extend over ties
        if gap_add(&gap, fstep(c, i, j, s), c.tau):
            best = i + 1
        else:
            break
    return best


cdef inline Py_ssize_t find_rank(Ctx* c, bint use_search, Py_ssize_t j, double s,
                                 Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    if use_search:
        return search_rank(c, j, s, c.P)
    return scan_rank(c, j, s, lo, hi)


cdef inline unsigned long long xorshift(unsigned long long* state) noexcept nogil:
    state[0] ^= state[0] << 13
    state[0] ^= state[0] >> 7
    state[0] ^= state[0] << 17
    return state[0]


cdef inline Py_ssize_t random_pivot(const Item* a, Py_ssize_t lo, Py_ssize_t n,
                                    unsigned long long* rng) noexcept nogil:
    """Position of a random pivot in a[lo..lo+n-1]: the median of three random samples
    when n > 32, one random sample otherwise."""
    cdef Py_ssize_t p, q, r
    p = lo + <Py_ssize_t>(xorshift(rng) % <unsigned long long>n)
    if n > 32:
        q = lo + <Py_ssize_t>(xorshift(rng) % <unsigned long long>n)
        r = lo + <Py_ssize_t>(xorshift(rng) % <unsigned long long>n)
        if before(&a[p], &a[q]) != before(&a[p], &a[r]):
            pass  # a[p] lies between the other two
        elif before(&a[q], &a[p]) != before(&a[q], &a[r]):
            p = q
        else:
            p = r
    return p


cdef inline Py_ssize_t partition(Item* a, Py_ssize_t lo, Py_ssize_t hi,
                                 unsigned long long* rng) noexcept nogil:
    """Partition a[lo..hi] around a random pivot (median of three random samples) in
    the order (score desc, index asc); returns the pivot's final position. Branch-free
    Lomuto loop: random scores would mispredict a branch on every comparison."""
    cdef Py_ssize_t n = hi - lo + 1, p, store, i
    cdef Item pivot, x
    cdef bint ahead
    p = random_pivot(a, lo, n, rng)
    pivot = a[p]
    a[p] = a[hi]
    a[hi] = pivot
    store = lo
    for i in range(lo, hi):
        x = a[i]
        ahead = (x.s > pivot.s) | ((x.s == pivot.s) & (x.idx < pivot.idx))
        a[i] = a[store]
        a[store] = x
        store += ahead
    a[hi] = a[store]
    a[store] = pivot
    return store


cdef void select_desc(Item* a, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t k,
                      unsigned long long* rng) noexcept nogil:
    """Quickselect in the order (score desc, index asc): afterwards a[k] holds the
    element of rank k within a[lo..hi], earlier ones before it, later ones after it."""
    cdef Py_ssize_t m
    while lo < hi:
        m = partition(a, lo, hi, rng)
        if k < m:
            hi = m - 1
        elif k > m:
            lo = m + 1
        else:
            return


cdef void sort_desc(Item* a, Py_ssize_t lo, Py_ssize_t hi,
                    unsigned long long* rng) noexcept nogil:
    """Sort a[lo..hi] in the order (score desc, index asc): quicksort on partition's
    branch-free loop, insertion sort below 16 elements (the qs path's positives)."""
    cdef Py_ssize_t m, i, k
    cdef Item x
    while hi - lo >= 16:
        m = partition(a, lo, hi, rng)
        if m - lo < hi - m:
            sort_desc(a, lo, m - 1, rng)
            lo = m + 1
        else:
            sort_desc(a, m + 1, hi, rng)
            hi = m - 1
    for i in range(lo + 1, hi + 1):
        x = a[i]
        k = i
        while k > lo and before(&x, &a[k - 1]):
            a[k] = a[k - 1]
            k -= 1
        a[k] = x


cdef inline Py_ssize_t partition_into(Item* src, Item* dst, Py_ssize_t lo, Py_ssize_t hi,
                                      unsigned long long* rng) noexcept nogil:
    """Partition src[lo..hi] into dst[lo..hi] around a random pivot (median of three
    samples) in the order (score desc, index asc); returns the pivot's position. Each
    element is written to both free ends and the right one kept: no branch, one read
    and two writes per element (src[lo..hi] is clobbered)."""
    cdef Py_ssize_t n = hi - lo + 1, p, front = lo, back = hi, i
    cdef Item pivot, x
    cdef bint ahead
    p = random_pivot(src, lo, n, rng)
    pivot = src[p]
    src[p] = src[hi]
    for i in range(lo, hi):
        x = src[i]
        ahead = (x.s > pivot.s) | ((x.s == pivot.s) & (x.idx < pivot.idx))
        dst[front] = x
        dst[back] = x
        front += ahead
        back -= 1 - ahead
    dst[front] = pivot
    return front


cdef void opt_ranks(Ctx* c, Item* src, Item* dst, Py_ssize_t lo, Py_ssize_t hi,
                    Py_ssize_t plo, Py_ssize_t pst, Py_ssize_t phi, Py_ssize_t joff,
                    unsigned long long* rng, Py_ssize_t* ranks,
                    Py_ssize_t* count) noexcept nogil:
    """OptRanks of the 2018 paper, Algorithm 1, on the negatives src[lo..hi] (exactly
    those of ranks joff+lo+1..joff+hi+1), whose optimal interleaving ranks lie in
    plo..phi and whose f_j have their first maximiser at pst or later (pst <= plo, see
    scan_opt).
    Writes ranks[idx] of each and counts them per interleaving rank.

    The paper splits at the median negative, found by quickselect; here one partition
    around a random pivot (median of three) replaces the selection: the pivot's
    position is its rank all the same, the expected cost stays O(N log P), and each
    level costs one pass over its negatives instead of the several of a quickselect.
    The partition goes from one buffer to the other, so the halves alternate buffers."""
    cdef Py_ssize_t m, i, r, a
    cdef Item* tmp
    while lo <= hi:
        if plo == phi:
            for i in range(lo, hi + 1):
                ranks[src[i].idx] = plo
            count[plo] += hi - lo + 1
            return
        m = partition_into(src, dst, lo, hi, rng)
        r = scan_opt(c, joff + m + 1, dst[m].s, pst, plo, phi, &a)
        ranks[dst[m].idx] = r
        count[r] += 1
        # recurse on the shorter side, loop on the other (stack depth O(log N))
        if m - lo < hi - m:
            opt_ranks(c, dst, src, lo, m - 1, plo, pst, r, joff, rng, ranks, count)
            lo = m + 1
            plo = r
            pst = a
        else:
            opt_ranks(c, dst, src, m + 1, hi, r, a, phi, joff, rng, ranks, count)
            hi = m - 1
            phi = r
        tmp = src
        src = dst
        dst = tmp


cdef enum:
    WAYS = 16             # buckets of a multiway split (15 pivots)
    MULTIWAY_MIN = 1024   # below this many negatives, split in two


cdef void opt_ranks_multiway(Ctx* c, Item* src, Item* dst, unsigned char* bid,
                             Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t plo, Py_ssize_t pst,
                             Py_ssize_t phi, Py_ssize_t joff, unsigned long long* rng,
                             Py_ssize_t* ranks, Py_ssize_t* count) noexcept nogil:
    """OptRanks (2018 Alg. 1) with up to 15 random pivots per pass instead of one: a
    sample-sort step classifies every negative of src[lo..hi] against the sorted pivots
    (branch-free binary search), scatters the buckets into dst[lo..hi] with each pivot
    at the end of its bucket (its rank is then known), computes the pivots' opt
    (monotone, so each within the previous one's) and recurses on every bucket whose
    opt range is not a single rank. Same maximisers as the binary split, a quarter
    of the passes over memory."""
    cdef Item sp[WAYS]
    cdef Py_ssize_t size[WAYS]
    cdef Py_ssize_t start[WAYS]
    cdef Py_ssize_t fill[WAYS]
    cdef Py_ssize_t ropt[WAYS + 1]
    cdef Py_ssize_t rst[WAYS + 1]
    cdef Py_ssize_t n = hi - lo + 1, i, t, b, ns = 0, half, sub_lo, sub_hi, r_lo, r_hi
    cdef Item x
    cdef bint split
    if plo == phi:
        for i in range(lo, hi + 1):
            ranks[src[i].idx] = plo
        count[plo] += n
        return
    if n < MULTIWAY_MIN:
        opt_ranks(c, src, dst, lo, hi, plo, pst, phi, joff, rng, ranks, count)
        return
    # WAYS - 1 distinct random pivots, sorted (insertion sort; duplicates dropped)
    for t in range(WAYS - 1):
        x = src[lo + <Py_ssize_t>(xorshift(rng) % <unsigned long long>n)]
        i = ns
        while i > 0 and before(&x, &sp[i - 1]):
            i -= 1
        if i > 0 and sp[i - 1].idx == x.idx:
            continue
        b = ns
        while b > i:
            sp[b] = sp[b - 1]
            b -= 1
        sp[i] = x
        ns += 1
    for t in range(ns, WAYS):  # sentinels after everything (the scatter reads sp[ns])
        sp[t].s = -INFINITY
        sp[t].idx = PY_SSIZE_T_MAX
    # classify: bucket = number of pivots preceding the element (a pivot is in its own)
    for t in range(WAYS):
        size[t] = 0
    for i in range(lo, hi + 1):
        b = 0
        half = 8
        while half > 0:
            b += half * before(&sp[b + half - 1], &src[i])
            half >>= 1
        bid[i] = <unsigned char> b
        size[b] += 1
    start[0] = lo
    for t in range(1, WAYS):
        start[t] = start[t - 1] + size[t - 1]
    for t in range(WAYS):
        fill[t] = start[t]
    # scatter: pivot t goes to the last slot of bucket t, the others fill the rest
    for i in range(lo, hi + 1):
        b = bid[i]
        split = src[i].idx == sp[b].idx
        if split:
            dst[start[b] + size[b] - 1] = src[i]
        else:
            dst[fill[b]] = src[i]
            fill[b] += 1
    # the pivots' opt: pivot t has rank start[t] + size[t] (1-based)
    ropt[0] = plo
    rst[0] = pst
    for t in range(ns):
        ropt[t + 1] = scan_opt(c, joff + start[t] + size[t], sp[t].s, rst[t], ropt[t], phi,
                               &rst[t + 1])
        ranks[sp[t].idx] = ropt[t + 1]
        count[ropt[t + 1]] += 1
    # buckets: the non-pivots of bucket t lie between pivots t-1 and t
    for t in range(ns + 1):
        sub_lo = start[t]
        sub_hi = start[t] + size[t] - 1 - (1 if t < ns else 0)
        if t == ns:
            sub_hi = hi
        r_lo = ropt[t]
        r_hi = ropt[t + 1] if t < ns else phi
        if sub_lo <= sub_hi:
            opt_ranks_multiway(c, dst, src, bid, sub_lo, sub_hi, r_lo, rst[t], r_hi, joff,
                               rng, ranks, count)


cdef enum:
    BUCKET_MIN_N = 4096   # queries of fewer samples skip the bucket pass
    BUCKET_AVG = 4        # samples per bucket aimed at (the table has n / BUCKET_AVG)
    BUCKET_MAX = 1 << 16  # largest bucket table (keys are 16-bit, 65535 marks positives)
    SAMPLE = 1024         # negatives sampled for the bucket range
    PREFETCH = 16         # gathered negatives prefetched ahead
cdef Py_ssize_t BUCKET_MAX_N = 1 << 31  # larger queries skip it (ranks in brank are 32-bit)


cdef Py_ssize_t bucket_count(Py_ssize_t n) noexcept nogil:
    """Buckets of the first split of a query of n samples (a power of two)."""
    cdef Py_ssize_t k = 256
    while k < BUCKET_MAX and k * BUCKET_AVG < n:
        k *= 2
    return k


cdef void opt_points(Ctx* c, const Py_ssize_t* pj, const double* ps, Py_ssize_t* popt,
                     Py_ssize_t* pa, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t plo,
                     Py_ssize_t pst, Py_ssize_t phi) noexcept nogil:
    """Algorithm 1 of 2018 on a sorted list of negatives given by rank and score only
    (pj[t], ps[t], t = lo..hi, distinct negatives in their order): popt[t] = opt of
    each, knowing they lie in plo..phi and that their first maximisers are >= pst, and
    pa[t] a scan start for the negatives after point t (see scan_opt). Split at the
    middle point; a range of one rank ends the recursion."""
    cdef Py_ssize_t m, r, i, a
    while lo <= hi:
        if plo == phi:
            for i in range(lo, hi + 1):
                popt[i] = plo
                pa[i] = pst
            return
        m = lo + (hi - lo) // 2
        r = scan_opt(c, pj[m], ps[m], pst, plo, phi, &a)
        popt[m] = r
        pa[m] = a
        opt_points(c, pj, ps, popt, pa, lo, m - 1, plo, pst, r)
        lo = m + 1
        plo = r
        pst = a


cdef void selective(Ctx* c, Item* neg, Py_ssize_t* opt, bint use_search,
                    unsigned long long* rng) noexcept nogil:
    """Selective ranking (2014 paper, Algorithm 3). Binary search over ranks, with
    quickselect for the negative of each probed rank, finds the first rank t whose opt
    is P+1; every lower-scored negative shares it (opt is monotone). Only the t-1
    negatives above are sorted and given their rank (Algorithm 1 step 5 or Algorithm 2)."""
    cdef Py_ssize_t P = c.P, N = c.N, lo = 0, hi = N + 1, m, j, r
    # invariant: ranks <= lo have opt <= P, ranks >= hi have opt = P + 1; positions
    # lo..hi-2 (0-based) hold exactly the negatives of ranks lo+1..hi-1
    while hi - lo > 1:
        m = lo + (hi - lo) // 2
        select_desc(neg, lo, hi - 2, m - 1, rng)
        r = find_rank(c, use_search, m, neg[m - 1].s, 1, P + 1)
        if r == P + 1:
            hi = m
        else:
            lo = m
    qsort(neg, hi - 1, sizeof(Item), svmrank_item_desc)
    for j in range(hi - 1):
        opt[j] = find_rank(c, use_search, j + 1, neg[j].s, 1, P + 1)
    for j in range(hi - 1, N):
        opt[j] = P + 1


cdef struct Bucket:
    double top            # highest negative score in the bucket
    Py_ssize_t cnt        # negatives in the bucket


cdef struct Buckets:
    unsigned short* keys  # bucket of each sample of the query, by position (K: positive)
    Bucket* bkt           # per bucket (one cache line per update of the bucket pass)
    int* brank            # opt of a pure bucket's negatives, -1 for a mixed bucket
    unsigned long long* mixed  # bit set of the mixed buckets (their two bounds differ)
    Py_ssize_t* fill      # where the next negative of a mixed bucket goes in neg
    Py_ssize_t* pj        # points (first negative of each non-empty bucket): rank j,
    double* ps            # score,
    Py_ssize_t* popt      # opt_j,
    Py_ssize_t* pa        # scan start for the negatives after it (scan_opt),
    Py_ssize_t* pb        # bucket
    Py_ssize_t* rk        # ranks of the gathered negatives, by number (qs_buckets)


cdef Py_ssize_t bucket_range(const double* scores, const unsigned char* rel,
                             const Py_ssize_t* rows, Py_ssize_t base, Py_ssize_t n,
                             double shift, unsigned long long* rng, double* top,
                             double* scale) noexcept nogil:
    """Bucket table size K for a query of n samples, and the map of a score s to its
    bucket min(K - 1, max(0, (top - s) * scale)) (equal widths over the range of a random
    sample of the negatives; scores outside it go to the end buckets). The map is
    monotone (each rounding is), so a higher score never gets a higher bucket and equal
    scores share one. 0 when the sample has no spread or the width over- or underflows
    (then the query takes the plain multiway split)."""
    cdef Py_ssize_t K = min(bucket_count(n), BUCKET_MAX - 1), got = 0, tries, row
    cdef double lo = INFINITY, hi = -INFINITY, s
    for tries in range(4 * SAMPLE):
        row = row_at(rows, base, <Py_ssize_t>(xorshift(rng) % <unsigned long long>n))
        if not rel[row]:
            s = scores[row] - shift
            lo = s if s < lo else lo
            hi = s if s > hi else hi
            got += 1
            if got == SAMPLE:
                break
    if got < 16 or not (hi > lo):
        return 0
    scale[0] = K / (hi - lo)
    top[0] = hi
    if not (scale[0] > 0.0 and scale[0] < INFINITY):
        return 0
    return K


cdef double qs_buckets(Ctx* c, const double* scores, const unsigned char* rel,
                       const Py_ssize_t* rows, Py_ssize_t base, Py_ssize_t n, int order,
                       Py_ssize_t K, double last_s, Item* neg, Item* scratch, unsigned char* bid,
                       Buckets* bk, unsigned long long* rng, double* coef,
                       Py_ssize_t* ranks, Py_ssize_t* count, double* coefr) noexcept nogil:
    """OptRanks (2018 Alg. 1) after one bucket pass over the query (read_query): every
    negative carries its bucket number (buckets follow the order of the negatives: a
    higher score never has a higher bucket, equal scores share one), each bucket its size
    and its highest score. The first negative of bucket b is then known by rank j and
    score without moving anything, and these negatives (with the query's last negative)
    are Algorithm 1's pivots: their opt (opt_points) bounds the opt of every negative
    of bucket b between b's pivot and the next one (Observation 2). A bucket whose two
    bounds agree (a pure bucket: all but at most P of them, since only P + 1 ranks
    exist) is finished; the negatives of the other (mixed) buckets are gathered, bucket
    after bucket, into a compact array and split further by opt_ranks_multiway (the
    pivots keep their opt; rank j = position + 1 + the bucket's offset).
    Then coef and ranks of every negative, in input order; returns F's negative part
    sum_k coef[row] * s[row], summed in input order as rank_negatives does.

    Scores are read less c.shift. order: 2 if rows[k] = base + k (always when rows is
    NULL), 1 if rows increase, else 0. When rows increase the gathered negatives are
    numbered in input order, which is also their row order (the tie order), and the
    number replaces the row in the recursion: their ranks go to the compact bk.rk and
    are read back in order, instead of to and from random rows."""
    cdef Py_ssize_t b, t, M = 0, T, start = 0, P = c.P, N = c.N, k, row, v, r, nmix = 0
    cdef Py_ssize_t first, last, hi_r, i, joff, g = 0, nl = 0
    cdef bint mix, keep = c.keep_ranks
    cdef double f_score = 0.0, pn = c.pn, shift = c.shift
    cdef unsigned short* keys = bk.keys
    cdef int* brank = bk.brank
    cdef unsigned int kb
    cdef Py_ssize_t* popt = bk.popt
    cdef Py_ssize_t* rk = bk.rk if order else ranks
    cdef Item x
    for b in range(K // 64 + 1):  # (bucket K: the positives, never mixed)
        bk.mixed[b] = 0
    for b in range(K):  # (branch-free: empty buckets are overwritten)
        bk.pj[M] = start + 1
        bk.ps[M] = bk.bkt[b].top
        bk.pb[M] = b
        M += bk.bkt[b].cnt != 0
        start += bk.bkt[b].cnt
    T = M
    if bk.bkt[bk.pb[M - 1]].cnt > 1:  # the last negative is a pivot too, unless it is one already
        bk.pj[M] = N
        bk.ps[M] = last_s
        T = M + 1
    opt_points(c, bk.pj, bk.ps, popt, bk.pa, 0, T - 1, 1, 1, P + 1)
    for t in range(M):
        b = bk.pb[t]
        hi_r = popt[t + 1] if t + 1 < T else popt[t]
        if popt[t] == hi_r:
            brank[b] = <int> popt[t]
            count[popt[t]] += bk.bkt[b].cnt
        else:
            brank[b] = -1
            bk.mixed[b >> 6] |= 1ULL << (b & 63)
            bk.fill[b] = nmix  # the bucket's place in the compact array
            nmix += bk.bkt[b].cnt
    if nmix:
        # where the mixed buckets' negatives are (a list in bk.rk, free until the
        # recursion), then their scores, prefetched: they are too sparse for the
        # hardware prefetcher
        nl = 0
        for k in range(n):  # (branch-free)
            kb = keys[k]
            bk.rk[nl] = k
            nl += (bk.mixed[kb >> 6] >> (kb & 63)) & 1
        for i in range(nl):
            if i + PREFETCH < nl:
                k = bk.rk[i + PREFETCH]
                if order == 2:
                    svmrank_prefetch(&scores[base + k])
                else:
                    svmrank_prefetch(&rows[k])
            k = bk.rk[i]
            row = base + k if order == 2 else rows[k]
            kb = keys[k]
            v = bk.fill[kb]
            neg[v].s = scores[row] - shift
            neg[v].idx = i if order else row
            bk.fill[kb] = v + 1
        for t in range(M):
            hi_r = popt[t + 1] if t + 1 < T else popt[t]
            if popt[t] == hi_r:
                continue
            b = bk.pb[t]
            first = bk.fill[b] - bk.bkt[b].cnt
            last = bk.fill[b] - 1
            joff = bk.pj[t] - 1 - first
            # the pivot (the bucket's first negative) to the front, with its opt
            v = first
            for i in range(first + 1, last + 1):
                if before(&neg[i], &neg[v]):
                    v = i
            x = neg[v]; neg[v] = neg[first]; neg[first] = x
            rk[x.idx] = popt[t]
            count[popt[t]] += 1
            first += 1
            if t + 1 == M and T > M:  # the query's last negative, a pivot too, to the end
                v = last
                for i in range(first, last):
                    if before(&neg[v], &neg[i]):
                        v = i
                x = neg[v]; neg[v] = neg[last]; neg[last] = x
                rk[x.idx] = popt[M]
                count[popt[M]] += 1
                last -= 1
            if first <= last:
                opt_ranks_multiway(c, neg, scratch, bid, first, last, popt[t], bk.pa[t],
                                   hi_r, joff, rng, rk, count)
    # negatives' coefficients (2018 supplement Lemma 8), rows in input order
    for r in range(1, P + 2):
        coefr[r] = (P + 2.0 - 2.0 * r) / pn
    g = 0
    if order == 2:
        for k in range(n):
            kb = keys[k]
            if kb != K:
                r = brank[kb]  # (branch-free: rk[g] exists, g <= nl < m)
                mix = r < 0
                r = rk[g] if mix else r
                g += mix
                if keep:
                    ranks[base + k] = r
                coef[base + k] = coefr[r]
                f_score += coefr[r] * (scores[base + k] - shift)
    else:
        for k in range(n):
            kb = keys[k]
            if kb != K:
                row = rows[k]
                r = brank[kb]
                if r < 0:
                    if order:
                        r = rk[g]
                        g += 1
                    else:
                        r = ranks[row]
                if keep:
                    ranks[row] = r
                coef[row] = coefr[r]
                f_score += coefr[r] * (scores[row] - shift)
    return f_score


cdef struct Query:
    # what one pass over a query's samples finds (read_query)
    Py_ssize_t P, N         # positives (in pos) and negatives (in neg, or bucketed)
    Py_ssize_t K            # buckets of the qs bucket pass, 0 when it was not taken
    int order               # 2: rows are base, base + 1, ...; 1: rows increase; 0: else
    double pos_lo, pos_hi   # range of the positives' scores
    double neg_lo, neg_hi   # range of the negatives' scores
    double biggest          # largest |score|


cdef void read_query(const double* scores, const unsigned char* rel, const Py_ssize_t* rows,
                     Py_ssize_t base, Py_ssize_t n, bint use_buckets, double shift,
                     Item* pos, Item* neg, Buckets* bk, unsigned long long* rng,
                     Query* q) noexcept nogil:
    """One pass over a query, every score read less shift: the positives into pos, the
    ranges of both classes and the largest |score| into q. The negatives go to neg, or,
    with use_buckets and a bucket map found (q.K > 0, see qs_buckets), only their bucket
    numbers and each bucket's size and highest score to bk."""
    cdef Py_ssize_t k, row, P = 0, N = 0, K = 0
    cdef double s, t, kmax, top = 0.0, scale = 0.0, biggest = 0.0  # (top, scale: bucket_range)
    cdef double pos_lo = INFINITY, neg_lo = INFINITY, pos_hi = -INFINITY, neg_hi = -INFINITY
    cdef unsigned int b
    cdef int order = 2
    if use_buckets:
        K = bucket_range(scores, rel, rows, base, n, shift, rng, &top, &scale)
    if K:
        kmax = K - 1.0
        for b in range(K):
            bk.bkt[b].cnt = 0
            bk.bkt[b].top = -INFINITY
        for k in range(n):
            if rows == NULL:
                row = base + k
            else:
                row = rows[k]
                if order != 2 or row != rows[0] + k:  # (not taken while rows are contiguous)
                    order = 1 if order and row > rows[k - 1] else 0
            s = scores[row] - shift
            if rel[row]:
                pos[P].s = s; pos[P].idx = row; P += 1
                pos_lo = s if s < pos_lo else pos_lo
                pos_hi = s if s > pos_hi else pos_hi
                bk.keys[k] = <unsigned short> K
            else:
                t = (top - s) * scale  # monotone in s, rounding included
                t = t if t > 0.0 else 0.0
                t = t if t < kmax else kmax
                b = <unsigned int> t
                bk.keys[k] = <unsigned short> b
                bk.bkt[b].cnt += 1
                bk.bkt[b].top = s if s > bk.bkt[b].top else bk.bkt[b].top
                neg_lo = s if s < neg_lo else neg_lo
                neg_hi = s if s > neg_hi else neg_hi
                N += 1
            biggest = max(biggest, fabs(s))
    else:
        for k in range(n):
            row = row_at(rows, base, k)
            s = scores[row] - shift
            if rel[row]:
                pos[P].s = s; pos[P].idx = row; P += 1
                pos_lo = s if s < pos_lo else pos_lo
                pos_hi = s if s > pos_hi else pos_hi
            else:
                neg[N].s = s; neg[N].idx = row; N += 1
                neg_lo = s if s < neg_lo else neg_lo
                neg_hi = s if s > neg_hi else neg_hi
            biggest = max(biggest, fabs(s))
    q.P = P
    q.N = N
    q.K = K
    q.order = order
    q.pos_lo = pos_lo
    q.pos_hi = pos_hi
    q.neg_lo = neg_lo
    q.neg_hi = neg_hi
    q.biggest = biggest


cdef double score_shift(const Query* q) noexcept nogil:
    """The midpoint of the region where the two classes' scores meet, [max of the lows,
    min of the highs], when it lies farther from 0 than the region is wide; else 0."""
    cdef double a, t, mid
    if q.P == 0 or q.N == 0:
        return 0.0
    a = max(q.pos_lo, q.neg_lo)
    t = min(q.pos_hi, q.neg_hi)
    mid = 0.5 * a + 0.5 * t
    if 0.5 * fabs(mid) > fabs(0.5 * a - 0.5 * t):
        return mid
    return 0.0


cdef double largest_loss_step(const Ctx* c, double user_dmax) noexcept nogil:
    """A bound on |delta_j(i+1) - delta_j(i)| of the query's loss."""
    if c.loss == LOSS_AP:
        return 1.0 / c.P
    if c.loss == LOSS_NDCG:
        return 1.0 / c.ndcg_norm
    if c.loss == LOSS_ROC:
        return 1.0 / c.pn
    return user_dmax


cdef double tie_tolerance(Ctx* c, const Query* q, const double* scores,
                          const unsigned char* rel, const Py_ssize_t* rows, Py_ssize_t base,
                          Py_ssize_t n, double dmax) noexcept nogil:
    """tau of the query (see TIE_ULPS), c's positives sorted and c.scale set."""
    cdef double biggest = q.biggest
    # the outermost sample of each class decides whether any sample is certain (then
    # one more pass finds the contested scale); small factors first in tau: 2 * scale *
    # |s| alone overflows for scores near 1e308
    cdef double w = 2.0 * dmax / c.scale
    cdef const Item* pos = c.pos
    cdef Py_ssize_t P = c.P
    if (certain(pos[0].s, q.neg_lo, q.neg_hi, w) or certain(pos[P - 1].s, q.neg_lo, q.neg_hi, w)
            or certain(q.neg_hi, pos[P - 1].s, pos[0].s, w)
            or certain(q.neg_lo, pos[P - 1].s, pos[0].s, w)):
        biggest = contested_scale(c, scores, rel, rows, base, n, q.neg_lo, q.neg_hi, w)
    return (TIE_ULPS * EPS * (P + 1.0)) * (2.0 * c.scale) * biggest \
        + (TIE_ULPS * EPS * (P + 1.0)) * dmax


cdef double rank_negatives(Ctx* c, const Query* q, const double* scores,
                           const unsigned char* rel, const Py_ssize_t* rows, Py_ssize_t base,
                           Py_ssize_t n, int method, Item* neg, Item* scratch,
                           unsigned char* bid, Buckets* bk, unsigned long long* rng,
                           double* coef, Py_ssize_t* ranks, Py_ssize_t* opt,
                           Py_ssize_t* count, double* dtab) noexcept nogil:
    """Every negative's opt_j by the method asked for (the qs bucket split when
    read_query took the bucket pass): writes ranks (where needed), count[r] (negatives
    of interleaving rank r) and the negatives' coef; returns F's negative part
    sum coef[row] * s[row], summed in input order."""
    cdef Py_ssize_t i, j, k, row, P = c.P, N = c.N
    cdef double f_score = 0.0, pn = c.pn, shift = c.shift
    for i in range(P + 2):
        count[i] = 0
    if q.K:
        # (qs_buckets reads base only when order == 2: the rows are base, base + 1, ...)
        return qs_buckets(c, scores, rel, rows, base if rows == NULL else rows[0], n,
                          q.order, q.K, q.neg_lo, neg, scratch, bid,
                          bk, rng, coef, ranks, count, dtab)
    if method == METHOD_QS:
        opt_ranks_multiway(c, neg, scratch, bid, 0, N - 1, 1, 1, P + 1, 0, rng, ranks, count)
    else:
        if method == METHOD_GREEDY:  # Yue et al. (2014 Alg. 1): sort, scan every rank
            if c.loss == LOSS_NDCG:  # Chakrabarti et al.'s O(NP + N log N) greedy: tabulated steps
                for k in range(2, P + N + 1):
                    dtab[k] = (discount(k) - discount(k - 1.0)) / c.ndcg_norm
                c.dtab = dtab
            qsort(neg, N, sizeof(Item), svmrank_item_desc)
            for j in range(N):
                opt[j] = scan_rank(c, j + 1, neg[j].s, 1, P + 1)
        elif method == METHOD_SEARCH:  # Algorithm 2 of 2014 for every negative, after sorting them
            qsort(neg, N, sizeof(Item), svmrank_item_desc)
            for j in range(N):
                opt[j] = search_rank(c, j + 1, neg[j].s, P)
        else:  # METHOD_SELECT, METHOD_SEARCH_SELECT
            selective(c, neg, opt, method == METHOD_SEARCH_SELECT, rng)
        for j in range(N):
            ranks[neg[j].idx] = opt[j]
            count[opt[j]] += 1
    # negatives' coefficients (2018 supplement Lemma 8), rows in input order
    for k in range(n):
        row = row_at(rows, base, k)
        if not rel[row]:
            coef[row] = (P + 2.0 - 2.0 * ranks[row]) / pn
            f_score += coef[row] * (scores[row] - shift)
    return f_score


cdef double rank_positives(Ctx* c, const Py_ssize_t* count, double* coef, Py_ssize_t* ranks,
                           double* f_score) noexcept nogil:
    """The positives' coef (Lemma 8) from the negatives' ranks (count), each added to
    *f_score; returns the loss of the ranking (0 for a user loss)."""
    cdef Py_ssize_t i, above = 0, P = c.P, N = c.N  # above: negatives ranked above positive i
    cdef double loss_value = 0.0, pn = c.pn, f = f_score[0]
    cdef int loss = c.loss
    cdef const Item* pos = c.pos
    for i in range(1, P + 1):
        above += count[i]
        coef[pos[i - 1].idx] = (N - 2.0 * above) / pn
        ranks[pos[i - 1].idx] = 0
        f += coef[pos[i - 1].idx] * pos[i - 1].s
        if loss == LOSS_AP:  # 1 - AP: positive i sits at position i + above
            loss_value += i / (i + <double>above)
        elif loss == LOSS_NDCG:
            loss_value += discount(i + above)
    f_score[0] = f
    if loss == LOSS_AP:
        loss_value = 1.0 - loss_value / P
    elif loss == LOSS_NDCG:
        loss_value = 1.0 - loss_value / c.ndcg_norm
    elif loss == LOSS_ROC:
        for i in range(1, P + 1):
            loss_value += count[i] * (P + 1.0 - i)
        loss_value /= pn
    return loss_value


cdef double infer_one(Ctx* c, const double* scores, const unsigned char* rel,
                      const Py_ssize_t* rows, Py_ssize_t base, Py_ssize_t n, int method,
                      double user_dmax, double* coef, Py_ssize_t* ranks, double* objective,
                      Item* pos, Item* neg, Py_ssize_t* opt, Py_ssize_t* count,
                      double* dtab, Item* scratch, unsigned char* bid,
                      Buckets* bk) noexcept nogil:
    """Most violated ranking of one query, whose k-th sample is row_at(rows, base, k)
    (it indexes scores/rel/coef/ranks).

    Writes coef[row], ranks[row] (a negative's interleaving rank, 0 for a positive)
    and *objective; returns the loss (NaN, coef 0, when the query has no positive or no
    negative; 0 for a user loss, whose value the caller adds). Sets c.shift, the
    midpoint of the region where the two classes meet when it is farther from 0 than
    the region is wide, and reads every score less it; sets c.error = ERR_SPAN when
    the query's scores span more than the largest double.

    The inference depends on score differences only, while the tie tolerance grows
    with the |score| of the contested samples, which lie in that region: under a large
    offset (1e14 plus small differences) it would count whole loss steps as ties. The
    shift keeps order and ties (rounding is monotone) and is exact for scores within a
    factor 2 of the midpoint; samples far from the region decide nothing by a tie. The
    first pass reads the scores as they are and finds the classes' ranges; when the
    query needs a shift, it is read again, shifted.

    Steps: read_query (the classes and their ranges), score_shift (and a second
    read), the context of the query, tie_tolerance, rank_negatives (the method),
    rank_positives (their coefficients and the loss)."""
    cdef Query q
    cdef Py_ssize_t k, i, row
    cdef double ndcg_norm = 0.0, loss_value, f_score, shift
    cdef unsigned long long rng = RNG_SEED
    cdef bint use_buckets = method == METHOD_QS and n >= BUCKET_MIN_N and bk.keys != NULL
    c.shift = 0.0
    read_query(scores, rel, rows, base, n, use_buckets, 0.0, pos, neg, bk, &rng, &q)
    if not isfinite(max(q.pos_hi, q.neg_hi) - min(q.pos_lo, q.neg_lo)):
        c.error = ERR_SPAN
        objective[0] = NAN
        return NAN
    shift = score_shift(&q)
    if shift != 0.0:
        rng = RNG_SEED
        read_query(scores, rel, rows, base, n, use_buckets, shift, pos, neg, bk, &rng, &q)
    c.shift = shift
    if q.P == 0 or q.N == 0:
        for k in range(n):
            row = row_at(rows, base, k)
            coef[row] = 0.0
            ranks[row] = 0
        objective[0] = NAN
        return NAN
    if c.loss == LOSS_NDCG:  # (only NDCG uses it)
        for i in range(1, q.P + 1):
            ndcg_norm += discount(i)
    if q.K:
        sort_desc(pos, 0, q.P - 1, &rng)
    else:
        qsort(pos, q.P, sizeof(Item), svmrank_item_desc)
    c.P = q.P
    c.N = q.N
    c.pn = <double>q.P * q.N
    c.scale = 2.0 / c.pn
    c.ndcg_norm = ndcg_norm
    c.pos = pos
    c.dtab = NULL
    c.tau = tie_tolerance(c, &q, scores, rel, rows, base, n, largest_loss_step(c, user_dmax))
    f_score = rank_negatives(c, &q, scores, rel, rows, base, n, method, neg, scratch, bid, bk,
                             &rng, coef, ranks, opt, count, dtab)
    loss_value = rank_positives(c, count, coef, ranks, &f_score)
    objective[0] = loss_value + f_score
    return loss_value


cdef struct Work:
    # one thread's work arrays (carved out of one block by carve)
    Item* pos
    Item* neg
    Item* scratch
    Py_ssize_t* opt
    Py_ssize_t* count
    double* dtab
    unsigned char* bid
    Buckets bk


cdef void carve(char* mem, Py_ssize_t m, Py_ssize_t kb, Ctx* c, Work* w) noexcept nogil:
    """Lay out one thread's work arrays in mem (work_bytes(m, kb) bytes); c.ubuf too."""
    cdef double* ubuf
    w.pos = <Item*> mem
    w.neg = w.pos + m
    w.scratch = w.neg + m
    w.opt = <Py_ssize_t*> (w.scratch + m)
    w.count = w.opt + m
    w.dtab = <double*> (w.count + m)
    ubuf = w.dtab + m
    c.ubuf = ubuf
    w.bk.keys = NULL
    w.bk.bkt = NULL
    w.bk.brank = NULL
    w.bk.mixed = NULL
    w.bk.fill = w.bk.pj = w.bk.popt = w.bk.pa = w.bk.pb = w.bk.rk = NULL
    w.bk.ps = NULL
    if kb:  # keys share opt's memory (only the other methods use opt)
        w.bk.keys = <unsigned short*> w.opt
        w.bk.bkt = <Bucket*> (ubuf + m)
        w.bk.fill = <Py_ssize_t*> (w.bk.bkt + kb)
        w.bk.pj = w.bk.fill + kb
        w.bk.popt = w.bk.pj + kb
        w.bk.pa = w.bk.popt + kb
        w.bk.pb = w.bk.pa + kb
        w.bk.ps = <double*> (w.bk.pb + kb)
        w.bk.mixed = <unsigned long long*> (w.bk.ps + kb)
        w.bk.brank = <int*> (w.bk.mixed + kb)
        w.bk.rk = <Py_ssize_t*> (<char*> (ubuf + m) + 10 * kb * sizeof(double))
    w.bid = <unsigned char*> (<char*> (ubuf + m) + 10 * kb * sizeof(double)
                              + (m * sizeof(Py_ssize_t) if kb else 0))


cdef size_t work_bytes(Py_ssize_t m, Py_ssize_t kb) noexcept nogil:
    """Bytes of one thread's work arrays, rounded up to a cache line (64 bytes)."""
    cdef size_t need = 3 * m * sizeof(Item) + 4 * m * sizeof(double) + m
    if kb:
        need += 10 * kb * sizeof(double) + m * sizeof(Py_ssize_t)
    return (need + 63) & ~(<size_t> 63)


cdef inline void one_query(Ctx* c, Work* w, Py_ssize_t q, const Py_ssize_t* offsets,
                           const Py_ssize_t* order_ptr, const double* scores,
                           const unsigned char* rel, int method, double user_dmax,
                           double* coef, Py_ssize_t* ranks, double* losses,
                           double* objectives, double* shifts) noexcept nogil:
    cdef Py_ssize_t size = offsets[q + 1] - offsets[q]
    cdef const Py_ssize_t* rows = NULL
    shifts[q] = 0.0
    if size == 0:  # (order[offsets[q]] may lie past the end)
        losses[q] = NAN
        objectives[q] = NAN
        return
    if order_ptr != NULL:
        rows = order_ptr + offsets[q]
    losses[q] = infer_one(c, scores, rel, rows, offsets[q], size, method, user_dmax, coef,
                          ranks, &objectives[q], w.pos, w.neg, w.opt, w.count, w.dtab,
                          w.scratch, w.bid, &w.bk)
    shifts[q] = c.shift


cdef void run_queries(Ctx* ctxs, Work* works, int n_threads, Py_ssize_t n_queries,
                      const Py_ssize_t* offsets, const Py_ssize_t* order_ptr,
                      const double* scores, const unsigned char* rel, int method,
                      double user_dmax, double* coef, Py_ssize_t* ranks, double* losses,
                      double* objectives, double* shifts) noexcept nogil:
    """Every query, on n_threads threads (each with its own Ctx and Work). A query's
    result depends on its own rows only (its xorshift restarts from RNG_SEED), so the
    outputs are the same for any number of threads."""
    cdef Py_ssize_t q
    cdef int t
    if n_threads <= 1:
        for q in range(n_queries):
            one_query(&ctxs[0], &works[0], q, offsets, order_ptr, scores, rel, method,
                      user_dmax, coef, ranks, losses, objectives, shifts)
            if ctxs[0].error:
                break
        return
    for q in prange(n_queries, schedule="dynamic", num_threads=n_threads):
        t = threadid()
        if ctxs[t].error == 0:
            one_query(&ctxs[t], &works[t], q, offsets, order_ptr, scores, rel, method,
                      user_dmax, coef, ranks, losses, objectives, shifts)


cdef char* _ws_mem = NULL
cdef size_t _ws_bytes = 0
_ws_lock = threading.Lock()
WORKSPACE_CAP = 1 << 28  # bytes of work arrays kept between calls (256 MB)
PARALLEL_MIN_ROWS = 1 << 14  # fewer samples in all: one thread


def lai_queries(const double[::1] scores, const unsigned char[::1] relevant,
                const Py_ssize_t[::1] order, const Py_ssize_t[::1] offsets,
                int loss, int method, double[::1] coef, Py_ssize_t[::1] ranks,
                double[::1] losses, double[::1] objectives, double[::1] shifts,
                bint keep_ranks=True, user_steps=None, double user_dmax=0.0,
                int n_threads=1):
    """Loss-augmented inference for every query.

    Query q is rows order[offsets[q]:offsets[q+1]], or rows offsets[q]..offsets[q+1]-1
    in place when order is None (the learners' layout: no index array to read). Fills
    coef and ranks (input order; ranks holds each negative's interleaving rank, 0 for
    positives; with keep_ranks false they are scratch, written only where a method
    needs them), the per-query losses and objectives (NaN for a query without
    positives or negatives), and the per-query shifts subtracted from the scores (see
    infer_one; objectives are of the shifted scores). Raises ValueError when a query's
    scores span more than the largest double.
    For loss = LOSS_USER, ``user_steps(lo, hi, j, P, N)`` returns the float64 array of
    delta_j(i+1) - delta_j(i) for i in lo..hi-1, ``user_dmax`` bounds their size, and
    the returned losses are 0 (objectives hold F only): the caller adds the loss.
    ``n_threads`` > 1 spreads the queries over that many OpenMP threads (a user loss,
    or fewer than PARALLEL_MIN_ROWS samples, run on one); the results do not depend on it.
    Inputs are assumed valid (checked in svmrank.inference).
    """
    global _ws_mem, _ws_bytes
    cdef Py_ssize_t q, n_queries = offsets.shape[0] - 1, largest = 0, m, kb
    cdef size_t need, one
    cdef char* mem
    cdef bint cached
    cdef Ctx* ctxs = NULL
    cdef Work* works = NULL
    cdef int t, n_used, error = 0
    cdef list errors = []
    cdef const Py_ssize_t* order_ptr = NULL
    if loss == LOSS_USER and user_steps is None:
        raise ValueError("loss: a user loss needs its step provider")
    for q in range(n_queries):
        largest = max(largest, offsets[q + 1] - offsets[q])
    m = largest + 2
    # bucket tables of the qs split (qs_buckets), for queries large enough to use them
    kb = (bucket_count(largest) + 2 if method == METHOD_QS and BUCKET_MIN_N <= largest < BUCKET_MAX_N
          else 0)
    # (a user loss calls Python; below PARALLEL_MIN_ROWS samples, waking threads costs
    # more than it saves)
    n_used = (1 if loss == LOSS_USER or offsets[n_queries] - offsets[0] < PARALLEL_MIN_ROWS
              else <int> max(1, min(n_threads, n_queries)))
    one = work_bytes(m, kb)
    need = one * n_used
    # One block for all work arrays, kept between calls (up to WORKSPACE_CAP bytes):
    # fresh pages cost a page fault each, which dominated calls on 1e5 samples.
    cached = _ws_lock.acquire(False)
    if cached and _ws_bytes < need:
        free(_ws_mem)
        _ws_mem = <char*> malloc(need)
        _ws_bytes = need if _ws_mem != NULL else 0
    mem = _ws_mem if cached else <char*> malloc(need)
    ctxs = <Ctx*> malloc(n_used * sizeof(Ctx))
    works = <Work*> malloc(n_used * sizeof(Work))
    if mem == NULL or ctxs == NULL or works == NULL:
        if cached:
            _ws_lock.release()
        elif mem != NULL:
            free(mem)
        free(ctxs)
        free(works)
        raise MemoryError()
    try:
        if order is not None and order.shape[0]:
            order_ptr = &order[0]
        for t in range(n_used):
            ctxs[t].loss = loss
            ctxs[t].user = <void*> user_steps
            ctxs[t].errors = <void*> errors
            ctxs[t].error = 0
            ctxs[t].keep_ranks = keep_ranks
            ctxs[t].shift = 0.0
            carve(mem + t * one, m, kb, &ctxs[t], &works[t])
        with nogil:
            run_queries(ctxs, works, n_used, n_queries, &offsets[0], order_ptr,
                        &scores[0] if scores.shape[0] else NULL,
                        &relevant[0] if relevant.shape[0] else NULL, method, user_dmax,
                        &coef[0] if coef.shape[0] else NULL,
                        &ranks[0] if ranks.shape[0] else NULL,
                        &losses[0] if n_queries else NULL,
                        &objectives[0] if n_queries else NULL,
                        &shifts[0] if n_queries else NULL)
        for t in range(n_used):
            if ctxs[t].error:
                error = ctxs[t].error
    finally:
        free(ctxs)
        free(works)
        if cached:
            if _ws_bytes > WORKSPACE_CAP:
                free(_ws_mem)
                _ws_mem = NULL
                _ws_bytes = 0
            _ws_lock.release()
        else:
            free(mem)
    if error == ERR_SPAN:
        raise ValueError("scores: a query's scores span more than the largest double "
                         "(their differences overflow): scale them down")
    if error:
        raise errors[0]
