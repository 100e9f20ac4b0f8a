"""``<friction class="default">``: Coulomb-limited wheel friction with axle damping and rolling resistance.

Per wheel, each physics step of length dt (reference §2.3), in the wheel frame (x along the wheel, y lateral):

* load: m = Fz/g + m_wheel, with Fz = chassis_mass·g / n_wheels; Coulomb limit Fmax = mu·m·g.
* lateral: F_lat = clamp(−v_y·m/dt − G_y, ±Fmax) (G: gravity component along the slope).
* longitudinal: desired spin change α* = (v_x/R − ω)/dt; rolling resistance T_rr = C_rr·m·g·R·tanh(100·ω) when
  C_rr > 0 and |ω| > 1e-4; effective torque T = τ_motor − C_damping·ω − T_rr;
  F_lon = clamp((T − I·α*)/R, ±Fmax); wheel spin ω += dt·(T − R·F_lon)/I;
  then F_lon −= clamp(G_x, ±(Fmax − |F_lon|)).
* the force (F_lon, F_lat) is rotated back to the vehicle frame and applied at the contact point.

``mu`` and ``C_rr`` are replaced inside ``friction_mu`` / ``friction_C_rr`` property regions.
"""

from __future__ import annotations

from typing import ClassVar

from mvsim_core.dynamics.friction.base import C_DAMPING, C_RR, MU, FrictionModel
from mvsim_core.xml.params import Param


class DefaultFriction(FrictionModel):
    """Class ``default``: mu 0.8, C_damping 0.01 N·m·s/rad, C_rr 0 (see the module docstring for the model)."""

    xml_class: ClassVar[str] = "default"
    PARAMS: ClassVar[tuple[Param, ...]] = (MU, C_DAMPING, C_RR)

    @property
    def mu(self) -> float:
        """Coulomb friction coefficient."""
        return float(self.params["mu"])
