"""``<friction class="ellipse">``: tyre forces from slip angle and slip ratio, coupled by a friction ellipse.

Per wheel (reference §2.3), with v the contact-point velocity in the vehicle frame and R the wheel radius:

* slip angle α = angle between atan2(v_y, v_x) and the wheel heading (folded by π when beyond ±π/2);
* slip ratio s = clamp((ω·R − v_x)/|ω·R|, ±1), |ω·R| floored at 1e-5;
* saturation sat(x, x_s) = clamp(x, ±x_s) with α_s = ``slip_angle_saturation`` (rad), s_s = ``slip_ratio_saturation``;
* force limits (Fz = wheel load, N):
  Fx_max = Fz·C_s·sat(s, s_s)·sqrt(1 − C_s_alpha·(sat(α, α_s)/α_s)²),
  Fy_max = Fz·C_alpha·sat(α, α_s)·sqrt(1 − C_alpha_s·(sat(s, s_s)/s_s)²);
* the longitudinal and lateral forces of the default model are clamped to these limits; axle damping and rolling
  resistance as in :mod:`.default`.

There is no ``mu``: ``friction_mu`` property regions do not affect this model (``friction_C_rr`` does).
"""

from __future__ import annotations

import math
from typing import ClassVar

from mvsim_core.dynamics.friction.base import C_DAMPING, C_RR, FrictionModel
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Kind, Param


class EllipseFriction(FrictionModel):
    """Class ``ellipse``: C_damping 0.01, C_rr 0, C_s 7.5, C_alpha 8.5, slip_angle_saturation 0.1 rad,
    slip_ratio_saturation 0.1, C_alpha_s 0.5, C_s_alpha 0.5 (coupling coefficients in [0, 1])."""

    xml_class: ClassVar[str] = "ellipse"
    has_mu: ClassVar[bool] = False
    PARAMS: ClassVar[tuple[Param, ...]] = (
        C_DAMPING, C_RR,
        Param("C_s", Kind.FLOAT, 7.5, min=0.0, doc="longitudinal stiffness coefficient (per unit slip ratio)"),
        Param("C_alpha", Kind.FLOAT, 8.5, "1/rad", min=0.0, doc="cornering stiffness coefficient (per rad)"),
        Param("slip_angle_saturation", Kind.FLOAT, 0.1, "rad", positive=True,
              doc="slip angle beyond which the lateral force stops growing (radians, not degrees)"),
        Param("slip_ratio_saturation", Kind.FLOAT, 0.1, positive=True,
              doc="slip ratio beyond which the longitudinal force stops growing"),
        Param("C_alpha_s", Kind.FLOAT, 0.5, min=0.0, doc="how much longitudinal slip reduces the lateral force"),
        Param("C_s_alpha", Kind.FLOAT, 0.5, min=0.0, doc="how much slip angle reduces the longitudinal force"),
    )

    def _validate(self, ctx: ParseContext) -> None:
        for name in ("C_alpha_s", "C_s_alpha"):
            v = float(self.params[name])
            if v > 1.0:
                raise ctx.error(self.where(name), f"<{name}> must be between 0 and 1 (got {v:g}); above 1 the "
                                                  f"friction ellipse takes the square root of a negative number")

    model_id: ClassVar[int] = 2


def ellipse_limits(vwx: float, vwy: float, omega: float, radius: float, fz: float, c_s: float, c_alpha: float,
                   s_sat: float, a_sat: float, c_alpha_s: float, c_s_alpha: float) -> tuple[float, float]:
    """(|Fx_max|, |Fy_max|) in N from slip ratio and slip angle (module docstring), wheel-frame velocities in m/s."""
    alpha = math.atan2(vwy, vwx) if (vwx != 0.0 or vwy != 0.0) else 0.0
    if alpha > 0.5 * math.pi:
        alpha -= math.pi
    elif alpha < -0.5 * math.pi:
        alpha += math.pi
    wr = omega * radius
    den = max(abs(wr), 1e-5)
    s = min(max((wr - vwx) / den, -1.0), 1.0)
    sat_a = min(max(alpha, -a_sat), a_sat)  # sat(α, α_s)
    sat_s = min(max(s, -s_sat), s_sat)      # sat(s, s_s)
    sa = sat_a / a_sat
    ss = sat_s / s_sat
    fx = fz * c_s * abs(sat_s) * math.sqrt(max(0.0, 1.0 - c_s_alpha * sa * sa))
    fy = fz * c_alpha * abs(sat_a) * math.sqrt(max(0.0, 1.0 - c_alpha_s * ss * ss))
    return fx, fy
