"""Merging budget vectors (Wang, Crammer & Vucetic 2012, Sec. 4.3; Qaadan & Glasmachers 2018): the
merged coefficient and weight degradation in closed form, the merge point h by golden-section search
or a lookup table over (alpha ratio, kappa), and multi-merge by gradient ascent on z (MM-GD).
See :mod:`leansvm.budget.bsgd` for the formulas."""

from __future__ import annotations

import numpy as np

from leansvm.core.jit import njit

GOLDEN_ITERATIONS = 24           # interval shrinks by 0.618^24 ~ 1e-5
LOOKUP_SIZE = 401                # table resolution in each of (ratio, kappa)
_FAR = -30.0                     # ln kappa below this: the pair does not interact (kappa < 1e-13)
_INV_GOLD = 0.6180339887498949


@njit(cache=True)
def cascade_guard(q, step_deg, first_deg, guard):
    """(first merge's degradation, stop?) for step q of a cascade (``BudgetConfig.merge_guard``)."""
    if q == 1:
        return step_deg, False
    return first_deg, guard > 0.0 and step_deg > guard * first_deg


# -- binary merge: h, alpha_z and the weight degradation -----------------------------------------
@njit(cache=True)
def merge_alpha(h, ai, aj, lnk):
    """alpha_z(h) = ai kappa^((1-h)^2) + aj kappa^(h^2) with ln kappa = ``lnk`` (optimal alpha_z for z)."""
    return ai * np.exp(lnk * (1.0 - h) * (1.0 - h)) + aj * np.exp(lnk * h * h)


@njit(cache=True)
def merge_degradation(h, ai, aj, lnk):
    """||ai phi(xi) + aj phi(xj) - alpha_z phi(z)||^2 = ai^2 + aj^2 + 2 ai aj kappa - alpha_z^2."""
    az = merge_alpha(h, ai, aj, lnk)
    return ai * ai + aj * aj + 2.0 * ai * aj * np.exp(lnk) - az * az


@njit(cache=True)
def _golden(ai, aj, lnk, lo, hi, iterations):
    """argmax over [lo, hi] of s * alpha_z(h), s the sign of the larger |alpha| (golden-section search)."""
    if abs(aj) >= abs(ai):
        s = 1.0 if aj >= 0 else -1.0
    else:
        s = 1.0 if ai >= 0 else -1.0
    a, b = lo, hi
    c = b - _INV_GOLD * (b - a)
    d = a + _INV_GOLD * (b - a)
    fc = s * merge_alpha(c, ai, aj, lnk)
    fd = s * merge_alpha(d, ai, aj, lnk)
    for _ in range(iterations):
        if fc > fd:
            b, d, fd = d, c, fc
            c = b - _INV_GOLD * (b - a)
            fc = s * merge_alpha(c, ai, aj, lnk)
        else:
            a, c, fc = c, d, fd
            d = a + _INV_GOLD * (b - a)
            fd = s * merge_alpha(d, ai, aj, lnk)
    return 0.5 * (a + b)


@njit(cache=True)
def _opposite_sign_reach(lnk):
    """How far outside [0, 1] (in units of ||xi - xj||) the merged point may lie: 3 kernel widths."""
    r = 3.0 / np.sqrt(-lnk) if lnk < 0.0 else 50.0
    return min(50.0, max(0.05, r))


@njit(cache=True)
def golden_h(ai, aj, lnk, iterations):
    """h of the best merge z = h xi + (1-h) xj by golden-section search.

    Equal signs: h in [0, 1] (in [0, 1/2] from the larger coefficient's side); opposite signs:
    h < 0 beyond xj when |aj| >= |ai|, h > 1 beyond xi otherwise.
    """
    if lnk < _FAR:            # no interaction: keep the larger vector
        return 0.0 if abs(aj) >= abs(ai) else 1.0
    if abs(aj) >= abs(ai):
        if ai * aj >= 0.0:
            return _golden(ai, aj, lnk, 0.0, 0.5, iterations)
        return _golden(ai, aj, lnk, -_opposite_sign_reach(lnk), 0.0, iterations)
    # mirror: the roles of i and j swap, h -> 1 - h
    return 1.0 - golden_h(aj, ai, lnk, iterations)


# -- the precomputed table (Glasmachers & Qaadan, arXiv:1806.10180) ---------------------------
@njit(cache=True)
def _build_lookup(size, iterations):
    """Table over r = a_small / a_large in [-1, 1] and kappa in [0, 1].

    Stores h for r >= 0 (z = h x_small + (1-h) x_large) and u = h sqrt(-ln kappa) for r < 0
    (the offset in kernel widths, bounded as kappa -> 1 where h itself diverges).
    """
    table = np.empty((size, size))
    for a in range(size):
        r = -1.0 + 2.0 * a / (size - 1)
        for b in range(size):
            kappa = b / (size - 1)
            kappa = min(max(kappa, 1e-300), 1.0 - 1e-9)
            lnk = np.log(kappa)
            h = golden_h(r, 1.0, lnk, iterations)
            table[a, b] = h if r >= 0.0 else h * np.sqrt(-lnk)
    return table


@njit(cache=True)
def lookup_h(ai, aj, lnk, table):
    """h from the table by bilinear interpolation (the degradation is then exact for this h)."""
    if lnk < _FAR:
        return 0.0 if abs(aj) >= abs(ai) else 1.0
    if abs(aj) < abs(ai):
        return 1.0 - lookup_h(aj, ai, lnk, table)
    if aj == 0.0:
        return 0.0
    size = table.shape[0]
    r = ai / aj
    kappa = np.exp(lnk)
    fa = (r + 1.0) * 0.5 * (size - 1)
    fb = kappa * (size - 1)
    ia = min(int(fa), size - 2)
    ib = min(int(fb), size - 2)
    wa = fa - ia
    wb = fb - ib
    v = ((1 - wa) * (1 - wb) * table[ia, ib] + wa * (1 - wb) * table[ia + 1, ib]
         + (1 - wa) * wb * table[ia, ib + 1] + wa * wb * table[ia + 1, ib + 1])
    if r >= 0.0:
        return v
    return v / np.sqrt(-lnk) if lnk < 0.0 else 0.0


_LOOKUP = None


def lookup_table() -> np.ndarray:
    """The (computed once per process) merge table."""
    global _LOOKUP
    if _LOOKUP is None:
        _LOOKUP = _build_lookup(LOOKUP_SIZE, 60)
    return _LOOKUP


@njit(cache=True)
def _pair_h(ai, aj, lnk, solver, table, iterations):
    if solver == 1:
        return lookup_h(ai, aj, lnk, table)
    return golden_h(ai, aj, lnk, iterations)


# -- multi-merge by gradient ascent (Algorithm 2, MM-GD) ------------------------------------
@njit(cache=True)
def _g_at(Z, a, gamma, z, k):
    """g(z) = sum_m a_m k(x_m, z); k receives the kernel values."""
    s = 0.0
    for m in range(Z.shape[0]):
        d2 = 0.0
        for c in range(Z.shape[1]):
            diff = Z[m, c] - z[c]
            d2 += diff * diff
        k[m] = np.exp(-gamma * d2)
        s += a[m] * k[m]
    return s


@njit(cache=True)
def _gd_merge(Z, a, gamma, z, max_iter):
    """z maximising |g(z)|, g(z) = sum_m a_m k(x_m, z) (then alpha_z = g(z), degradation = const - g^2).

    Starts at the alpha-weighted mean; each step is the fixed-point (mean-shift) step
    z <- sum a_m k_m x_m / sum a_m k_m, i.e. gradient ascent on g with step 1 / (2 gamma g),
    halved while it does not increase |g|. Returns the number of iterations.
    """
    M, d = Z.shape
    k = np.empty(M)
    g = _g_at(Z, a, gamma, z, k)
    it = 0
    new = np.empty(d)
    for it in range(1, max_iter + 1):
        # gradient of g: 2 gamma sum a_m k_m (x_m - z); fixed-point step length 1/(2 gamma g)
        step = 1.0
        grad = np.zeros(d)
        for m in range(M):
            w = a[m] * k[m]
            for c in range(d):
                grad[c] += w * (Z[m, c] - z[c])
        if g == 0.0:
            break
        improved = False
        for _ in range(30):
            for c in range(d):
                new[c] = z[c] + step * grad[c] / g
            g_new = _g_at(Z, a, gamma, new, k)
            if abs(g_new) > abs(g):
                improved = True
                break
            step *= 0.5
        if not improved:
            _g_at(Z, a, gamma, z, k)
            break
        rel = (abs(g_new) - abs(g)) / abs(g_new)
        z[:] = new
        g = g_new
        if rel < 1e-10:
            break
    return it
