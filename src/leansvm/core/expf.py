"""e^z in float32 for z <= 0, compiled so that a loop of it vectorises (the RBF kernel's exp).

Cephes' expf: e^z = 2^k e^r, k = round(z log2 e), r = z - k ln 2 with ln 2 = C1 + C2 (C1 exact in
few bits, so k C1 is exact: Cody & Waite), e^r = 1 + r + r^2 P(r) on |r| <= ln 2 / 2, and 2^k
made from its exponent bits. Within 3 float32 ulps of NumPy's exp down to e^-87, 0 below
(tests/test_kernels.py).
"""

from __future__ import annotations

import llvmlite.ir
import numba
import numba.extending
import numpy as np

from leansvm.core.jit import njit

_F = np.float32
#: Cephes' constants (module docstring)
_LOG2E, _LN2_HI, _LN2_LO = _F(1.44269504088896341), _F(0.693359375), _F(-2.12194440e-4)
_EXP_P = (_F(1.9875691500e-4), _F(1.3981999507e-3), _F(8.3334519073e-3), _F(4.1665795894e-2),
          _F(1.6666665459e-1), _F(5.0000001201e-1))
#: below this exponent 0 is stored (e^-87 = 1.6e-38 is near float32's smallest normal number; from
#: it on, k >= -126, so 2^k is a normal number and 2^k e^r its exact scaling)
_EXP_LOW = _F(-87.0)


@numba.extending.intrinsic
def _float32_from_bits(typingctx, bits):
    """The float32 whose IEEE bits are the int32 ``bits`` (a bitcast, which LLVM vectorises)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], llvmlite.ir.FloatType())
    return numba.types.float32(numba.types.int32), codegen


@njit(cache=True, nogil=True, inline="always",
            fastmath={"contract", "nnan", "ninf", "nsz", "arcp", "afn"})
def expf_nonpositive(z):
    """e^z for float32 z <= 0 (module docstring): 0 below -87, else e^r times 2^k."""
    under = z < _EXP_LOW
    z = max(z, _EXP_LOW)
    k = np.int32(z * _LOG2E - _F(0.5))          # round(z log2 e) for z <= 0
    kf = _F(k)
    r = z - kf * _LN2_HI - kf * _LN2_LO
    p0, p1, p2, p3, p4, p5 = _EXP_P
    p = ((((p0 * r + p1) * r + p2) * r + p3) * r + p4) * r + p5
    e = (p * r * r + r + _F(1.0)) * _float32_from_bits((k + np.int32(127)) << 23)
    return _F(0.0) if under else e
