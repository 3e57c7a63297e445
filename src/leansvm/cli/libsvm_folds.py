"""The folds of ``svm-train -v N``, as LIBSVM draws them, so that ``leansvm train -v N`` scores the same rows.

LIBSVM's ``svm_cross_validation`` (svm.cpp) shuffles with the C library's ``rand()``, which
svm-train never seeds (seed 1). On glibc that is the additive feedback generator of ``random(3)``
(TYPE_3: r_i = r_{i-31} + r_{i-3} mod 2^32, output r_i >> 1, after 310 discarded values; the
first 31 states by r_i = 16807 r_{i-1} mod (2^31 - 1)). Classification (C-SVC, nu-SVC, with fewer
folds than rows): the rows grouped by class (classes in order of first appearance, a -1/+1 pair
with +1 first), each class shuffled, then dealt to the folds in contiguous parts
(count_c i / N .. count_c (i + 1) / N). Otherwise one shuffle of all rows, cut into N contiguous parts.
"""

from __future__ import annotations

import numpy as np


class GlibcRand:
    """``rand()`` of glibc after ``srand(seed)``."""

    def __init__(self, seed=1):
        r = [seed]
        for _ in range(1, 31):
            r.append((16807 * r[-1]) % 2147483647)
        r += r[:3]                                   # r[31..33] = r[0..2]
        for i in range(34, 344):
            r.append((r[i - 31] + r[i - 3]) & 0xFFFFFFFF)
        self.state = r[-31:]

    def __call__(self) -> int:
        value = (self.state[-31] + self.state[-3]) & 0xFFFFFFFF
        self.state = self.state[1:] + [value]
        return value >> 1


def libsvm_folds(y, n_folds, stratified, seed=1) -> list[np.ndarray]:
    """The held-out rows of each of ``n_folds`` folds, as svm-train -v draws them."""
    rand = GlibcRand(seed)
    y = np.asarray(y)
    n = y.shape[0]
    n_folds = min(n_folds, n)
    if not (stratified and n_folds < n):
        perm = np.arange(n)
        for i in range(n):
            j = i + rand() % (n - i)
            perm[i], perm[j] = perm[j], perm[i]
        return [perm[i * n // n_folds:(i + 1) * n // n_folds] for i in range(n_folds)]
    labels, first = [], {}
    for value in y.tolist():
        if value not in first:
            first[value] = len(labels)
            labels.append(value)
    if len(labels) == 2 and labels[0] == -1 and labels[1] == 1:
        labels.reverse()
    groups = [np.flatnonzero(y == label) for label in labels]
    parts = [[] for _ in range(n_folds)]
    for index in groups:
        index = index.copy()
        count = index.size
        for i in range(count):
            j = i + rand() % (count - i)
            index[i], index[j] = index[j], index[i]
        for f in range(n_folds):
            parts[f].append(index[f * count // n_folds:(f + 1) * count // n_folds])
    return [np.concatenate(p) for p in parts]
