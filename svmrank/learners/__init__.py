"""Learners: the 1-slack cutting-plane algorithm and its QP, CCCP, Prox-SDCA."""
