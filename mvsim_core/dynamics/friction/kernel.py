"""All wheels of all vehicles through their friction models, dispatched on each wheel's model in compiled code.

The per-model laws live in the model modules (:mod:`.default`, :mod:`.wardiagnemma`, :mod:`.ellipse`) as plain
Python, together with the model's kernel id and the columns of its parameters; they are compiled here. This module
only turns a wheel's velocity into the wheel frame, picks the law by the wheel's kernel id, hands it the parameters
from the model's columns and turns the force back into the vehicle frame.

Inputs are flat float64 arrays with one entry per wheel (structure of arrays, see
:class:`mvsim_core.dynamics.wheels.WheelArrays`). Frames: ``vx, vy`` and the returned forces are in the vehicle frame;
each wheel's frame is the vehicle frame turned by the wheel yaw.
"""

from __future__ import annotations

import math

import numpy as np

from mvsim_core.dynamics.friction import default, ellipse, slip, wardiagnemma
from mvsim_core.dynamics.friction.base import P_CDAMP, P_CRR, P_MU
from mvsim_core.dynamics.friction.ellipse import P_ASAT, P_CALPHA, P_CALPHAS, P_CS, P_CSALPHA, P_SSAT
from mvsim_core.dynamics.friction.wardiagnemma import P_AROLL, P_R1, P_R2
from mvsim_core.jit import jitable, njit

# the laws call it: made callable from compiled code here, so that loading a world (which imports the model modules
# for their parameters) does not import numba
jitable(slip.slipping_wheel)
default_wheel_force = njit(cache=True)(default.default_wheel_force)
ward_iagnemma_resistance = njit(cache=True)(wardiagnemma.ward_iagnemma_resistance)
ellipse_wheel_force = njit(cache=True)(ellipse.ellipse_wheel_force)

# kernel ids the dispatch branches on (compile-time constants); every other id, the default model's included, gets
# the default law
WARDIAGNEMMA = wardiagnemma.WardIagnemmaFriction.kernel_id
ELLIPSE = ellipse.EllipseFriction.kernel_id


@njit(cache=True)
def wheel_friction(i: int, model: np.ndarray, params: np.ndarray, vx: float, vy: float, yaw: np.ndarray,
                   radius: np.ndarray, mass: np.ndarray, iyy: np.ndarray, omega: np.ndarray, tau: float,
                   fz: np.ndarray, gsx: np.ndarray, gsy: np.ndarray, g: float, dt: float,
                   k_motor: np.ndarray) -> tuple[float, float]:
    """Friction force on the vehicle (vehicle frame, N) at wheel ``i``; updates ``omega[i]``.

    Args:
        i: wheel index.
        model: (W,) int64 kernel id of each wheel's friction model.
        params: (W, FrictionModel.n_columns()) model parameters in the models' columns, with property-region
            overrides applied.
        vx, vy: velocity of wheel ``i``'s centre in the vehicle frame (m/s).
        yaw: (W,) wheel yaw in the vehicle frame, steering included (rad).
        radius (m), mass (kg), iyy (kg·m²): (W,) wheel properties.
        omega: (W,) wheel spin (rad/s, positive rolls forward); entry ``i`` is updated.
        tau: motor torque on wheel ``i`` (N·m, positive drives forward).
        fz: (W,) chassis weight on each wheel (N).
        gsx, gsy: (W,) gravity force along the slope on each wheel, vehicle frame (N).
        g: gravity (m/s²). dt: step (s).
        k_motor: (W,) the controllers' feedback on each wheel's spin (N·m·s/rad, see :mod:`.slip`).
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
    if mdl == ELLIPSE:
        f_lon, f_lat, omega[i] = ellipse_wheel_force(vwx, vwy, omega[i], tau, m, g, yaw[i], p[P_CDAMP], p[P_CRR],
                                                     radius[i], iyy[i], gwx, gwy, dt, p[P_CS], p[P_CALPHA],
                                                     p[P_SSAT], p[P_ASAT], p[P_CALPHAS], p[P_CSALPHA], k_motor[i])
    else:
        # default, and wardiagnemma: the default law plus the Ward-Iagnemma rolling resistance
        extra = 0.0
        if mdl == WARDIAGNEMMA:
            extra = ward_iagnemma_resistance(vwx, m, g, p[P_AROLL], p[P_R1], p[P_R2])
        f_lon, f_lat, omega[i] = default_wheel_force(vwx, vwy, omega[i], tau, m, g, p[P_MU], p[P_CDAMP],
                                                     p[P_CRR], radius[i], iyy[i], gwx, gwy, dt, extra,
                                                     k_motor[i])
    return c * f_lon - s * f_lat, s * f_lon + c * f_lat
