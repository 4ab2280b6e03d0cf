"""Learners: the 1-slack cutting-plane algorithm and its QP, CCCP, Prox-SDCA."""
from .cccp import CCCPResult, cccp
from .cutting_plane import CuttingPlaneResult, cutting_plane
from .qp import QPError, solve_dual_qp
from .sdca import SDCAResult, sdca_topk, topk_hinge_losses

__all__ = ["cutting_plane", "CuttingPlaneResult", "solve_dual_qp", "QPError", "cccp",
           "CCCPResult", "sdca_topk", "SDCAResult", "topk_hinge_losses"]
