"""All wheels of all vehicles through their friction models, dispatched on each wheel's model in compiled code.

The per-model laws live in the model modules (:mod:`.default`, :mod:`.wardiagnemma`, :mod:`.ellipse`) as plain
Python, together with the model's kernel id and the columns of its parameters; they are compiled here. This module
only turns a wheel's velocity into the wheel frame, picks the law by the wheel's kernel id, hands it the parameters
from the model's columns and turns the force back into the vehicle frame.

Inputs are the per-wheel table of :class:`mvsim_core.dynamics.wheels.WheelArrays` (one row per quantity, one
column per wheel, rows named in :mod:`mvsim_core.dynamics.wheel_rows`) and the wheels' model ids and
parameter columns. Frames: ``vx, vy`` and the returned forces are in the vehicle frame;
each wheel's frame is the vehicle frame turned by the wheel yaw.
"""

from __future__ import annotations

import math

import numpy as np

from mvsim_core.dynamics.friction import default, ellipse, slip, wardiagnemma
from mvsim_core.dynamics.friction.base import P_CDAMP, P_CRR, P_MU
from mvsim_core.dynamics.friction.ellipse import P_ASAT, P_CALPHA, P_CALPHAS, P_CS, P_CSALPHA, P_SSAT
from mvsim_core.dynamics.friction.wardiagnemma import P_AROLL, P_R1, P_R2
from mvsim_core.dynamics.wheel_rows import FZ, IYY, K_MOTOR, MASS, OMEGA, RADIUS, SLOPE_X, SLOPE_Y, YAW
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
def wheel_friction(i: int, model: np.ndarray, params: np.ndarray, wheels: np.ndarray, vx: float, vy: float,
                   tau: float, g: float, dt: float) -> tuple[float, float]:
    """Friction force on the vehicle (vehicle frame, N) at wheel ``i``; updates its spin, ``wheels[OMEGA, i]``.

    Args:
        i: wheel index.
        model: (W,) int64 kernel id of each wheel's friction model.
        params: (W, FrictionModel.n_columns()) model parameters in the models' columns, with property-region
            overrides applied.
        wheels: (len(ROWS), W) float64 per-wheel table (:attr:`mvsim_core.dynamics.wheels.WheelArrays.table`);
            read here: ``YAW`` wheel yaw in the vehicle frame, steering included (rad); ``RADIUS`` (m), ``MASS``
            (kg), ``IYY`` (kg·m²); ``OMEGA`` spin (rad/s, positive rolls forward; entry ``i`` is updated); ``FZ``
            chassis weight on the wheel (N); ``SLOPE_X``, ``SLOPE_Y`` gravity force along the slope on the wheel,
            vehicle frame (N); ``K_MOTOR`` the controller's feedback on the wheel's spin (N·m·s/rad, see
            :mod:`.slip`).
        vx, vy: velocity of wheel ``i``'s centre in the vehicle frame (m/s).
        tau: motor torque on wheel ``i`` (N·m, positive drives forward).
        g: gravity (m/s²). dt: step (s).
    """
    yaw = wheels[YAW, i]
    c = math.cos(yaw)
    s = math.sin(yaw)
    vwx = c * vx + s * vy
    vwy = -s * vx + c * vy
    gsx = wheels[SLOPE_X, i]
    gsy = wheels[SLOPE_Y, i]
    gwx = c * gsx + s * gsy
    gwy = -s * gsx + c * gsy
    m = wheels[FZ, i] / g + wheels[MASS, i]
    p = params[i]
    mdl = model[i]
    if mdl == ELLIPSE:
        f_lon, f_lat, wheels[OMEGA, i] = ellipse_wheel_force(vwx, vwy, wheels[OMEGA, i], tau, m, g, yaw, p[P_CDAMP],
                                                             p[P_CRR], wheels[RADIUS, i], wheels[IYY, i], gwx, gwy,
                                                             dt, p[P_CS], p[P_CALPHA], p[P_SSAT], p[P_ASAT],
                                                             p[P_CALPHAS], p[P_CSALPHA], wheels[K_MOTOR, i])
    else:
        # default, and wardiagnemma: the default law plus the Ward-Iagnemma rolling resistance
        extra = 0.0
        if mdl == WARDIAGNEMMA:
            extra = ward_iagnemma_resistance(vwx, m, g, p[P_AROLL], p[P_R1], p[P_R2])
        f_lon, f_lat, wheels[OMEGA, i] = default_wheel_force(vwx, vwy, wheels[OMEGA, i], tau, m, g, p[P_MU],
                                                             p[P_CDAMP], p[P_CRR], wheels[RADIUS, i],
                                                             wheels[IYY, i], gwx, gwy, dt, extra,
                                                             wheels[K_MOTOR, i])
    return c * f_lon - s * f_lat, s * f_lon + c * f_lat
