# Top-k simplex / cone / box / knapsack projections (Lapin et al. 2015, §4-5).
#
# nogil C-level kernels for the other kernels: _topk_fast.pyx (the Python wrappers) and
# _sdca_fast.pyx cimport them, as declared in svmrank/_projection_fast.pxd (which also
# declares the internals that the test module _testing_fast.pyx reaches). Every public
# routine works IN PLACE on x (length m, holding the point a to project on entry) and
# needs a scratch array `work` of at least 3*m doubles; it returns 0 on success. No
# validation here: callers guarantee 1 <= k <= m, r > 0, rho >= 0, lo <= hi and
# m*lo <= r <= m*hi for the knapsack.
#
# All solutions have the threshold form x = clip(a - t, 0, u) (Lemma 3), so every
# routine computes the two thresholds (t, u) and then writes x in one pass.
#
# Algorithms
# - knapsack (clip_root): Kiwiel's (2008) variable fixing, no sort. Vectors of
#   128 values or more where few values are off their lower bound first try
#   filter_root: a strided sample guesses a lower bound of the root, one
#   branch-free pass keeps only the values above it, and an exact check proves the
#   bound; the root on the kept values comes from counting buckets of width
#   (hi - lo)/q (bucket_root: F is exact at the bucket grid, so one scan brackets
#   the root and only two buckets' values are solved on), or from variable fixing
#   when few values were kept or the buckets decline. Otherwise (or if the check
#   fails) long vectors get a root bracket from a sample, verified exactly, so one
#   pass leaves only the values near the thresholds for variable fixing (expected
#   linear time); after max_fix_iters() rounds fixing falls back to a sort of the
#   remaining free values, so the worst case is O(m log m).
# - box (beta loss, §5, eq. 10): x = clip(a - t, 0, r/k) with t = max(t_knap, t_bias),
#   both roots of monotone piecewise-linear equations in t, found the same way.
# - top-k simplex (Lemma 5): the knapsack with sum r first; if Lemma 5's multiplier is
#   negative, the solution path of the knapsack "sum = s, 0 <= x <= s/k" as s grows
#   visits the (|U|, |M|) partitions of the sorted vector monotonically (see
#   cone_walk), so one walk finds the optimal partition in O(m) after ordering;
#   only values above the knapsack threshold enter, and they are ordered lazily
#   (bucketed, sorted only where the walk cannot absorb a bucket whole).
# - top-k cone: the simplex algorithm with a budget proven not to bind.
from libc.math cimport INFINITY, NAN, fabs, sqrt

# ---------------------------------------------------------------- sorting helpers
# Descending order throughout. Introsort: quicksort with median-of-3
# and a heapsort fallback at depth 2 log2(n), so the worst case stays O(n log n).

cdef inline int depth_limit(Py_ssize_t n) noexcept nogil:
    cdef int d = 0
    while n > 1:
        n >>= 1
        d += 1
    return 2 * d + 2


cdef inline void insertion_desc(double* v, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i, j
    cdef double x
    for i in range(1, n):
        x = v[i]
        j = i
        while j > 0 and v[j - 1] < x:
            v[j] = v[j - 1]
            j -= 1
        v[j] = x


cdef inline void sift_down_min(double* v, Py_ssize_t root, Py_ssize_t n) noexcept nogil:
    # min-heap on v[0:n]; repeatedly moving the minimum to the end sorts descending
    cdef Py_ssize_t child
    cdef double x = v[root]
    while True:
        child = 2 * root + 1
        if child >= n:
            break
        if child + 1 < n and v[child + 1] < v[child]:
            child += 1
        if v[child] < x:
            v[root] = v[child]
            root = child
        else:
            break
    v[root] = x


cdef void heapsort_desc(double* v, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef double x
    if n < 2:
        return
    i = n // 2
    while i > 0:
        i -= 1
        sift_down_min(v, i, n)
    i = n - 1
    while i > 0:
        x = v[0]
        v[0] = v[i]
        v[i] = x
        sift_down_min(v, 0, i)
        i -= 1


cdef inline Py_ssize_t partition_desc(double* v, Py_ssize_t n) noexcept nogil:
    # Hoare partition around the median of v[0], v[n/2], v[n-1] (moved to v[0]).
    # Returns j in [0, n-2]: every v[0..j] >= every v[j+1..n-1].
    cdef Py_ssize_t mid = n >> 1, i, j
    cdef double a0 = v[0], am = v[mid], al = v[n - 1], p, tmp
    if (am >= a0) == (a0 >= al):
        p = a0
    elif (a0 >= am) == (am >= al):
        p = am
        v[mid] = a0
        v[0] = am
    else:
        p = al
        v[n - 1] = a0
        v[0] = al
    i = -1
    j = n
    while True:
        i += 1
        while v[i] > p:
            i += 1
        j -= 1
        while v[j] < p:
            j -= 1
        if i >= j:
            return j
        tmp = v[i]
        v[i] = v[j]
        v[j] = tmp


cdef void introsort_desc(double* v, Py_ssize_t n, int depth) noexcept nogil:
    cdef Py_ssize_t j
    while n > 24:
        if depth == 0:
            heapsort_desc(v, n)
            return
        depth -= 1
        j = partition_desc(v, n) + 1
        if j < n - j:
            introsort_desc(v, j, depth)
            v += j
            n -= j
        else:
            introsort_desc(v + j, n - j, depth)
            n = j
    insertion_desc(v, n)


cdef inline void sort_desc(double* v, Py_ssize_t n) noexcept nogil:
    introsort_desc(v, n, depth_limit(n))


# ------------------------------------------------- monotone root of clip sums
# Solve  F(t) = sum_i clip(w_i - t, lo, hi) - r - alpha*t = 0   (alpha >= 0).
# F is non-increasing in t; for alpha = 0 the root can be an interval, and we return
# its LARGEST point (Lemma 5's multiplier lambda and the box test t >= rho*r are
# non-decreasing in t, so the largest root is the one that certifies the sum
# constraint when it can be certified).

cdef double sorted_root(double* w, Py_ssize_t n, double lo, double hi, double r,
                        double alpha) noexcept nogil:
    # O(n log n) reference: sort, then walk the merged breakpoints w_i - lo (element
    # i leaves its lower bound) and w_i - hi (it reaches the upper bound) downwards.
    cdef Py_ssize_t nh = 0, nf = 0  # w[0:nh] at hi, w[nh:nf] free, w[nf:n] at lo
    cdef double sfree = 0.0, tcur = INFINITY, tb, c0, c1, t
    sort_desc(w, n)
    while True:
        if nf < n and (nh >= nf or w[nf] - lo >= w[nh] - hi):
            tb = w[nf] - lo
        elif nh < nf:
            tb = w[nh] - hi
        else:
            tb = -INFINITY
        # on [tb, tcur]: F(t) = c0 - c1*t
        c0 = nh * hi + sfree + (n - nf) * lo - r
        c1 = (nf - nh) + alpha
        if tb == -INFINITY:
            if c1 > 0.0:
                t = c0 / c1
                return t if t < tcur else tcur
            return tcur
        if c0 - c1 * tb >= 0.0:
            if c1 > 0.0:
                t = c0 / c1
                if t > tcur:
                    t = tcur
                if t < tb:
                    t = tb
                return t
            return tcur
        tcur = tb
        if nf < n and (nh >= nf or w[nf] - lo >= w[nh] - hi):
            sfree += w[nf]
            nf += 1
        else:
            sfree -= w[nh]
            nh += 1


cdef inline Py_ssize_t max_fix_iters(Py_ssize_t n) noexcept nogil:
    return 16 + depth_limit(n)


cdef inline double sum4(const double* w, Py_ssize_t n) noexcept nogil:
    # four partial sums: without -ffast-math a single accumulator is latency-bound
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t i = 0
    while i + 4 <= n:
        s0 += w[i]
        s1 += w[i + 1]
        s2 += w[i + 2]
        s3 += w[i + 3]
        i += 4
    while i < n:
        s0 += w[i]
        i += 1
    return (s0 + s1) + (s2 + s3)


cdef inline double viol(double x, double lo) noexcept nogil:
    # (lo - x)_+, written as "d > 0 ? d : 0" so that it compiles to maxsd, not a branch
    cdef double d = lo - x
    return d if d > 0.0 else 0.0


cdef inline double fix_root(double* w, Py_ssize_t n, double lo, double hi, double r,
                            double alpha, Py_ssize_t maxit) noexcept nogil:
    return fix_root_sum(w, n, lo, hi, r, alpha, maxit, sum4(w, n))


cdef double fix_root_sum(double* w, Py_ssize_t n, double lo, double hi, double r,
                         double alpha, Py_ssize_t maxit, double sw) noexcept nogil:
    # sw = sum(w[0:n]) on entry
    # Kiwiel (2008) variable fixing on the free values w[0:nf] (overwritten).
    # Guess t from "all free variables strictly inside their bounds"; the total
    # violation of the lower bounds (dlo) against the upper bounds (dhi) says on which
    # side of the guess the root lies, and every variable violating the bound on that
    # side is at that bound at the root too, so it is fixed and removed. Loops are
    # branch-free (selects; the branches would be unpredictable) and unrolled with
    # independent accumulators.
    cdef Py_ssize_t nf = n, i, j, it = 0
    cdef double fixed = 0.0, t = 0.0, dlo, dhi, thr, v, v1, s0, s1, e0, e1
    cdef double d0, d1, d2, d3, h0, h1, h2, h3, x0, x1, x2, x3, nlo, nhi
    cdef double tlo = -INFINITY, thi = INFINITY  # root bracket from fixed variables
    cdef double k0, k1, c0, c1
    while nf > 0:
        if it >= maxit:
            t = sorted_root(w, nf, lo, hi, r - fixed, alpha)
            return clamp(t, tlo, thi)
        it += 1
        t = (sw + fixed - r) / (nf + alpha)
        # total violations: dlo = sum (lo - x)_+, dhi = sum (x - hi)_+, x = w - t
        nlo = t + lo
        nhi = -(t + hi)
        d0 = d1 = d2 = d3 = h0 = h1 = h2 = h3 = 0.0
        i = 0
        while i + 4 <= nf:
            x0 = w[i]
            x1 = w[i + 1]
            x2 = w[i + 2]
            x3 = w[i + 3]
            d0 += viol(x0, nlo)
            d1 += viol(x1, nlo)
            d2 += viol(x2, nlo)
            d3 += viol(x3, nlo)
            h0 += viol(-x0, nhi)
            h1 += viol(-x1, nhi)
            h2 += viol(-x2, nhi)
            h3 += viol(-x3, nhi)
            i += 4
        while i < nf:
            d0 += viol(w[i], nlo)
            h0 += viol(-w[i], nhi)
            i += 1
        dlo = (d0 + d1) + (d2 + d3)
        dhi = (h0 + h1) + (h2 + h3)
        if dlo > dhi:
            # root > t: values with w_i - t <= lo sit at lo at the root
            thr = t + lo
            j = 0
            s0 = s1 = 0.0
            e0 = e1 = -INFINITY
            i = 0
            while i + 2 <= nf:
                v = w[i]
                v1 = w[i + 1]
                k0 = v > thr
                k1 = v1 > thr
                w[j] = v
                j += <Py_ssize_t> k0
                w[j] = v1
                j += <Py_ssize_t> k1
                s0 += v * k0
                s1 += v1 * k1
                # largest removed value (FP-compare selects compile to masks)
                c0 = v if v <= thr else -INFINITY
                c1 = v1 if v1 <= thr else -INFINITY
                e0 = c0 if c0 > e0 else e0
                e1 = c1 if c1 > e1 else e1
                i += 2
            if i < nf:
                v = w[i]
                k0 = v > thr
                w[j] = v
                j += <Py_ssize_t> k0
                s0 += v * k0
                c0 = v if v <= thr else -INFINITY
                e0 = c0 if c0 > e0 else e0
            fixed += (nf - j) * lo
            e0 = e0 if e0 >= e1 else e1
            if e0 - lo > tlo:
                tlo = e0 - lo
        elif dhi > dlo:
            # root < t: values with w_i - t >= hi sit at hi at the root
            thr = t + hi
            j = 0
            s0 = s1 = 0.0
            e0 = e1 = INFINITY
            i = 0
            while i + 2 <= nf:
                v = w[i]
                v1 = w[i + 1]
                k0 = v < thr
                k1 = v1 < thr
                w[j] = v
                j += <Py_ssize_t> k0
                w[j] = v1
                j += <Py_ssize_t> k1
                s0 += v * k0
                s1 += v1 * k1
                c0 = v if v >= thr else INFINITY
                c1 = v1 if v1 >= thr else INFINITY
                e0 = c0 if c0 < e0 else e0
                e1 = c1 if c1 < e1 else e1
                i += 2
            if i < nf:
                v = w[i]
                k0 = v < thr
                w[j] = v
                j += <Py_ssize_t> k0
                s0 += v * k0
                c0 = v if v >= thr else INFINITY
                e0 = c0 if c0 < e0 else e0
            fixed += (nf - j) * hi
            e0 = e0 if e0 <= e1 else e1
            if e0 - hi < thi:
                thi = e0 - hi
        else:
            return t
        nf = j
        sw = s0 + s1
    # every variable fixed: the root set is [tlo, thi] (alpha = 0) or one point; all at
    # lo (thi infinite) happens only through rounding, with the root inside a cluster of
    # tied values far larger than the box (the caller then re-solves on a - t)
    if alpha > 0.0:
        return clamp((fixed - r) / alpha, tlo, thi)
    return thi if thi < INFINITY else tlo


cdef inline double clamp(double t, double lo, double hi) noexcept nogil:
    if t < lo:
        t = lo
    if t > hi:
        t = hi
    return t


cdef inline double excess(const double* a, Py_ssize_t n, double thr) noexcept nogil:
    # sum_i (a_i - thr)_+
    cdef double p0 = 0.0, p1 = 0.0, q0, q1
    cdef Py_ssize_t i = 0
    while i + 2 <= n:
        q0 = a[i] - thr
        q1 = a[i + 1] - thr
        p0 += q0 if q0 > 0.0 else 0.0
        p1 += q1 if q1 > 0.0 else 0.0
        i += 2
    if i < n:
        q0 = a[i] - thr
        p0 += q0 if q0 > 0.0 else 0.0
    return p0 + p1


cdef inline double max2(double x, double y) noexcept nogil:
    return x if x > y else y


cdef enum:
    FILTER_MIN_N = 128   # vectors at least this long try filter_root first
    KEPT_BUCKETS = 128   # buckets of the kept-set root (bucket_root)
    BUCKET_MIN_N = 48    # kept sets at least this long go through the buckets


cdef int bucket_root(const double* v, Py_ssize_t nv, Py_ssize_t n, double tl,
                     double vmax, double lo, double hi, double r, Py_ssize_t maxit,
                     double* cw, double* t_out, double* p_out) noexcept nogil:
    # Largest root t* of F(t) = sum_i clip(a_i - t, lo, hi) - r (hi > lo) over n values
    # of which the n - nv dropped ones are <= tl + lo (at lo for every t >= tl) and
    # v[0:nv] are the kept ones (> tl + lo), vmax >= max(v). Returns 1 if F(tl) < 0
    # (t* < tl: the caller's guess failed), 2 if the root is beyond the buckets' reach
    # (the caller solves otherwise), 0 with t* in t_out and, if p_out is not NULL,
    # p = sum_i (a_i - t* - hi)_+ in p_out. cw: scratch of n doubles (nv <= n).
    #
    # One counting pass puts y = v - (tl + lo) > 0 into KEPT_BUCKETS buckets of width
    # h = (hi - lo)/q (the last one also takes every larger value), with counts, sums
    # and a linked list per bucket. At the grid points t_i = tl + i*h both
    # breakpoints t_i + lo and t_i + hi fall on bucket edges: buckets below i are at
    # lo, buckets i .. i+q-1 are linear (clip(v - t_i) = v - t_i), the others at hi,
    # so F(t_i) follows from the buckets (exactly while the last bucket is above
    # i + q - 1). A scan with a sliding window finds the largest i with F(t_i) >= 0;
    # on [t_i, t_i+1] only buckets i (leaving lo) and i + q (reaching hi) change
    # state: their values are gathered from the lists and variable fixing solves on
    # them, the buckets in between entering as a linear term. q is the largest for
    # which the grid still covers every t < vmax - lo (the root is then always in
    # reach); when even q = 1 does not, the grid covers
    # [tl, tl + (KEPT_BUCKETS - 2)(hi - lo)] and 2 may be returned. Sums are of y, not
    # v: a large common shift costs nothing.
    # nb = max(KEPT_BUCKETS, nv/2) buckets (the root sits about (nv - r/(hi-lo))/density
    # buckets above tl), within the scratch: nb sums, then nb counts, nb list heads
    # and nv list links as ints.
    cdef Py_ssize_t nb = nv // 2
    cdef double* bs = cw
    cdef int* bc
    cdef int* head
    cdef int* nxt
    cdef Py_ssize_t i, j, q, imax, nc = 0, nhi, jc, jb, wl, wc, ch
    cdef int e, l
    cdef double d = hi - lo, o = tl + lo, y, h, invh, span, rr, f, ws, ws2, s, shi
    cdef double zlin, sz = 0.0, top
    cdef double cand[KEPT_BUCKETS]
    if nb < KEPT_BUCKETS:
        nb = KEPT_BUCKETS
    if nb > (n - nv // 2) // 2 - 2:
        nb = (n - nv // 2) // 2 - 2
    if nb < 16 or nv > 0x7fffffff:
        return 2
    bc = <int*> (cw + nb)
    head = bc + nb
    nxt = head + nb
    top = <double> (nb - 1)
    span = (vmax - o) / d  # t* < vmax - lo = tl + span*d
    if span + 1.0 < 0.5 * top:
        q = <Py_ssize_t> (top / (span + 1.0))  # then q*(span + 1) <= nb - 1
    else:
        q = 1
    h = d / q
    invh = q / d
    # 0 < y*invh <= span*q (up to rounding): converted to an integer only when that
    # is safely in range, then clamped as an integer (a select, not a branch); a
    # subnormal width d makes invh infinite, and casting inf to an integer is undefined
    if not (h > 0.0 and invh < 1e300 and span * q < 1e9):
        return 2
    for j in range(nb):
        bc[j] = 0
        bs[j] = 0.0
    for i in range(nv):
        y = v[i] - o
        j = <Py_ssize_t> (y * invh)
        j = j if j < nb - 1 else nb - 1
        bc[j] += 1
        bs[j] += y
        nxt[i] = head[j]  # (garbage when bucket j was empty: lists are read by count)
        head[j] = <int> i
    # F(t_0) = F(tl): window [0, q) linear, the rest at hi; lo is folded into rr
    rr = r - n * lo
    wc = 0
    ws = 0.0
    for j in range(q):
        wc += bc[j]
        ws += bs[j]
    ch = nv - wc
    f = ws + ch * d - rr
    if not f >= 0.0:
        return 1
    imax = nb - 1 - q  # F(t_i) is exact for i <= imax
    i = 0
    while True:
        if i >= imax:
            return 2
        ws2 = ws + (bs[i + q] - bs[i])
        f = (ws2 - (<double> ((wc + bc[i + q] - bc[i]) * (i + 1))) * h
             + (ch - bc[i + q]) * d - rr)
        if not f >= 0.0:
            break
        wc += bc[i + q] - bc[i]
        ch -= bc[i + q]
        ws = ws2
        i += 1
    # t* in [t_i, t_i+1): buckets below i at lo, i+1 .. i+q-1 linear, above i+q at hi;
    # gather buckets i and i + q as z = v - tl (too many, as with heavy ties: decline)
    jc = i + q
    if bc[i] + bc[jc] > KEPT_BUCKETS:
        return 2
    wl = wc - bc[i]
    nhi = ch - bc[jc]
    zlin = (ws - bs[i]) + wl * lo
    for e in range(2):
        jb = i if e == 0 else jc
        j = head[jb]
        for l in range(bc[jb]):
            y = (v[j] - o) + lo
            cand[nc] = y
            sz += y
            nc += 1
            j = nxt[j]
    s = fix_root_sum(cand, nc, lo, hi, r - nhi * hi - (n - nc - wl - nhi) * lo - zlin,
                     <double> wl, maxit, sz)
    s = clamp(s, i * h, (i + 1) * h)
    t_out[0] = tl + s
    if p_out != NULL:
        # sum (a_i - t - hi)_+: y - s - d over the buckets above i + q, and the
        # gathered values (read again from the lists: the solve overwrote cand)
        shi = 0.0
        for j in range(jc + 1, nb):
            shi += bs[j]
        shi -= nhi * (s + d)
        j = head[jc]
        for l in range(bc[jc]):
            y = (v[j] - o) - s - d
            shi += y if y > 0.0 else 0.0
            j = nxt[j]
        p_out[0] = shi
    return 0


cdef inline double min2(double x, double y) noexcept nogil:
    return x if x < y else y


cdef double filter_root(const double* a, Py_ssize_t n, double lo, double hi, double r,
                        double* w, Py_ssize_t* idx, Py_ssize_t* nv_out,
                        double* p_out) noexcept nogil:
    # Largest root t* of sum_i clip(a_i - t, lo, hi) = r (alpha = 0, hi > lo), for
    # inputs where few values are off their lower bound; NAN when the guess below
    # fails (the caller falls back). w: scratch of 2n doubles. A strided sample's root
    # with an inflated budget guesses tl <= t*; ONE branch-free pass keeps the values
    # above tl + lo in w[0:nv] (and their indices in idx[0:nv] if idx is not NULL): the
    # others sit at lo for every t >= tl. F(tl) >= 0, checked exactly on the kept
    # values, proves t* >= tl, and the root is then solved on the kept values alone:
    # by bucket_root when there are many, else by variable fixing on a copy.
    cdef Py_ssize_t i, j, nv = 0, ns, step
    cdef Py_ssize_t maxit = max_fix_iters(n)
    cdef double f, c, rs, tl, thr, v, v1, flo, t, vmax
    # ~sqrt(n) samples when at most ~sqrt(n)/2 values need to be off lo, twice as
    # many otherwise (tuned by measurement at n = 1e3: the sample solve against the
    # size of the kept set)
    c = (r - n * lo) / (hi - lo)
    step = isqrt(n)
    if 2 * c > step:
        step //= 2
    ns = (n + step - 1) // step
    f = (<double> ns) / n
    # the sample's share of the budget plus ~2 standard deviations of the sampled
    # sum: about c sample values are off lo, each contributing at most hi - lo
    # (tuned: the guess failed in ~0.3% of random normal, Cauchy, exponential inputs)
    c = f * c + 1.0
    rs = f * r + (hi - lo) * (2.0 * sqrt_pos(c) + 1.0)
    if not rs < ns * hi:
        return NAN
    for i in range(ns):
        w[i] = a[i * step]
    tl = fix_root(w, ns, lo, hi, rs, 0.0, maxit)
    thr = tl + lo
    # if the sample says more than half of the values would be kept, the filter does
    # not pay (the caller's sampled bracket aggregates the free values instead)
    nv = 0
    for i in range(ns):
        nv += <Py_ssize_t> (a[i * step] > thr)
    if 2 * nv > ns:
        return NAN
    # blocks of 8 whose maximum is at most thr (most of them) are skipped whole
    # (vmax: the largest kept value, from the block maxima)
    nv = 0
    i = 0
    vmax = -INFINITY
    while i < n:
        j = i + 8 if i + 8 <= n else n
        if j - i == 8:
            v = max2(max2(a[i], a[i + 1]), max2(a[i + 2], a[i + 3]))
            v1 = max2(max2(a[i + 4], a[i + 5]), max2(a[i + 6], a[i + 7]))
            v = max2(v, v1)
            if not v > thr:
                i = j
                continue
        else:
            v = a[i]
            for ns in range(i + 1, j):
                v = max2(v, a[ns])
        vmax = max2(vmax, v)
        if idx != NULL:
            while i < j:
                v = a[i]
                w[nv] = v
                idx[nv] = i
                nv += <Py_ssize_t> (v > thr)
                i += 1
        else:
            while i < j:
                v = a[i]
                w[nv] = v
                nv += <Py_ssize_t> (v > thr)
                i += 1
    if nv >= BUCKET_MIN_N:
        j = bucket_root(w, nv, n, tl, vmax, lo, hi, r, maxit, w + n, &t, p_out)
        if j == 0:
            nv_out[0] = nv
            return t
        if j == 1:
            return NAN
    # check F(tl) >= 0; copy the kept values for the solve (which overwrites them)
    flo = (n - nv) * lo - r
    c = 0.0
    for i in range(nv):
        v = w[i]
        flo += clamp(v - tl, lo, hi)
        c += v
        w[n + i] = v
    if not flo >= 0.0:
        return NAN
    t = fix_root_sum(w + n, nv, lo, hi, r - (n - nv) * lo, 0.0, maxit, c)
    if t < tl:
        t = tl
    if p_out != NULL:
        p_out[0] = excess(w, nv, t + hi)
    nv_out[0] = nv
    return t


cdef double clip_root(const double* a, Py_ssize_t n, double lo, double hi, double r,
                      double alpha, double* w, double* p_out) noexcept nogil:
    # Largest root of sum_i clip(a_i - t, lo, hi) = r + alpha*t; w: scratch of 2n.
    # If p_out is not NULL it receives p = sum_i (a_i - t - hi)_+ (Lemma 5's p).
    # For long vectors, bracket the root first from a strided sample of ~4 sqrt(n)
    # values (the sample equation with budget r*ns/n, widened by 3 sampling standard
    # deviations plus twice the spread of the sample's clipped values), then ONE pass
    # classifies every a_i as surely at lo, surely at hi, surely free (all three only
    # aggregated), or a candidate near a breakpoint. The bracket is verified exactly
    # (F(t_lo) >= 0 >= F(t_hi)); the root is then found on the candidates (the
    # surely-free block entering as a linear term: it adds to alpha and to r). A
    # failed bracket is widened once; a second failure falls back to plain fixing.
    cdef Py_ssize_t i, ns, step, nc = 0, nlo = 0, nhi = 0, nfree = 0
    cdef int attempt
    cdef double frac, rs, als, ts, mean, var, v, delta, tl, th, sfree = 0.0, cmax, cmin
    cdef double cl_lo, ch_lo, cl_hi, ch_hi, flo, fhi, t, shi = 0.0
    cdef Py_ssize_t maxit = max_fix_iters(n)
    if alpha == 0.0 and hi > lo and n >= FILTER_MIN_N:
        t = filter_root(a, n, lo, hi, r, w, NULL, &nc, p_out)
        if t == t:
            return t
    if n < 512:
        for i in range(n):
            w[i] = a[i]
        t = fix_root(w, n, lo, hi, r, alpha, maxit)
        if p_out != NULL:
            p_out[0] = excess(a, n, t + hi)
        return t
    step = <Py_ssize_t> isqrt(n) // 4
    ns = n // step
    frac = (<double> ns) / n
    rs = r * frac
    als = alpha * frac
    for i in range(ns):
        w[i] = a[i * step]
    ts = fix_root(w, ns, lo, hi, rs, als, maxit)
    mean = 0.0
    var = 0.0
    cmax = lo
    cmin = hi
    for i in range(ns):
        v = clamp(a[i * step] - ts, lo, hi)
        mean += v
        var += v * v
        cmax = v if v > cmax else cmax
        cmin = v if v < cmin else cmin
    mean /= ns
    var = var / ns - mean * mean
    delta = 3.0 * sqrt_pos(var * ns) + 2.0 * (cmax - cmin)
    for attempt in range(2):
        if attempt == 1:
            # the sample missed the tail (or was unlucky): widen once, by a lot
            delta = 8.0 * delta + 2.0 * (hi - lo)
        # F_sample(t) - rs - als t is decreasing: a larger budget gives a smaller root
        if alpha == 0.0 and rs + delta >= ns * hi:
            tl = -INFINITY
        else:
            for i in range(ns):
                w[i] = a[i * step]
            tl = fix_root(w, ns, lo, hi, rs + delta, als, maxit)
        if alpha == 0.0 and rs - delta <= ns * lo:
            th = INFINITY
        else:
            for i in range(ns):
                w[i] = a[i * step]
            th = fix_root(w, ns, lo, hi, rs - delta, als, maxit)
        if not tl < th:
            tl = -INFINITY
            th = INFINITY
        if tl == -INFINITY and th == INFINITY:
            break
        cl_lo = tl + lo
        ch_lo = th + lo
        cl_hi = tl + hi
        ch_hi = th + hi
        nc = nlo = nhi = nfree = 0
        sfree = shi = 0.0
        # branches, not selects: most values fall in one class (at lo, or free),
        # which the predictor learns; a branch-free version measured slower
        for i in range(n):
            v = a[i]
            if v <= cl_lo:
                nlo += 1
            elif v >= ch_hi:
                nhi += 1
                shi += v
            elif ch_lo <= v and v <= cl_hi:
                nfree += 1
                sfree += v
            else:
                w[nc] = v
                nc += 1
        # exact check of the bracket
        flo = nlo * lo + nhi * hi - r
        fhi = flo
        if tl > -INFINITY:
            flo += sfree - nfree * tl - alpha * tl
            for i in range(nc):
                flo += clamp(w[i] - tl, lo, hi)
        if th < INFINITY:
            fhi += sfree - nfree * th - alpha * th
            for i in range(nc):
                fhi += clamp(w[i] - th, lo, hi)
        if (tl == -INFINITY or flo >= 0.0) and (th == INFINITY or fhi <= 0.0):
            # same equation on the candidates; many left: bracket again (recursion on
            # at most half the values), else variable fixing on a copy (w[0:nc] kept)
            if nc >= 512 and 2 * nc <= n:
                t = clip_root(w, nc, lo, hi, r - nlo * lo - nhi * hi - sfree,
                              alpha + nfree, w + n, NULL)
            else:
                for i in range(nc):
                    w[n + i] = w[i]
                t = fix_root(w + n, nc, lo, hi, r - nlo * lo - nhi * hi - sfree,
                             alpha + nfree, maxit)
            t = clamp(t, tl, th)
            if p_out != NULL:
                # values surely at hi exceed t + hi; surely free / at lo do not
                p_out[0] = shi - nhi * (t + hi) + excess(w, nc, t + hi)
            return t
    for i in range(n):
        w[i] = a[i]
    t = fix_root(w, n, lo, hi, r, alpha, maxit)
    if p_out != NULL:
        p_out[0] = excess(a, n, t + hi)
    return t


cdef inline double sqrt_pos(double v) noexcept nogil:
    return sqrt(v) if v > 0.0 else 0.0


cdef inline Py_ssize_t isqrt(Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t x = <Py_ssize_t> sqrt_pos(<double> n)
    while x * x > n:
        x -= 1
    while (x + 1) * (x + 1) <= n:
        x += 1
    return x


cdef inline void write_clip(const double* a, double* x, Py_ssize_t m, double t,
                            double lo, double hi) noexcept nogil:
    # x = clip(a - t, lo, hi); x may be a
    cdef Py_ssize_t i
    cdef double v
    for i in range(m):
        v = a[i] - t
        v = v if v > lo else lo
        x[i] = v if v < hi else hi


# ---------------------------------------------------------- top-k cone path walk
# Fix s = <1,x> = k*u. The best x with that sum is the knapsack solution
# x(u) = clip(a - t(u), 0, u) with sum_i x_i(u) = k*u, and the problem becomes the
# 1-d convex minimisation of g(u) = ||a - x(u)||^2/2 + rho*k^2*u^2/2 (Lemma 3's
# problem restricted to the ray; Lemma 5 adds u <= r/k).
#
# Monotonicity (why a single walk suffices). With U = {a_i >= t+u}, M = {t < a_i <
# t+u}, a fixed partition gives  t(u) = (S_M - (k-|U|) u) / |M|, hence
#   dt/du = -(k-|U|)/|M| < 0   and   d(t+u)/du = (|U|+|M|-k)/|M| > 0
# because 0 <= |U| < k < |U|+|M| (Lemma 3, case 3). So as u grows the lower threshold
# t only falls and the upper threshold t+u only rises: on the sorted vector b, |U|
# never grows and |U|+|M| never shrinks. The path starts at u = 0+ with U = top k,
# M empty (Lemma 3 case 2) and crosses at most m partitions. On each piece g is
# quadratic with
#   g'(u) = A u - B,  A = rho k^2 + |U| + (k-|U|)^2/|M|,  B = S_U + (k-|U|) S_M/|M|
# (A = rho k^2 + k, B = S_k when M is empty), and g' is non-decreasing along the path
# (g is convex: partial minimisation of a convex problem over a convex cone). So we
# walk the pieces in order and stop in the first one containing the root u* = B/A
# (Lemma 3, eq. 7 gives the same u); each piece ends at the first event: t(u) reaches
# the next element b[nm] (it joins M) or t(u)+u reaches b[nu-1] (it leaves U).
# x = 0 exactly when S_k = sum of the k largest <= 0 (Lemma 4; the condition is also
# necessary for rho > 0, since the bias term has zero gradient at 0).

# Lazily sorted stream. The walk reads the values in descending order, but usually
# only the top of the vector, or long runs it can absorb wholesale. Values are
# assigned to ~n/4 buckets of equal value width (no comparisons); one counting pass
# records each bucket's size, sum and minimum. The walk absorbs whole buckets from
# those aggregates; only buckets it must step through are materialised (copied out
# of the source in a filtered pass; the second pass scatters everything left) and
# sorted (introsort) when first reached. Skewed data only makes buckets larger, so
# the worst case stays O(n log n).

# (struct Stream: declared in svmrank/_projection_fast.pxd)


cdef inline Py_ssize_t bucket_of(const Stream* st, double x) noexcept nogil:
    cdef Py_ssize_t j = <Py_ssize_t> ((st.vmax - x) * st.scale)
    return j if j < st.nb else st.nb - 1


cdef void stream_build(Stream* st, const double* src, Py_ssize_t n, double vmax,
                       double vmin, double* v, Py_ssize_t* cnt) noexcept nogil:
    # v: n doubles; cnt: room for 3 * (n // 4) + 2 doubles (it also holds the per-bucket
    # sums and minima); cnt may overlap src only if n < 64. vmin <= all values <= vmax.
    cdef Py_ssize_t i, j, nb = n // 4
    cdef double scale = 0.0, x
    st.src = src
    st.v = v
    st.off = cnt
    st.n = n
    st.ns = 0
    st.nextb = 0
    st.passes = 0
    st.width = 1
    if vmax - vmin > 0.0:
        scale = nb / (vmax - vmin)
    if n < 64 or not (scale > 0.0 and scale < INFINITY):
        for i in range(n):
            v[i] = src[i]
        st.nb = 1
        st.matb = 1
        st.bsum = NULL
        st.bmin = NULL
        cnt[0] = 0
        cnt[1] = n
        return
    st.nb = nb
    st.matb = 0
    st.vmax = vmax
    st.scale = scale
    st.bsum = (<double*> cnt) + nb + 1
    st.bmin = st.bsum + nb
    for j in range(nb + 1):
        cnt[j] = 0
    for j in range(nb):
        st.bsum[j] = 0.0
        st.bmin[j] = INFINITY
    for i in range(n):
        x = src[i]
        j = bucket_of(st, x)
        cnt[j + 1] += 1
        st.bsum[j] += x
        st.bmin[j] = x if x < st.bmin[j] else st.bmin[j]
    for j in range(nb):
        cnt[j + 1] += cnt[j]


cdef void stream_materialise(Stream* st, Py_ssize_t jneed) noexcept nogil:
    # copy buckets [matb, j1) out of the source, j1 > jneed
    cdef Py_ssize_t i, j, j0 = st.matb, j1, save
    cdef Py_ssize_t* cnt = st.off
    cdef double x
    if st.passes >= 1:
        j1 = st.nb
    else:
        j1 = j0 + st.width
        if j1 <= jneed:
            j1 = jneed + 1
        if j1 > st.nb:
            j1 = st.nb
        st.width = 2 * (j1 - j0)
    st.passes += 1
    save = cnt[j0]
    for i in range(st.n):
        x = st.src[i]
        j = bucket_of(st, x)
        if j >= j0 and j < j1:
            st.v[cnt[j]] = x
            cnt[j] += 1
    # the cursors now hold each bucket's end = next bucket's start: shift back
    j = j1 - 1
    while j > j0:
        cnt[j] = cnt[j - 1]
        j -= 1
    cnt[j0] = save
    st.matb = j1


cdef inline void stream_need(Stream* st, Py_ssize_t need) noexcept nogil:
    # make v[0:need] sorted (need <= n)
    cdef Py_ssize_t j, jneed
    while st.ns < need:
        j = st.nextb
        if j >= st.matb:
            st.matb = j  # buckets before j were absorbed whole: skip them
            jneed = j
            while st.off[jneed + 1] < need and jneed + 1 < st.nb:
                jneed += 1
            stream_materialise(st, jneed)
        sort_desc(st.v + st.off[j], st.off[j + 1] - st.off[j])
        st.ns = st.off[j + 1]
        st.nextb = j + 1


cdef void cone_walk(Stream* st, Py_ssize_t k, double rho, double umax,
                    double floor, double* t_out, double* u_out) noexcept nogil:
    # Thresholds (t, u) of the biased projection onto the top-k cone intersected
    # with u <= umax (umax = r/k for Delta_k(r), INFINITY for the cone). The stream
    # holds every value above `floor`, a value known to be <= t* (all values <= floor
    # are in L); floor acts as the next element after the stream (-INFINITY: none).
    cdef Py_ssize_t i, j, c, dn, nu, nm, nM, n = st.n
    cdef double y, dSU, dSM
    cdef double SU = 0.0, SM, A, us, uend, bnext, kk = <double> k
    cdef double numL, denL, numU, denU, num, den, P, Q
    cdef bint takeL
    cdef double* b = st.v
    stream_need(st, k + 1 if k < n else n)
    for i in range(k):
        SU += b[i]
    if SU <= 0.0:
        t_out[0] = 0.0
        u_out[0] = 0.0
        return
    # Lemma 3 case 2: U = top k, M empty, valid for u <= b[k-1] - b[k]
    bnext = b[k] if k < n else floor
    A = rho * kk * kk + kk
    us = SU / A
    if us > umax:
        us = umax
    uend = b[k - 1] - bnext
    if us <= uend or k >= n:
        u_out[0] = us
        t_out[0] = bnext if bnext > -INFINITY else b[k - 1] - us - 1.0
        return
    # here k < n: an infinite gap would have ended the walk
    nu = k - 1
    nm = k + 1
    SU -= b[k - 1]
    SM = b[k - 1] + b[k]
    # Per piece, with den > 0: u_end = num/den; the root u* = Q/P lies in the piece
    # iff g'(u_end) >= 0 iff P*num - Q*den >= 0 (nM*g'(u) = P u - Q), so the loop needs
    # no division; event order by cross-multiplying the two event fractions.
    while True:
        if nm < n and nm == st.ns and st.bsum != NULL:
            # Next bucket untouched: try to absorb it whole. With y = its minimum, the
            # path reaches t = y at some u_y, in the state where the whole bucket has
            # joined M and the U values above t+u_y (the sorted top) have left U; find
            # that state (dn = its |U|) and check it is consistent. If at u_y neither
            # the root nor u = umax is reached (both monotone along the path), the
            # walk jumps there: the bucket is never materialised nor sorted.
            j = st.nextb
            c = st.off[j + 1] - nm
            y = st.bmin[j]
            dn = nu
            dSU = SU
            dSM = SM + st.bsum[j]
            while True:
                nM = nm + c - dn
                denL = kk - dn
                numL = dSM - nM * y  # u_y = numL / denL, t + u = y + u_y
                if dn > 0 and y * denL + numL >= b[dn - 1] * denL:
                    dn -= 1
                    dSU -= b[dn]
                    dSM += b[dn]
                else:
                    break
            P = (rho * kk * kk + dn) * nM + (kk - dn) * (kk - dn)
            Q = nM * dSU + (kk - dn) * dSM
            if (P * numL - Q * denL < 0.0 and umax * denL > numL
                    and (dn == nu or y * denL + numL >= b[dn] * denL)):
                nu = dn
                SU = dSU
                SM = dSM
                nm += c
                st.ns = nm
                st.nextb = j + 1
                continue
        if nm < n:
            stream_need(st, nm + 1)
            bnext = b[nm]
        else:
            bnext = floor
        nM = nm - nu
        numL = SM - nM * bnext
        denL = kk - nu
        if nu > 0:
            numU = nM * b[nu - 1] - SM
            denU = nM + nu - kk
            takeL = numL * denU <= numU * denL
        else:
            takeL = True
        if takeL:
            num = numL
            den = denL
        else:
            num = numU
            den = denU
        P = (rho * kk * kk + nu) * nM + (kk - nu) * (kk - nu)
        Q = nM * SU + (kk - nu) * SM
        if P * num - Q * den >= 0.0 or umax * den <= num or (takeL and nm >= n):
            us = Q / P
            if us > umax:
                us = umax
            u_out[0] = us
            t_out[0] = (SM - (kk - nu) * us) / nM
            return
        if takeL:
            SM += b[nm]
            nm += 1
        else:
            nu -= 1
            SU -= b[nu]
            SM += b[nu]


# ------------------------------------------------------------------ public kernels
# work layout (3m doubles): [0, m) stream values / root scratch, [m, 2m) bucket
# counts (as Py_ssize_t), [2m, 3m) gathered candidates.

cdef inline bint cancels(double t, double lo, double hi) noexcept nogil:
    # The root t of a budget-bound knapsack carries a rounding error of about
    # m eps |t| (it comes from sums of the a_i); once |t| dwarfs the box width that
    # error is the size of x itself (a = [1e16, 5e15], r = 1 gave x = 0).
    return fabs(t) > 1e6 * (hi - lo)


cdef void write_refined(const double* a, double* x, Py_ssize_t m, double t, double lo,
                        double hi, double r, double* work) noexcept nogil:
    # x = clip(a - t, lo, hi) with <1,x> = r, t re-solved on a - t (x may be a): the
    # budget-bound knapsack is shift-invariant, and near the new root the shifted
    # values are exact (Sterbenz), so the second root has no cancellation.
    cdef Py_ssize_t i
    for i in range(m):
        x[i] = a[i] - t
    write_clip(x, x, m, clip_root(x, m, lo, hi, r, 0.0, work, NULL), lo, hi)


cdef int knapsack_project(double* x, Py_ssize_t m, double lo, double hi, double r,
                          double* work) noexcept nogil:
    """x <- argmin ||a - x||^2 s.t. <1,x> = r, lo <= x_i <= hi (a = x on entry)."""
    cdef double t = clip_root(x, m, lo, hi, r, 0.0, work, NULL)
    if cancels(t, lo, hi):
        write_refined(x, x, m, t, lo, hi, r, work)
    else:
        write_clip(x, x, m, t, lo, hi)
    return 0


cdef int topk_box_project(double* x, Py_ssize_t m, Py_ssize_t k, double r, double rho,
                          double* work) noexcept nogil:
    """x <- argmin ||a-x||^2 + rho <1,x>^2 over {<1,x> <= r, 0 <= x_i <= r/k} (§5)."""
    # KKT (§5): x = clip(a - t, 0, u), t = rho*s + lambda, lambda >= 0,
    # lambda (s - r) = 0. Both "s <= r" (g(t) <= r) and "t >= rho*g(t)" hold on an
    # up-set of t, so t = max(t_knap, t_bias): if the knapsack root already satisfies
    # t >= rho*r it is the answer, else t solves t = rho * sum clip(a - t, 0, u) (eq. 10).
    cdef double u = r / k
    cdef double t = clip_root(x, m, 0.0, u, r, 0.0, work, NULL)
    if t < rho * r:
        if rho == 0.0:
            t = 0.0
        else:
            t = clip_root(x, m, 0.0, u, 0.0, 1.0 / rho, work, NULL)
    elif cancels(t, 0.0, u):  # the budget binds
        write_refined(x, x, m, t, 0.0, u, r, work)
        return 0
    write_clip(x, x, m, t, 0.0, u)
    return 0


cdef int topk_simplex_into(const double* a, double* x, Py_ssize_t m, Py_ssize_t k,
                           double r, double rho, double* work) noexcept nogil:
    # x <- the projection of a onto Delta_k(r) (x may be a); see topk_simplex_project
    cdef Py_ssize_t i, nc = 0, nv = -1
    cdef double u = r / k, t = NAN, p, v, vmax = -INFINITY, vmin
    cdef double* cand = work + 2 * m
    cdef Stream st
    if m >= FILTER_MIN_N:
        t = filter_root(a, m, 0.0, u, r, work, <Py_ssize_t*> cand, &nv, &p)
    if not t == t:
        nv = -1
        t = clip_root(a, m, 0.0, u, r, 0.0, work, &p)
    if t + p / k - rho * r >= 0.0:
        if cancels(t, 0.0, u):
            write_refined(a, x, m, t, 0.0, u, r, work)
            return 0
        if nv >= 0:
            # the filter kept every value above t (values in work, indices in cand):
            # all the others project to 0
            for i in range(m):
                x[i] = 0.0
            for i in range(nv):
                v = work[i] - t
                v = v if v > 0.0 else 0.0
                x[(<Py_ssize_t*> cand)[i]] = v if v < u else u
            return 0
    else:
        for i in range(m):
            v = a[i]
            if v > t:
                cand[nc] = v
                nc += 1
                vmax = v if v > vmax else vmax
        if nc >= k:
            stream_build(&st, cand, nc, vmax, t, work, <Py_ssize_t*> (work + m))
            cone_walk(&st, k, rho, u, t, &t, &u)
        else:  # cannot happen in exact arithmetic (>= k values exceed t_r); be safe
            vmin = vmax = a[0]
            for i in range(m):
                vmax = a[i] if a[i] > vmax else vmax
                vmin = a[i] if a[i] < vmin else vmin
            stream_build(&st, a, m, vmax, vmin, work, <Py_ssize_t*> (work + m))
            cone_walk(&st, k, rho, u, -INFINITY, &t, &u)
    write_clip(a, x, m, t, 0.0, u)
    return 0


cdef int topk_simplex_project(double* x, Py_ssize_t m, Py_ssize_t k, double r,
                              double rho, double* work) noexcept nogil:
    """x <- argmin ||a-x||^2 + rho <1,x>^2 over Delta_k(r) (Lemma 5)."""
    # Lemma 5: solve the knapsack <1,x> = r, 0 <= x <= r/k first (no sort); its
    # thresholds are optimal iff lambda = t + p/k - rho*r >= 0 with
    # p = sum_i max(0, a_i - t - u). Otherwise <1,x*> < r, and since t(s) decreases
    # along the path (see cone_walk) t* >= t_r: only the values above t_r enter
    # the walk, which also stops at u = r/k, so it is exact even if the test is
    # inconclusive through rounding.
    return topk_simplex_into(x, x, m, k, r, rho, work)


cdef int topk_cone_project(double* x, Py_ssize_t m, Py_ssize_t k, double rho,
                           double* work) noexcept nogil:
    """x <- argmin ||a-x||^2 + rho <1,x>^2 over {0 <= x_i <= <1,x>/k} (Lemmas 3-4)."""
    # The cone optimum is the Delta_k(r) optimum for any r > s* = <1,x*>. On the
    # optimal piece u* = B/A with B <= k*max(a) and A >= rho k^2, A >= k^2/m
    # (see cone_walk), so s* <= max(a) * min(1/rho, m). With that budget the
    # knapsack threshold t_r is a floor for t*, and the walk sorts only values above it.
    cdef Py_ssize_t i
    cdef double t, u, vmax = x[0], vmin = x[0], r
    cdef Stream st
    for i in range(m):
        vmax = x[i] if x[i] > vmax else vmax
        vmin = x[i] if x[i] < vmin else vmin
    if vmax <= 0.0:
        for i in range(m):
            x[i] = 0.0
        return 0
    r = vmax * m
    if rho > 0.0 and vmax / rho < r:
        r = vmax / rho
    r = 2.0 * r
    if r < INFINITY and r / k < INFINITY:
        return topk_simplex_project(x, m, k, r, rho, work)
    stream_build(&st, x, m, vmax, vmin, work, <Py_ssize_t*> (work + m))
    cone_walk(&st, k, rho, INFINITY, -INFINITY, &t, &u)
    write_clip(x, x, m, t, 0.0, u)
    return 0
