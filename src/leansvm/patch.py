"""scikit-learn's kernel SVMs replaced by leansvm's, in one line, as scikit-learn-intelex's ``patch_sklearn``.

    import leansvm
    leansvm.patch_sklearn()                  # from here on, sklearn.svm.SVC is leansvm's
    from sklearn.svm import SVC

    python -m leansvm.patch script.py [args]  # the same for a script, unchanged

``SVC``, ``NuSVC``, ``SVR``, ``NuSVR`` and ``OneClassSVM`` of ``sklearn.svm`` become classes that
build leansvm's estimators: the same parameters (scikit-learn's names and defaults, plus leansvm's
own such as ``n_jobs``), the same fitted attributes and methods. A parameter leansvm does not cover
(none of scikit-learn 1.9's) at a value other than scikit-learn's default builds scikit-learn's own
estimator instead, with a one-line note on standard error. Other estimators (``LinearSVC``, ...)
are left as they are. ``unpatch_sklearn()`` restores scikit-learn's classes.
"""

from __future__ import annotations

import inspect
import sys

#: the estimators of sklearn.svm that leansvm replaces
NAMES = ("SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM")
_ORIGINAL: dict = {}


def _replacement(name):
    """The class that stands for ``sklearn.svm.<name>``: leansvm's estimator, with scikit-learn's
    parameters leansvm lacks accepted at their defaults (and kept, so that get_params and clone work)."""
    import leansvm

    lean, original = getattr(leansvm, name), _ORIGINAL[name]
    own = inspect.signature(lean.__init__)
    extra = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for pname, p in
             inspect.signature(original.__init__).parameters.items()
             if pname not in own.parameters and pname != "self"]

    def __new__(cls, *args, **params):
        uncovered = {p.name: params[p.name] for p in extra if p.name in params and params[p.name] != p.default}
        if uncovered:
            shown = ", ".join(f"{k}={v!r}" for k, v in uncovered.items())
            print(f"leansvm.patch: sklearn.svm.{name}({shown}) stays scikit-learn's: leansvm does not "
                  f"cover {shown}", file=sys.stderr)
            return original(*args, **params)
        return lean.__new__(cls)

    def __init__(self, **params):
        lean.__init__(self, **{k: v for k, v in params.items() if k in own.parameters})
        for p in extra:
            setattr(self, p.name, params.get(p.name, p.default))

    __init__.__signature__ = own.replace(parameters=list(own.parameters.values()) + extra)
    cls = type(name, (lean,), {"__new__": __new__, "__init__": __init__, "__module__": "leansvm.patch",
                               "__doc__": f"leansvm.{name} standing for sklearn.svm.{name} "
                                          "(:func:`leansvm.patch.patch_sklearn`)."})
    cls.__qualname__ = name
    return cls


def patch_sklearn(names=NAMES) -> None:
    """Make ``sklearn.svm.<name>`` leansvm's for every name in ``names``.

    Code that imports the name afterwards gets leansvm's estimator; an object imported before keeps
    scikit-learn's. Parameters leansvm does not cover fall back to scikit-learn's class with a
    one-line note.

    Parameters
    ----------
    names : sequence of str, default=NAMES
        Which of ``SVC``, ``NuSVC``, ``SVR``, ``NuSVR``, ``OneClassSVM`` to replace.

    Returns
    -------
    None

    Examples
    --------
    >>> import leansvm
    >>> leansvm.patch_sklearn()
    >>> from sklearn.svm import SVC
    >>> SVC.__module__
    'leansvm.patch'
    >>> leansvm.unpatch_sklearn()
    >>> from sklearn.svm import SVC
    >>> SVC.__module__
    'sklearn.svm._classes'
    """
    import sklearn.svm
    import sklearn.svm._classes as classes

    for name in names:
        if name not in NAMES:
            raise ValueError(f"leansvm replaces {', '.join(NAMES)}; not {name!r}")
        _ORIGINAL.setdefault(name, getattr(classes, name))
        if name not in globals():                   # made once: instances stay of one class (pickling)
            globals()[name] = _replacement(name)
        replacement = globals()[name]
        setattr(sklearn.svm, name, replacement)
        setattr(classes, name, replacement)


def unpatch_sklearn() -> None:
    """scikit-learn's own classes back in ``sklearn.svm`` (undoes :func:`patch_sklearn`).

    Returns
    -------
    None

    Examples
    --------
    >>> import leansvm
    >>> leansvm.patch_sklearn(["SVC"])
    >>> import sklearn.svm
    >>> sklearn.svm.SVC.__module__
    'leansvm.patch'
    >>> leansvm.unpatch_sklearn()
    >>> sklearn.svm.SVC.__module__
    'sklearn.svm._classes'
    """
    import sklearn.svm
    import sklearn.svm._classes as classes

    for name, original in _ORIGINAL.items():
        setattr(sklearn.svm, name, original)
        setattr(classes, name, original)


def main(argv=None) -> int:
    """``python -m leansvm.patch script.py [args]``: the script run with scikit-learn patched."""
    import runpy

    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m leansvm.patch script.py [args]  (runs script.py with sklearn.svm's "
              f"{', '.join(NAMES)} as leansvm's)")
        return 0 if argv else 2
    from leansvm import patch                 # the module itself, not this __main__ copy: classes pickle
    patch.patch_sklearn()
    sys.argv = argv
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
