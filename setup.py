"""The build step that ships leansvm's compiled code inside the package.

leansvm's solvers are numba functions. numba compiles a function at its first call and, with
``cache=True``, keeps the machine code in ``__pycache__`` beside the source, keyed by a hash of the
source file, numba's version and the CPU. This build step runs ``leansvm.precompile`` against the
files being packaged, so that the wheel (and ``pip install .``, which builds one) carries that
code and the first fit after an install loads it in about a second instead of compiling for about
a minute. ``leansvm/compiled.json`` records what the code was built for; ``leansvm.core.jit`` tells
the user once where it does not match this machine and numba compiles after all.

The machine code is for the build machine's CPU model, so the wheel is tagged for this platform
and Python version (not ``py3-none-any``). Set ``LEANSVM_BUILD_COMPILED=0`` to build without it.
An editable install (``pip install -e .``) compiles on first use as before, or ahead with
``python -m leansvm.precompile``.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

COMPILED = os.environ.get("LEANSVM_BUILD_COMPILED", "1") != "0"


class build_py_with_compiled_code(build_py):
    """build_py, then ``python -m leansvm.precompile --record`` on the built package."""

    def run(self):
        compiled = COMPILED and not getattr(self, "editable_mode", False)
        build_lib = Path(self.build_lib).resolve()
        if compiled:                          # no file of an earlier build (a removed module) ships
            shutil.rmtree(build_lib / "leansvm", ignore_errors=True)
        super().run()
        if not compiled:
            return
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONPATH": os.pathsep.join(filter(None, [str(build_lib), os.environ.get("PYTHONPATH")]))}
        for variable in ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT", "NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES"):
            env.pop(variable, None)          # the code must land in the package, for this CPU
        self.announce("compiling leansvm's solvers into the package (about a minute)", level=2)
        subprocess.run([sys.executable, "-m", "leansvm.precompile", "--record"], env=env, check=True,
                       cwd=build_lib)
        if not (build_lib / "leansvm" / "compiled.json").exists():
            raise RuntimeError(f"the compiled code did not land in {build_lib / 'leansvm'}: "
                               "another leansvm was imported first")


class DistributionWithMachineCode(Distribution):
    """The package holds machine code: the wheel is tagged with this Python and platform."""

    def has_ext_modules(self):
        return COMPILED


setup(cmdclass={"build_py": build_py_with_compiled_code}, distclass=DistributionWithMachineCode)
