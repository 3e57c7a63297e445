"""``python -m leansvm``: the ``leansvm`` command (see :mod:`leansvm.cli`), run as the console
script runs it: the Ctrl-C handler before the heavy imports (:func:`leansvm.command.run_command`)."""

from leansvm.command import run_command

run_command()
