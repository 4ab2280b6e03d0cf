# Codes of the loss-augmented inference kernel (cython_src/_lai_fast.pyx): the rank
# loss and the method of a call. cpdef: the kernel module also exposes each as a
# Python int (svmrank._lai_fast.LOSS_AP, ...), which svmrank.losses and
# svmrank.inference read instead of restating the numbers.

cpdef enum:
    LOSS_AP = 0      # 1 - average precision
    LOSS_NDCG = 1    # 1 - NDCG, binary relevance
    LOSS_ROC = 2     # 1 - ROC area (fraction of swapped positive/negative pairs)
    LOSS_USER = 3    # a user's QS-suitable loss, its steps called back

cpdef enum:
    METHOD_QS = 0             # OptRanks (2018 Alg. 1)
    METHOD_GREEDY = 1         # sort, scan every rank (2014 Alg. 1)
    METHOD_SEARCH = 2         # binary search where f_j is unimodal (2014 Alg. 2)
    METHOD_SELECT = 3         # selective ranking (2014 Alg. 3) with linear scans
    METHOD_SEARCH_SELECT = 4  # Alg. 3 with Alg. 2 for each negative
