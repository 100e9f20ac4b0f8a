"""``<friction class="ellipse">``: tyre forces from slip angle and slip ratio, coupled by a friction ellipse.

Per wheel (reference §2.3), with v the contact-point velocity in the wheel frame (m/s), δ the wheel's yaw in the
vehicle frame (rad), ω the wheel spin (rad/s) and R the wheel radius (m), as the C++ MVSim 1.2.0 engine computes it
(its ``jackal_ellipse_B`` recording is matched to 5 mm over 9 s):

* slip angle α = δ − atan2(v_y, v_x) wrapped into [−π, π) (the heading counts as 0 when |v_x|, |v_y| ≤ 1e-3), and
  δ + π − atan2(...) when that is beyond ±π/2. The sign is the opposite of the textbook one, and δ is subtracted
  although v is already in the wheel frame: upstream's formula, kept;
* slip ratio s = clamp((u − v_x)/|u|, ±1), u = ω·R, or +1e-5 m/s when |ω| ≤ 1e-5 rad/s;
* saturation sat(x, x_s) = clamp(x, ±x_s) with α_s = ``slip_angle_saturation`` (rad), s_s = ``slip_ratio_saturation``;
* signed force limits (N; Fz = the wheel's whole load, its own weight included):
  Fx_max = Fz·C_s·sat(s, s_s)·sqrt(1 − C_s_alpha·(sat(α, α_s)/α_s)²),
  Fy_max = Fz·C_alpha·sat(α, α_s)·sqrt(1 − C_alpha_s·(sat(s, s_s)/s_s)²);
* the longitudinal and lateral forces of the default model are clamped to [−L, L] with these limits L instead of
  mu·m·g, evaluated as min(max(F, −L), L): when L < 0 the force is L itself (upstream's ``std::clamp`` with its
  bounds swapped, as GCC evaluates it). Axle damping and rolling resistance as in :mod:`.default`; the slope force
  takes what is left of Fx_max, by the same clamp;
* except when the wheel slips: when the slip ratio is at or beyond ``slip_ratio_saturation`` (the tyre past its
  linear range), or the force that would make the wheel roll, F_req = (T − I·α*)/R, is beyond |Fx_max|. Then the
  longitudinal force and the spin come from :func:`.slip.slipping_wheel` with the limit |Fx_max| (the force pushes
  the way the tread slides; the wheel spins the way its torque turns it), and what is left of |Fx_max| holds the
  slope force (a wheel at rest counts here: its floored tread speed makes the slip ratio ±1).
  Upstream's signed clamp there pushes the chassis forwards with a wheel slower than the ground, so that a braking
  Jackal on ice never stops, and its explicit spin update freezes a driven one, as in the default model.

There is no ``mu``: ``friction_mu`` property regions do not affect this model (``friction_C_rr`` does). Kernel id 2;
columns: ``P_CDAMP``, ``P_CRR`` of :mod:`.base` plus ``P_CS`` ... ``P_CSALPHA`` below.
"""

from __future__ import annotations

import math
from typing import ClassVar

from mvsim_core.dynamics.friction.base import C_DAMPING, C_RR, P_CDAMP, P_CRR, FrictionModel
from mvsim_core.dynamics.friction.slip import slipping_wheel
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Kind, Param

# columns of this model's own parameters in the per-wheel parameter matrix (after those of .wardiagnemma)
P_CS, P_CALPHA, P_SSAT, P_ASAT, P_CALPHAS, P_CSALPHA = 6, 7, 8, 9, 10, 11


class EllipseFriction(FrictionModel):
    """Class ``ellipse``: C_damping 0.01, C_rr 0, C_s 7.5, C_alpha 8.5, slip_angle_saturation 0.1 rad,
    slip_ratio_saturation 0.1, C_alpha_s 0.5, C_s_alpha 0.5 (coupling coefficients in [0, 1])."""

    xml_class: ClassVar[str] = "ellipse"
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
    kernel_id: ClassVar[int] = 2
    COLUMNS: ClassVar[dict[str, int]] = {C_DAMPING.name: P_CDAMP, C_RR.name: P_CRR, "C_s": P_CS, "C_alpha": P_CALPHA,
                                         "slip_ratio_saturation": P_SSAT, "slip_angle_saturation": P_ASAT,
                                         "C_alpha_s": P_CALPHAS, "C_s_alpha": P_CSALPHA}

    def _validate(self, ctx: ParseContext) -> None:
        for name in ("C_alpha_s", "C_s_alpha"):
            v = float(self.params[name])
            if v > 1.0:
                raise ctx.error(self.where(name), f"<{name}> must be between 0 and 1 (got {v:g}); above 1 the "
                                                  f"friction ellipse takes the square root of a negative number")


def ellipse_wheel_force(vwx: float, vwy: float, omega: float, tau: float, m: float, g: float, delta: float,
                        c_damp: float, c_rr: float, radius: float, iyy: float, gsx: float, gsy: float, dt: float,
                        c_s: float, c_alpha: float, s_sat: float, a_sat: float, c_alpha_s: float,
                        c_s_alpha: float, k_motor: float) -> tuple[float, float, float]:
    """One wheel of the ellipse model, in the wheel frame (see the module docstring).

    Args:
        vwx, vwy: contact-point velocity in the wheel frame (m/s).
        omega: wheel spin (rad/s, positive rolls forward).
        tau: motor torque on the wheel (N·m, positive drives forward).
        m: load mass on the wheel, Fz/g + wheel mass (kg). g: gravity (m/s²).
        delta: the wheel's yaw in the vehicle frame, steering included (rad).
        c_damp (N·m·s/rad), c_rr: axle damping and rolling resistance. radius (m), iyy (kg·m²): wheel.
        gsx, gsy: gravity force along the slope in the wheel frame (N).
        dt: step (s).
        c_s, c_alpha (1/rad), s_sat, a_sat (rad), c_alpha_s, c_s_alpha: the ellipse parameters.
        k_motor: the controller's feedback on this wheel's spin (N·m·s/rad), used only while the wheel slips (see
            :func:`.default.default_wheel_force`).

    Returns:
        (F_lon, F_lat, new omega): forces in the wheel frame (N) and the spin after the step (rad/s).
    """
    fz_wheel = m * g  # the wheel's whole load, its own weight included (upstream's "Fz" in this model)
    # slip angle as upstream 1.2.0 computes it: the wheel heading minus the direction of the contact velocity,
    # although that velocity is already in the wheel frame (so a steered wheel's angle counts twice), folded by π
    heading = math.atan2(vwy, vwx) if (abs(vwx) > 1e-3 or abs(vwy) > 1e-3) else 0.0
    alpha = (delta - heading + math.pi) % (2.0 * math.pi) - math.pi  # wrapped into [-π, π)
    if abs(alpha) > 0.5 * math.pi:
        alpha = (delta - heading) % (2.0 * math.pi) - math.pi
    # slip ratio: the ground speed of the tread floored at +1e-5 m/s when the wheel is (almost) still
    wr = omega * radius if abs(omega) > 1e-5 else 1e-5
    s = min(max((wr - vwx) / abs(wr), -1.0), 1.0)
    sat_a = min(max(alpha, -a_sat), a_sat)
    sat_s = min(max(s, -s_sat), s_sat)
    sa = sat_a / a_sat
    ss = sat_s / s_sat
    # signed limits: negative when the slip is; clamping to [-L, L] with L < 0 gives L itself (upstream's
    # std::clamp with its bounds swapped, as GCC's libstdc++ evaluates it), a force that follows the slip
    fx_max = fz_wheel * c_s * sat_s * math.sqrt(1.0 - c_s_alpha * sa * sa)
    fy_max = fz_wheel * c_alpha * sat_a * math.sqrt(1.0 - c_alpha_s * ss * ss)
    f_lat = min(max(-vwy * m / dt - gsy, -fy_max), fy_max)
    alpha_des = (vwx / radius - omega) / dt
    t_rr = 0.0
    if c_rr > 0.0 and abs(omega) > 1e-4:
        t_rr = c_rr * fz_wheel * radius * math.tanh(100.0 * omega)
    t_eff = tau - c_damp * omega - t_rr
    f_req = (t_eff - iyy * alpha_des) / radius
    if abs(f_req) <= abs(fx_max) and abs(s) < s_sat:  # upstream's clamp and update
        f_lon = min(max(f_req, -fx_max), fx_max)
        omega_new = omega + dt * (t_eff - radius * f_lon) / iyy
        room = fx_max - abs(f_lon)  # may be negative: then the same swapped clamp applies
    else:  # the wheel slips (or, at rest, its slip ratio is the floored ±1): the force within |Fx_max|
        f_lon, omega_new = slipping_wheel(omega, vwx, t_eff, k_motor + c_damp, iyy, radius, dt, abs(fx_max))
        room = abs(fx_max) - abs(f_lon)  # what it leaves holds the slope force, as in the default model
    f_lon -= min(max(gsx, -room), room)
    return f_lon, f_lat, omega_new
