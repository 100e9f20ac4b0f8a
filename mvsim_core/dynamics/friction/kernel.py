"""All wheels of all vehicles through their friction models in one compiled call per physics step.

Inputs are flat float64 arrays with one entry per wheel (structure of arrays, see
:class:`mvsim_core.dynamics.wheels.WheelArrays`); the per-model formulas live in the model modules
(:mod:`.default`, :mod:`.wardiagnemma`, :mod:`.ellipse`). Frames: ``vx, vy`` and the returned forces are in the
vehicle frame; each wheel's frame is the vehicle frame turned by the wheel yaw.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

import mvsim_core.jit  # noqa: F401  (package-wide kernel cache, before any kernel)
from mvsim_core.dynamics.friction import default, ellipse, wardiagnemma

# the model formulas are plain Python in their own modules (readable, importable without numba); compiled here
default_wheel_force = njit(cache=True)(default.default_wheel_force)
ward_iagnemma_resistance = njit(cache=True)(wardiagnemma.ward_iagnemma_resistance)
ellipse_limits = njit(cache=True)(ellipse.ellipse_limits)

# columns of the per-wheel parameter matrix
P_MU, P_CDAMP, P_CRR, P_AROLL, P_R1, P_R2, P_CS, P_CALPHA, P_SSAT, P_ASAT, P_CALPHAS, P_CSALPHA = range(12)
N_PARAMS = 12


@njit(cache=True)
def wheel_friction(i: int, model: np.ndarray, params: np.ndarray, vx: float, vy: float, yaw: np.ndarray,
                   radius: np.ndarray, mass: np.ndarray, iyy: np.ndarray, omega: np.ndarray, tau: float,
                   fz: np.ndarray, gsx: np.ndarray, gsy: np.ndarray, g: float, dt: float) -> tuple[float, float]:
    """Friction force (vehicle frame, N) of wheel ``i`` moving at (vx, vy) (vehicle frame, m/s) under motor torque
    ``tau`` (N·m, positive forward); updates ``omega[i]``.

    Arrays, one entry per wheel: ``model`` int kernel id (0 default, 1 wardiagnemma, 2 ellipse); ``params`` (n, 12)
    model parameters (columns P_*) with property-region overrides applied; ``yaw`` wheel yaw in the vehicle frame,
    steering included (rad); ``radius`` (m), ``mass`` (kg), ``iyy`` (kg·m²); ``omega`` spin (rad/s); ``fz`` chassis
    weight on the wheel (N); ``gsx``, ``gsy`` gravity force along the slope, vehicle frame (N). ``g`` gravity (m/s²),
    ``dt`` step (s).
    """
    c = math.cos(yaw[i])
    s = math.sin(yaw[i])
    vwx = c * vx + s * vy
    vwy = -s * vx + c * vy
    gwx = c * gsx[i] + s * gsy[i]
    gwy = -s * gsx[i] + c * gsy[i]
    m = fz[i] / g + mass[i]
    p = params[i]
    mdl = model[i]
    if mdl == 2:
        fx_max, fy_max = ellipse_limits(vwx, vwy, omega[i], radius[i], fz[i], p[P_CS], p[P_CALPHA], p[P_SSAT],
                                        p[P_ASAT], p[P_CALPHAS], p[P_CSALPHA])
        # the default model with the ellipse limits instead of the Coulomb one
        f_lat = -vwy * m / dt - gwy
        f_lat = min(max(f_lat, -fy_max), fy_max)
        alpha_des = (vwx / radius[i] - omega[i]) / dt
        t_rr = 0.0
        if p[P_CRR] > 0.0 and abs(omega[i]) > 1e-4:
            t_rr = p[P_CRR] * m * g * radius[i] * math.tanh(100.0 * omega[i])
        t_eff = tau - p[P_CDAMP] * omega[i] - t_rr
        f_lon = (t_eff - iyy[i] * alpha_des) / radius[i]
        f_lon = min(max(f_lon, -fx_max), fx_max)
        omega[i] = omega[i] + dt * (t_eff - radius[i] * f_lon) / iyy[i]
        room = max(fx_max - abs(f_lon), 0.0)
        f_lon -= min(max(gwx, -room), room)
    else:
        extra = 0.0
        if mdl == 1:
            extra = ward_iagnemma_resistance(vwx, m, g, p[P_AROLL], p[P_R1], p[P_R2])
        f_lon, f_lat, omega[i] = default_wheel_force(vwx, vwy, omega[i], tau, m, g, p[P_MU], p[P_CDAMP],
                                                     p[P_CRR], radius[i], iyy[i], gwx, gwy, dt, extra)
    return c * f_lon - s * f_lat, s * f_lon + c * f_lat
