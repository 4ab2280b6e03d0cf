# Loss-augmented inference for QS-suitable rank losses (AP, NDCG, ROC area).
#
# Notation (NOTES.md, 2018 supplement): P positives sorted by decreasing score
# s+_1 >= ... >= s+_P; N negatives, the j-th highest scored s*_j; the interleaving rank
# r_j in 1..P+1 of negative j is one plus the number of positives ranked above it.
# The objective is sum_j f_j(r_j) with
#   f_j(i+1) - f_j(i) = 2 (s+_i - s*_j) / (P N) + delta_j(i+1) - delta_j(i)
# and opt_j, the largest maximiser of f_j, is non-decreasing in j (2018 Observation 2).
from libc.math cimport log2, NAN
from libc.stdlib cimport malloc, free, qsort

cdef extern from *:
    """
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

ctypedef svmrank_item Item

LOSS_AP = 0
LOSS_NDCG = 1
LOSS_ROC = 2
METHOD_QS = 0
METHOD_GREEDY = 1


cdef inline double discount(double position) noexcept nogil:
    # NDCG discount D(i) = 1 / log2(1 + i)
    return 1.0 / log2(1.0 + position)


cdef inline double delta_step(int loss, Py_ssize_t i, Py_ssize_t j, Py_ssize_t P,
                              Py_ssize_t N, double ndcg_norm) noexcept nogil:
    """delta_j(i+1) - delta_j(i) for 1 <= i <= P, 1 <= j <= N (condition C1)."""
    if loss == 0:  # AP (Yue et al.; 2014 eq. 5)
        return ((j - 1.0) / (j + i - 1.0) - j / (j + i + 0.0)) / P
    elif loss == 1:  # NDCG, binary relevance: (D(i+j) - D(i+j-1)) / sum_{i<=P} D(i)
        return (discount(i + j) - discount(i + j - 1)) / ndcg_norm
    else:  # ROC area: each positive moved above negative j removes one swapped pair
        return -1.0 / (<double>P * N)


cdef Py_ssize_t best_rank(int loss, Py_ssize_t j, double s_neg, const Item* pos,
                          Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t P, Py_ssize_t N,
                          double ndcg_norm) noexcept nogil:
    """Largest maximiser of f_j over the interleaving ranks lo..hi (1-based)."""
    cdef Py_ssize_t i, best = lo
    cdef double f = 0.0, best_f = 0.0, scale = 2.0 / (<double>P * N)
    for i in range(lo, hi):
        f += scale * (pos[i - 1].s - s_neg) + delta_step(loss, i, j, P, N, ndcg_norm)
        if f >= best_f:
            best_f = f
            best = i + 1
    return best


cdef inline unsigned long long xorshift(unsigned long long* state) noexcept nogil:
    state[0] ^= state[0] << 13
    state[0] ^= state[0] >> 7
    state[0] ^= state[0] << 17
    return state[0]


cdef void select_desc(Item* a, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t k,
                      unsigned long long* rng) noexcept nogil:
    """Quickselect (3-way partition, random pivot): afterwards a[k] holds the element of
    rank k in decreasing order of s within a[lo..hi], larger ones before, smaller after."""
    cdef Py_ssize_t lt, gt, i
    cdef double pivot
    cdef Item tmp
    while lo < hi:
        pivot = a[lo + <Py_ssize_t>(xorshift(rng) % <unsigned long long>(hi - lo + 1))].s
        lt = lo
        gt = hi
        i = lo
        while i <= gt:  # a[lo..lt-1] > pivot, a[lt..i-1] == pivot, a[gt+1..hi] < pivot
            if a[i].s > pivot:
                tmp = a[i]; a[i] = a[lt]; a[lt] = tmp
                lt += 1
                i += 1
            elif a[i].s < pivot:
                tmp = a[i]; a[i] = a[gt]; a[gt] = tmp
                gt -= 1
            else:
                i += 1
        if k < lt:
            hi = lt - 1
        elif k > gt:
            lo = gt + 1
        else:
            return


cdef void opt_ranks(Item* neg, Py_ssize_t* opt, Py_ssize_t lo, Py_ssize_t hi,
                    Py_ssize_t plo, Py_ssize_t phi, const Item* pos, int loss,
                    Py_ssize_t P, Py_ssize_t N, double ndcg_norm,
                    unsigned long long* rng) noexcept nogil:
    """OptRanks of the 2018 paper, Algorithm 1, on 0-based negative positions lo..hi
    whose optimal interleaving ranks are known to lie in plo..phi."""
    cdef Py_ssize_t m, i
    while lo <= hi:
        if plo == phi:
            for i in range(lo, hi + 1):
                opt[i] = plo
            return
        m = lo + (hi - lo) // 2
        select_desc(neg, lo, hi, m, rng)
        opt[m] = best_rank(loss, m + 1, neg[m].s, pos, plo, phi, P, N, ndcg_norm)
        # recurse on the smaller-index half, loop on the other (bounded stack)
        if lo < m:
            opt_ranks(neg, opt, lo, m - 1, plo, opt[m], pos, loss, P, N, ndcg_norm, rng)
        lo = m + 1
        plo = opt[m]


cdef double infer_one(const double* scores, const unsigned char* rel, const Py_ssize_t* rows,
                      Py_ssize_t n, int loss, int method, double* coef, Py_ssize_t* ranks,
                      double* objective,
                      Item* pos, Item* neg, Py_ssize_t* opt, Py_ssize_t* count) noexcept nogil:
    """Most violated ranking of one query (rows[0..n-1] index scores/rel/coef/ranks).

    Writes coef[rows[k]], ranks[rows[k]] (a negative's interleaving rank, 0 for a
    positive) and *objective; returns the loss (NaN, coef 0, when the query
    has no positive or no negative)."""
    cdef Py_ssize_t k, i, j, P = 0, N = 0, above
    cdef double ndcg_norm = 0.0, loss_value = 0.0, value, f_score = 0.0, pn
    cdef unsigned long long rng = 0x9E3779B97F4A7C15ULL
    for k in range(n):
        if rel[rows[k]]:
            pos[P].s = scores[rows[k]]; pos[P].idx = rows[k]; P += 1
        else:
            neg[N].s = scores[rows[k]]; neg[N].idx = rows[k]; N += 1
    if P == 0 or N == 0:
        for k in range(n):
            coef[rows[k]] = 0.0
            ranks[rows[k]] = 0
        objective[0] = NAN
        return NAN
    pn = <double>P * N
    for i in range(1, P + 1):
        ndcg_norm += discount(i)
    qsort(pos, P, sizeof(Item), svmrank_item_desc)
    if method == 1:  # Yue et al.'s greedy algorithm (2014 Alg. 1): sort, scan every rank
        qsort(neg, N, sizeof(Item), svmrank_item_desc)
        for j in range(N):
            opt[j] = best_rank(loss, j + 1, neg[j].s, pos, 1, P + 1, P, N, ndcg_norm)
    else:
        opt_ranks(neg, opt, 0, N - 1, 1, P + 1, pos, loss, P, N, ndcg_norm, &rng)
    # negatives' coefficients (2018 supplement Lemma 8) and counts per interleaving slot
    for i in range(P + 2):
        count[i] = 0
    for j in range(N):
        count[opt[j]] += 1
        ranks[neg[j].idx] = opt[j]
        coef[neg[j].idx] = (P + 2.0 - 2.0 * opt[j]) / pn
        f_score += coef[neg[j].idx] * neg[j].s
    above = 0  # negatives ranked above the current positive
    for i in range(1, P + 1):
        above += count[i]
        coef[pos[i - 1].idx] = (N - 2.0 * above) / pn
        ranks[pos[i - 1].idx] = 0
        f_score += coef[pos[i - 1].idx] * pos[i - 1].s
        if loss == 0:  # 1 - AP: positive i sits at position i + above
            loss_value += i / (i + <double>above)
        elif loss == 1:
            loss_value += discount(i + above)
    if loss == 0:
        loss_value = 1.0 - loss_value / P
    elif loss == 1:
        loss_value = 1.0 - loss_value / ndcg_norm
    else:
        for i in range(1, P + 1):
            loss_value += count[i] * (P + 1.0 - i)
        loss_value /= pn
    objective[0] = loss_value + f_score
    return loss_value


def lai_queries(const double[::1] scores, const unsigned char[::1] relevant,
                const Py_ssize_t[::1] order, const Py_ssize_t[::1] offsets,
                int loss, int method, double[::1] coef, Py_ssize_t[::1] ranks,
                double[::1] losses, double[::1] objectives):
    """Loss-augmented inference for every query.

    Query q is rows order[offsets[q]:offsets[q+1]]. Fills coef and ranks (input order;
    ranks holds each negative's interleaving rank, 0 for positives), and the
    per-query losses and objectives (NaN for a query without positives or negatives).
    Inputs are assumed valid (checked in svmrank.inference).
    """
    cdef Py_ssize_t q, n_queries = offsets.shape[0] - 1, largest = 0, size
    cdef Item* pos
    cdef Item* neg
    cdef Py_ssize_t* opt
    cdef Py_ssize_t* count
    for q in range(n_queries):
        largest = max(largest, offsets[q + 1] - offsets[q])
    pos = <Item*> malloc((largest + 1) * sizeof(Item))
    neg = <Item*> malloc((largest + 1) * sizeof(Item))
    opt = <Py_ssize_t*> malloc((largest + 1) * sizeof(Py_ssize_t))
    count = <Py_ssize_t*> malloc((largest + 2) * sizeof(Py_ssize_t))
    if pos == NULL or neg == NULL or opt == NULL or count == NULL:
        free(pos); free(neg); free(opt); free(count)
        raise MemoryError()
    with nogil:
        for q in range(n_queries):
            size = offsets[q + 1] - offsets[q]
            losses[q] = infer_one(&scores[0], &relevant[0], &order[offsets[q]], size, loss,
                                  method, &coef[0], &ranks[0], &objectives[q], pos, neg, opt, count)
    free(pos); free(neg); free(opt); free(count)
