"""``<friction class="default">``: Coulomb-limited wheel friction with axle damping and rolling resistance.

Per wheel, each physics step of length dt (reference §2.3), in the wheel frame (x along the wheel, y lateral):

* load: m = Fz/g + m_wheel, with Fz = chassis_mass·g / n_wheels; Coulomb limit Fmax = mu·m·g.
* lateral: F_lat = clamp(−v_y·m/dt − G_y, ±Fmax) (G: gravity component along the slope).
* longitudinal: desired spin change α* = (v_x/R − ω)/dt; rolling resistance T_rr = C_rr·m·g·R·tanh(100·ω) when
  C_rr > 0 and |ω| > 1e-4; effective torque T = τ_motor − C_damping·ω − T_rr;
  the force that makes the wheel roll at the end of the step F_req = (T − I·α*)/R; while |F_req| ≤ Fmax,
  F_lon = F_req and ω += dt·(T − R·F_lon)/I (upstream's update); beyond, the wheel slips and
  :func:`.slip.slipping_wheel` gives F_lon (±Fmax the way the tread slides) and the exact spin over the step, with
  the controller's feedback ``k_motor`` on this wheel and the axle damping;
  then F_lon −= clamp(G_x, ±(Fmax − |F_lon|)).
* the force (F_lon, F_lat) is rotated back to the vehicle frame and applied at the contact point.

``mu`` and ``C_rr`` are replaced inside ``friction_mu`` / ``friction_C_rr`` property regions. Kernel id 0; its
parameters use the shared columns ``P_MU``, ``P_CDAMP``, ``P_CRR`` of :mod:`.base`.
"""

from __future__ import annotations

import math
from typing import ClassVar

from mvsim_core.dynamics.friction.base import C_DAMPING, C_RR, MU, P_CDAMP, P_CRR, P_MU, FrictionModel
from mvsim_core.dynamics.friction.slip import slipping_wheel
from mvsim_core.xml.params import Param


class DefaultFriction(FrictionModel):
    """Class ``default``: mu 0.8, C_damping 0.01 N·m·s/rad, C_rr 0 (see the module docstring for the model)."""

    xml_class: ClassVar[str] = "default"
    PARAMS: ClassVar[tuple[Param, ...]] = (MU, C_DAMPING, C_RR)
    kernel_id: ClassVar[int] = 0
    COLUMNS: ClassVar[dict[str, int]] = {MU.name: P_MU, C_DAMPING.name: P_CDAMP, C_RR.name: P_CRR}

    @property
    def mu(self) -> float:
        """Coulomb friction coefficient."""
        return float(self.params["mu"])


def default_wheel_force(vwx: float, vwy: float, omega: float, tau: float, m: float, g: float, mu: float,
                        c_damp: float, c_rr: float, radius: float, iyy: float, gsx: float, gsy: float, dt: float,
                        extra_lon: float, k_motor: float) -> tuple[float, float, float]:
    """One wheel of the default model, in the wheel frame (see the module docstring).

    Args:
        vwx, vwy: contact-point velocity in the wheel frame (m/s).
        omega: wheel spin (rad/s, positive rolls forward).
        tau: motor torque on the wheel (N·m, positive drives forward).
        m: load mass on the wheel, Fz/g + wheel mass (kg). g: gravity (m/s²).
        mu, c_damp (N·m·s/rad), c_rr: model parameters. radius (m), iyy (kg·m²): wheel.
        gsx, gsy: gravity force along the slope in the wheel frame (N).
        dt: step (s). extra_lon: a rolling-resistance force (N, Ward-Iagnemma), applied as the axle torque
            R·extra_lon. Upstream adds it to the contact force instead, where it spins the wheel up and cancels
            from the second step on; as a torque it brakes vehicle and wheel as the formula intends.
        k_motor: how much the motor torque drops per rad/s the wheel speeds up (N·m·s/rad, the controller's
            feedback on this wheel's spin; 0 for open-loop torques). Used only while the wheel slips.

    Returns:
        (F_lon, F_lat, new omega): forces in the wheel frame (N) and the spin after the step (rad/s).
    """
    fmax = mu * m * g
    f_lat = -vwy * m / dt - gsy
    f_lat = min(max(f_lat, -fmax), fmax)
    alpha_des = (vwx / radius - omega) / dt
    t_rr = 0.0
    if c_rr > 0.0 and abs(omega) > 1e-4:
        t_rr = c_rr * m * g * radius * math.tanh(100.0 * omega)
    # a rolling-resistance force enters as the axle torque R·F that it is equivalent to, so that it brakes the
    # vehicle and the wheel together (as a force at the contact patch it would spin the wheel up instead)
    t_eff = tau - c_damp * omega - t_rr + radius * extra_lon
    f_lon = (t_eff - iyy * alpha_des) / radius
    if abs(f_lon) <= fmax:  # the wheel rolls at the end of the step
        omega_new = omega + dt * (t_eff - radius * f_lon) / iyy
    else:  # it slips
        f_lon, omega_new = slipping_wheel(omega, vwx, t_eff, k_motor + c_damp, iyy, radius, dt, fmax)
    room = fmax - abs(f_lon)
    f_lon -= min(max(gsx, -room), room)
    return f_lon, f_lat, omega_new
