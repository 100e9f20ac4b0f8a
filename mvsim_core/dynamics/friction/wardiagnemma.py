"""``<friction class="wardiagnemma">``: the default model plus Ward & Iagnemma's speed-dependent rolling resistance.

C. C. Ward and K. Iagnemma, "A Dynamic-Model-Based Wheel Slip Detector for Mobile Robots on Outdoor Terrain",
IEEE T-RO 24(4), 2008. Everything is as in :mod:`.default`, plus the rolling resistance (reference §1.11)

    F_rr = −sign(v_x) · m·g · (R1·(1 − exp(−A_roll·|v_x|)) + R2·|v_x|)

with v_x the wheel's longitudinal speed (m/s): R1 is the static part reached quickly (A_roll in s/m sets how
quickly), R2 the part growing linearly with speed (s/m). It acts as the equivalent axle torque R·F_rr, so the
rolling wheel and the vehicle slow down together: a = ΣF_rr / (M + Σ I/R²). (Upstream adds F_rr to the contact
force before the wheel-spin update; there it spins the wheel up and cancels from the second step on.)

Kernel id 1: the kernel adds F_rr (:func:`ward_iagnemma_resistance`) to the law of :mod:`.default`. Columns: the
shared ones of :mod:`.base` plus ``P_AROLL``, ``P_R1``, ``P_R2``.
"""

from __future__ import annotations

import math
from typing import ClassVar

from mvsim_core.dynamics.friction.base import C_DAMPING, C_RR, MU, P_CDAMP, P_CRR, P_MU, FrictionModel
from mvsim_core.xml.params import Kind, Param

# columns of this model's own parameters in the per-wheel parameter matrix (after the shared ones of .base)
P_AROLL, P_R1, P_R2 = 3, 4, 5


class WardIagnemmaFriction(FrictionModel):
    """Class ``wardiagnemma``: mu 0.8, C_damping 0.01, C_rr 0, A_roll 50 s/m, R1 0.0075, R2 0.02 s/m."""

    xml_class: ClassVar[str] = "wardiagnemma"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        MU, C_DAMPING, C_RR,
        Param("A_roll", Kind.FLOAT, 50.0, "s/m", min=0.0, doc="how fast the static rolling resistance builds up"),
        Param("R1", Kind.FLOAT, 0.0075, min=0.0, doc="static rolling resistance coefficient"),
        Param("R2", Kind.FLOAT, 0.02, "s/m", min=0.0, doc="speed-proportional rolling resistance coefficient"),
    )
    kernel_id: ClassVar[int] = 1
    COLUMNS: ClassVar[dict[str, int]] = {MU.name: P_MU, C_DAMPING.name: P_CDAMP, C_RR.name: P_CRR,
                                         "A_roll": P_AROLL, "R1": P_R1, "R2": P_R2}

    @property
    def mu(self) -> float:
        """Coulomb friction coefficient."""
        return float(self.params["mu"])


def ward_iagnemma_resistance(vwx: float, m: float, g: float, a_roll: float, r1: float, r2: float) -> float:
    """F_rr (N) of the module docstring for a wheel moving at vwx (m/s) with load mass m (kg)."""
    if vwx == 0.0:
        return 0.0
    sign = 1.0 if vwx > 0.0 else -1.0
    return -sign * m * g * (r1 * (1.0 - math.exp(-a_roll * abs(vwx))) + r2 * abs(vwx))
