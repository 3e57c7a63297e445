"""``python -m leansvm``: the ``leansvm`` command (see :mod:`leansvm.cli`)."""

import sys

from .cli import main

sys.exit(main())
