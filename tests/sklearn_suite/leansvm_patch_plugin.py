"""A pytest plugin (``-p leansvm_patch_plugin``): sklearn.svm's kernel SVMs are leansvm's before any
test module of scikit-learn imports them."""

import leansvm

leansvm.patch_sklearn()
