"""``python -m leansvm``: the ``leansvm`` command (see :mod:`leansvm.cli`), run as the console
script runs it: the Ctrl-C handler before the heavy imports (:func:`leansvm.interrupts.run_command`)."""

from .interrupts import run_command

run_command()
