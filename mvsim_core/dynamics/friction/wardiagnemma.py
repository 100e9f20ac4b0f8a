"""``<friction class="wardiagnemma">``: the default model plus Ward & Iagnemma's speed-dependent rolling resistance.

C. C. Ward and K. Iagnemma, "A Dynamic-Model-Based Wheel Slip Detector for Mobile Robots on Outdoor Terrain",
IEEE T-RO 24(4), 2008. Everything is as in :mod:`.default`, and before clamping to ±mu·m·g the longitudinal force
gets the extra resistance (reference §1.11)

    F_rr = −sign(v_x) · m·g · (R1·(1 − exp(−A_roll·|v_x|)) + R2·|v_x|)

with v_x the wheel's longitudinal speed (m/s): R1 is the static part reached quickly (A_roll in s/m sets how
quickly), R2 the part growing linearly with speed (s/m).
"""

from __future__ import annotations

from typing import ClassVar

from mvsim_core.dynamics.friction.base import C_DAMPING, C_RR, MU, FrictionModel
from mvsim_core.xml.params import Kind, Param


class WardIagnemmaFriction(FrictionModel):
    """Class ``wardiagnemma``: mu 0.8, C_damping 0.01, C_rr 0, A_roll 50 s/m, R1 0.0075, R2 0.02 s/m."""

    xml_class: ClassVar[str] = "wardiagnemma"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        MU, C_DAMPING, C_RR,
        Param("A_roll", Kind.FLOAT, 50.0, "s/m", min=0.0, doc="how fast the static rolling resistance builds up"),
        Param("R1", Kind.FLOAT, 0.0075, min=0.0, doc="static rolling resistance coefficient"),
        Param("R2", Kind.FLOAT, 0.02, "s/m", min=0.0, doc="speed-proportional rolling resistance coefficient"),
    )

    @property
    def mu(self) -> float:
        """Coulomb friction coefficient."""
        return float(self.params["mu"])
