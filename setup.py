"""The build step that ships leansvm's compiled code inside the package.

leansvm's solvers are numba functions, compiled at their first call. This build step runs
``python -m leansvm.precompile --build`` against the files being packaged: every solver is compiled
for the platform's baseline CPUs (x86-64: the psABI levels x86-64-v4 and x86-64-v2; aarch64: its
baseline), one process per target, into ``leansvm/compiled/<target>/``, so that the wheel (and
``pip install .``, which builds one) carries that code and the first fit on any CPU of the
platform loads it in about a second instead of compiling for about two minutes
(``leansvm.core.jit`` picks the best target the CPU runs, and tells the user once where none fits).

The machine code is for this platform and Python version, so the wheel is tagged for them (not
``py3-none-any``). ``LEANSVM_BUILD_TARGETS`` names other targets (``native``: this machine's own
CPU); ``LEANSVM_BUILD_COMPILED=0`` builds without compiled code. An editable install (``pip
install -e .``) compiles on first use, or ahead with ``python -m leansvm.precompile``.
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
    """build_py, then ``python -m leansvm.precompile --build`` on the built package."""

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
        env.pop("NUMBA_DISABLE_JIT", None)
        self.announce("compiling leansvm's solvers into the package (a minute or two)", level=2)
        subprocess.run([sys.executable, "-m", "leansvm.precompile", "--build"], env=env, check=True,
                       cwd=build_lib)
        if not list((build_lib / "leansvm" / "compiled").glob("*/target.json")):
            raise RuntimeError(f"the compiled code did not land in {build_lib / 'leansvm'}: "
                               "another leansvm was imported first")


class DistributionWithMachineCode(Distribution):
    """The package holds machine code: the wheel is tagged with this Python and platform."""

    def has_ext_modules(self):
        return COMPILED


setup(cmdclass={"build_py": build_py_with_compiled_code}, distclass=DistributionWithMachineCode)
