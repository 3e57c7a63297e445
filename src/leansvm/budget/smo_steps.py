"""The pair steps and the violation scan shared by the budget SMO loops (:mod:`.budget_smo` on a
block, :mod:`.budget_shrinking` with shrinking), compiled with numba: one module below both.

Notation of :mod:`leansvm.budget.budget_smo`'s docstring: v = -y G, I_up / I_low, the allowed
pairs, and the slack of the budget constraint.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from leansvm.core.jit import njit

#: j must violate at least SIGMA times the maximal violation (constant-factor violating pair)
SIGMA = 0.5
#: the stopping tolerance is tol times the margin level 1 - rho, never below MARGIN_FLOOR times tol
MARGIN_FLOOR = 1e-3
DEFAULT_WORKING_SET = 512
_TAU = 1e-12
_SNAP = 1e-12

# status codes of the compiled SMO loop
CONVERGED, MAX_ITER, STALLED = 0, 1, 2


@njit(cache=True)
def _scan_set(alpha, y, G, U, slack, floor, active, m):
    """Over the samples ``active[:m]``: (maximal violation over allowed pairs, margin scale,
    best I_up index of each class, up_max+, up_max-, low_min+, low_min-) with v = -y G.

    The margin scale is the level 1 - rho shared by the free SVs
    (y_i (f_i + b) = 1 - rho): per class the free SVs have -y_i G_i = rho + b
    (y = +1) and b - rho (y = -1), estimated by the midpoints of the I_up /
    I_low ranges; it is clipped to [floor, 1] (floor = 1: LIBSVM's absolute rule). With the budget
    inactive both levels equal b and the scale is 1 (LIBSVM's rule).
    """
    up_max0 = -np.inf
    up_max1 = -np.inf
    low_min0 = np.inf
    low_min1 = np.inf
    up_arg0 = -1
    up_arg1 = -1
    for p in range(m):
        t = active[p]
        v = -y[t] * G[t]
        if y[t] > 0:
            if alpha[t] < U[t] and v > up_max0:
                up_max0 = v
                up_arg0 = t
            if alpha[t] > 0 and v < low_min0:
                low_min0 = v
        else:
            if alpha[t] > 0 and v > up_max1:
                up_max1 = v
                up_arg1 = t
            if alpha[t] < U[t] and v < low_min1:
                low_min1 = v
    viol = max(up_max0 - low_min0, up_max1 - low_min1, up_max1 - low_min0)
    if slack > 0.0:
        viol = max(viol, up_max0 - low_min1)
    scale = 1.0 - 0.5 * (_level(up_max0, low_min0) - _level(up_max1, low_min1))
    if not scale == scale:                                 # a class without a finite level
        scale = 1.0
    return (viol, min(1.0, max(floor, scale)), up_arg0, up_arg1, up_max0, up_max1, low_min0, low_min1)


@njit(cache=True, inline="always")
def _low_partner(alpha, y, U, t, positive_only):
    """Is t in I_low (a_t > 0 for y = +1, a_t < U for y = -1), and of class +1 when ``positive_only``
    (an I_up sample of class +1 while the sum constraint is active: (+ up, - low) would raise 1'a)?"""
    if y[t] > 0:
        return alpha[t] > 0
    return alpha[t] < U[t] and not positive_only


@njit(cache=True)
def _apply_pair(alpha, y, U, i, j, step, slack):
    """a_i += y_i t, a_j -= y_j t (t = ``step``, already clipped), bounds snapped exactly;
    returns (d_i, d_j, new slack of 1'a <= S): a step stopped by (12) makes the sum exactly active."""
    sum_bound = 0.5 * slack if (y[i] > 0 and y[j] < 0) else np.inf
    old_i = alpha[i]
    old_j = alpha[j]
    alpha[i] += y[i] * step
    alpha[j] -= y[j] * step
    for k in (i, j):                                      # exact bounds after clipping
        if alpha[k] <= _SNAP * U[k]:
            alpha[k] = 0.0
        elif alpha[k] >= U[k] * (1.0 - _SNAP):
            alpha[k] = U[k]
    d_i = alpha[i] - old_i
    d_j = alpha[j] - old_j
    if y[i] != y[j]:                                  # same class: 1'a unchanged
        if step >= sum_bound:
            slack = 0.0
        else:
            slack -= d_i + d_j
            if slack < _SNAP * (U[i] + U[j]):
                slack = 0.0
    return d_i, d_j, slack


@njit(cache=True)
def _level(up, low):
    """Midpoint of a class's [I_low min, I_up max] range of -y G (the finite end if one is infinite)."""
    if up > -np.inf and low < np.inf:
        return 0.5 * (up + low)
    if up > -np.inf:
        return up
    if low < np.inf:
        return low
    return np.nan


@njit(cache=True)
def _pair_limit(alpha, y, U, i, j, slack, ball_sq, sumsq):
    """Largest t of the clipping interval (10)-(12), and (13) when ``ball_sq`` is finite."""
    t_max = np.inf
    if y[i] > 0:                                           # (10), (11) for a_i = a_i + y_i t
        t_max = min(t_max, U[i] - alpha[i])
    else:
        t_max = min(t_max, alpha[i])
    if y[j] > 0:                                           # (10), (11) for a_j = a_j - y_j t
        t_max = min(t_max, alpha[j])
    else:
        t_max = min(t_max, U[j] - alpha[j])
    if y[i] > 0 and y[j] < 0:                              # (12): 1'a grows by 2t
        t_max = min(t_max, 0.5 * slack)
    if ball_sq < np.inf:                                   # (13): t^2 + beta t + gamma <= 0
        beta = alpha[i] * y[i] - alpha[j] * y[j]
        gamma = 0.5 * (sumsq - ball_sq)
        disc = beta * beta - 4.0 * gamma
        t_max = min(t_max, max(0.5 * (-beta + math.sqrt(max(disc, 0.0))), 0.0))
    return t_max


# -- global quantities (NumPy, O(n) per call) --------------------------------------------
def _bound_masks(alpha, y, U):
    pos = y > 0
    below, above = alpha < U, alpha > 0
    up = np.where(pos, below, above)
    low = np.where(pos, above, below)
    return pos, up, low


def max_violation(alpha, y, G, U, slack) -> float:
    """Maximal KKT violation over allowed pairs (see the module docstring)."""
    return float(_scan_set(alpha, y, G, U, float(slack), 1.0, np.arange(y.size), y.size)[0])
