"""The ``leansvm`` console command (and ``python -m leansvm``): the Ctrl-C handler of
:mod:`leansvm.interrupts` first, then the imports of NumPy, SciPy, numba and :mod:`leansvm.cli`.

This module sits above every other one (it imports the command); ``interrupts``
stays at the bottom (standard library only), so the import graph has no circle.
"""

import signal
import sys

from leansvm.interrupts import handled, report


def run_command():
    """The ``leansvm`` console command (and ``python -m leansvm``): the handler first, then the
    imports of NumPy, SciPy, numba and the command itself.

    Left unguarded: the few milliseconds from the interpreter's start to the handler's
    installation (importing this package's ``__init__``, this module and ``interrupts``: standard library only).
    On the way out SIGINT is ignored: the command is over."""
    try:
        with handled(leave=None if signal.getsignal(signal.SIGINT) is signal.SIG_IGN else signal.SIG_IGN):
            from leansvm.cli import main
            status = main()
    except KeyboardInterrupt as exc:
        status = report(exc)
    sys.exit(status)
