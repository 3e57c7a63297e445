"""Box CD on a path cache smaller than the problem: rows evicted while the descent holds their slots.

Regression test: ``restore()`` (the exact gradients of shrunk samples) reads many
rows through the cache and can evict rows the descent had resident; the descent
then read other samples' rows through its stale slots. On full a9a this made
the returned margins drift by 3e-3 in one solve (22 at C = 100 along the path,
where accuracy fell from 0.85 to 0.61). Rows are float64 here, so any
difference above rounding is a wrong row.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_moons

from leansvm.core.kernels import Kernel
from leansvm.core.problems import c_svc
from leansvm.exact.box_cd import solve_box_cd_cached
from leansvm.paths.binary_path import row_cache


def _exact_margins(kernel, X, y, alpha):
    nz = np.flatnonzero(alpha)
    coef = y[nz] * alpha[nz]
    return y * (kernel(X, X[nz]) @ coef + coef.sum())          # augmented bias: k + 1


# cases whose descent restores in the middle (n_restore >= 2, checked below); which ones do depends
# on the trajectory, so on the last bits of the kernel rows (the compact case of (1, 10, 2, 0.6)
# restored once after the row products read a contiguous X')
@pytest.mark.parametrize("shrinking,seed,C,gamma,fraction", [
    (True, 1, 10.0, 2.0, 0.6), (True, 1, 100.0, 0.5, 0.6), (True, 0, 100.0, 0.5, 0.9),
    ("compact", 3, 10.0, 2.0, 0.6), ("compact", 1, 100.0, 0.5, 0.6), ("compact", 0, 100.0, 0.5, 0.9)])
def test_margins_stay_exact_when_restores_evict_rows(shrinking, seed, C, gamma, fraction):
    X, y = make_moons(n_samples=400, noise=0.3, random_state=seed)
    y = np.where(y == 1, 1.0, -1.0)
    n = y.size
    kernel = Kernel("rbf", gamma=gamma)
    upper = np.full(n, C)
    fits = {}
    for label, mb in (("small", fraction * n * n * 8 / 2**20), ("whole", 2.0 * n * n * 8 / 2**20)):
        cache = row_cache(kernel, X, mb, tol=1e-5)             # float64 rows
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits[label] = solve_box_cd_cached(cache, np.arange(n), c_svc(y, upper), tol=1e-3, bias="augmented",
                                              alpha_init=np.full(n, C), shrinking=shrinking)
        if label == "small":
            assert cache.capacity < n                          # rows really are evicted
    small, whole = fits["small"], fits["whole"]
    assert small.stats["n_restore"] >= 2                       # a restore in the middle of the descent
    exact = _exact_margins(kernel, X, y, small.alpha)
    assert np.max(np.abs(small.stats["margins"] - exact)) < 1e-8
    assert abs(small.dual_objective - whole.dual_objective) <= 1e-5 * abs(whole.dual_objective)
