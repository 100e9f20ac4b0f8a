"""Compiled per-step kernels over all vehicles and wheels (one call each per physics step).

Shapes: V vehicles, W wheels; ``veh`` (W,) gives each wheel's vehicle; ``wheels`` is the (len(ROWS), W) per-wheel
table of :class:`~mvsim_core.dynamics.wheels.WheelArrays`, read by its row indices. Frames as in :mod:`.physics`.
"""

from __future__ import annotations

import math

import numpy as np

from mvsim_core.dynamics.friction.kernel import wheel_friction
from mvsim_core.dynamics.wheel_rows import FX, FY, SLOPE_X, SLOPE_Y, TORQUE, VX, VY, X, Y
from mvsim_core.jit import njit, prange


@njit(cache=True, inline="always")
def _wheel_force(i: int, k: int, twist: np.ndarray, model: np.ndarray, params: np.ndarray, wheels: np.ndarray,
                 g: float, dt: float) -> tuple[float, float, float, float]:
    """Wheel ``i`` of vehicle ``k``: its velocity and friction force written to its ``VX``, ``VY``, ``FX``, ``FY``
    rows (see :func:`vehicle_forces`); returns its position (x, y; m, vehicle frame) and force (N)."""
    x = wheels[X, i]
    y = wheels[Y, i]
    vx = twist[k, 0] - twist[k, 2] * y
    vy = twist[k, 1] + twist[k, 2] * x
    wheels[VX, i] = vx
    wheels[VY, i] = vy
    fx, fy = wheel_friction(i, model, params, wheels, vx, vy, -wheels[TORQUE, i], g, dt)
    wheels[FX, i] = fx
    wheels[FY, i] = fy
    return x, y, fx, fy


@njit(cache=True)
def vehicle_forces(twist: np.ndarray, yaw_v: np.ndarray, com: np.ndarray, passive: np.ndarray, veh: np.ndarray,
                   model: np.ndarray, params: np.ndarray, wheels: np.ndarray, g: float, dt: float, out: np.ndarray,
                   bad: np.ndarray) -> int:
    """Friction at every wheel and the resulting force and torque on every vehicle; returns how many vehicles got a
    force or torque that is not finite (their row of ``out`` is zeroed and ``bad`` set: Box2D never sees it).

    Each wheel pushes the vehicle with its friction force plus the gravity component along the slope (``SLOPE_X``,
    ``SLOPE_Y``); on a slope at rest the two cancel, which keeps parked vehicles in place.

    Args:
        twist: (V, 3) body-frame (vx, vy, ω) of each reference point. yaw_v: (V,) vehicle yaw (rad).
        com: (V, 2) centre of mass in the vehicle frame (m). passive: (V,) true where no force is applied
            (ideal controllers impose the twist instead).
        veh, model, params: per wheel, see :class:`mvsim_core.dynamics.wheels.WheelArrays` (``vehicle``,
            ``model``, ``params``).
        wheels: (len(ROWS), W) per-wheel table (:attr:`~mvsim_core.dynamics.wheels.WheelArrays.table`, rows named
            in :mod:`mvsim_core.dynamics.wheel_rows`). Read: ``X``, ``Y`` (m, vehicle frame), ``TORQUE`` (controller
            torque, negative drives forward), ``SLOPE_X``, ``SLOPE_Y`` and what
            :func:`~mvsim_core.dynamics.friction.kernel.wheel_friction` reads; written: ``OMEGA`` (updated),
            ``VX``, ``VY``, ``FX``, ``FY`` (velocity (m/s) and friction force (N) of each wheel, vehicle frame).
        g: gravity (m/s²). dt: step (s).
        out: (V, 3) output: world-frame force (N) at the COM and torque about it (N·m).
        bad: (V,) set to True for each vehicle whose force or torque is NaN/inf (left as it is for the others).
    """
    out[:, :] = 0.0
    for i in range(veh.shape[0]):
        k = veh[i]
        x, y, fx, fy = _wheel_force(i, k, twist, model, params, wheels, g, dt)
        if passive[k]:
            continue
        # friction plus the gravity component along the slope, both applied at the wheel
        fx += wheels[SLOPE_X, i]
        fy += wheels[SLOPE_Y, i]
        out[k, 0] += fx
        out[k, 1] += fy
        out[k, 2] += (x - com[k, 0]) * fy - (y - com[k, 1]) * fx
    n_bad = 0
    for k in range(out.shape[0]):
        c = math.cos(yaw_v[k])
        s = math.sin(yaw_v[k])
        fx = out[k, 0]
        out[k, 0] = c * fx - s * out[k, 1]
        out[k, 1] = s * fx + c * out[k, 1]
        if not (math.isfinite(out[k, 0]) and math.isfinite(out[k, 1]) and math.isfinite(out[k, 2])):
            out[k, 0] = 0.0
            out[k, 1] = 0.0
            out[k, 2] = 0.0
            bad[k] = True
            n_bad += 1
    return n_bad


@njit(cache=True, parallel=True)
def vehicle_forces_threaded(twist: np.ndarray, yaw_v: np.ndarray, com: np.ndarray, passive: np.ndarray,
                            start: np.ndarray, model: np.ndarray, params: np.ndarray, wheels: np.ndarray, g: float,
                            dt: float, out: np.ndarray, bad: np.ndarray) -> int:
    """:func:`vehicle_forces` on numba's threads, vehicles shared among them (``prange``): vehicle ``k``'s wheels are
    ``start[k]:start[k + 1]`` (:attr:`~mvsim_core.dynamics.wheels.WheelArrays.start`), summed in the same order as
    the one-thread kernel sums them, so the results are bit-identical. Arguments, outputs and return as there
    (``start`` instead of ``veh``)."""
    n_bad = 0
    for k in prange(out.shape[0]):
        ox = 0.0
        oy = 0.0
        oz = 0.0
        for i in range(start[k], start[k + 1]):
            x, y, fx, fy = _wheel_force(i, k, twist, model, params, wheels, g, dt)
            if passive[k]:
                continue
            fx += wheels[SLOPE_X, i]
            fy += wheels[SLOPE_Y, i]
            ox += fx
            oy += fy
            oz += (x - com[k, 0]) * fy - (y - com[k, 1]) * fx
        c = math.cos(yaw_v[k])
        s = math.sin(yaw_v[k])
        fwx = c * ox - s * oy
        fwy = s * ox + c * oy
        if math.isfinite(fwx) and math.isfinite(fwy) and math.isfinite(oz):
            out[k, 0] = fwx
            out[k, 1] = fwy
            out[k, 2] = oz
        else:
            out[k, 0] = 0.0
            out[k, 1] = 0.0
            out[k, 2] = 0.0
            bad[k] = True
            n_bad += 1
    return n_bad


@njit(cache=True, inline="always")
def _ran_away(state: np.ndarray, k: int, runaway: float) -> bool:
    """Whether vehicle ``k``'s state row is NaN/inf or faster than ``runaway`` (m/s, rad/s): see :func:`post_update`."""
    for j in range(6):
        v = state[k, j]
        if not math.isfinite(v) or (j >= 3 and abs(v) > runaway):
            return True
    return False


@njit(cache=True, inline="always")
def _twist_and_odometry(state: np.ndarray, twist: np.ndarray, prev: np.ndarray, odo: np.ndarray, mult: np.ndarray,
                        k: int) -> None:
    """Vehicle ``k``'s body-frame twist from its state, and its noisy odometry advanced by the pose increment since
    ``prev`` (then set to the pose): see :func:`post_update`."""
    two_pi = 2.0 * math.pi
    a = state[k, 2]
    c = math.cos(a)
    s = math.sin(a)
    twist[k, 0] = c * state[k, 3] + s * state[k, 4]
    twist[k, 1] = -s * state[k, 3] + c * state[k, 4]
    twist[k, 2] = state[k, 5]
    dxw = state[k, 0] - prev[k, 0]
    dyw = state[k, 1] - prev[k, 1]
    cp = math.cos(prev[k, 2])
    sp = math.sin(prev[k, 2])
    dx = (cp * dxw + sp * dyw) * mult[k, 0]
    dy = (-sp * dxw + cp * dyw) * mult[k, 1]
    dyaw = ((a - prev[k, 2] + math.pi) % two_pi - math.pi) * mult[k, 2]
    co = math.cos(odo[k, 2])
    so = math.sin(odo[k, 2])
    odo[k, 0] += co * dx - so * dy
    odo[k, 1] += so * dx + co * dy
    odo[k, 2] = (odo[k, 2] + dyaw + math.pi) % two_pi - math.pi
    prev[k, 0] = state[k, 0]
    prev[k, 1] = state[k, 1]
    prev[k, 2] = a


@njit(cache=True, inline="always")
def _spin(phi: np.ndarray, omega: np.ndarray, i: int, dt: float) -> None:
    """Wheel ``i``'s spin angle advanced by ``omega[i]·dt`` (rad), wrapped past 1e4 keeping its sign (C fmod)."""
    phi[i] += omega[i] * dt
    if abs(phi[i]) > 1e4:  # keep precision
        phi[i] = math.copysign(abs(phi[i]) % (2.0 * math.pi), phi[i])


@njit(cache=True)
def post_update(state: np.ndarray, twist: np.ndarray, prev: np.ndarray, odo: np.ndarray, mult: np.ndarray,
                omega: np.ndarray, phi: np.ndarray, wveh: np.ndarray, dt: float, runaway: float,
                bad: np.ndarray) -> int:
    """After Box2D: body-frame twists, wheel spin angles, noisy odometry, and the check for blow-ups.

    A vehicle is bad when ``bad`` says so already (a non-finite force, see :func:`vehicle_forces`), when its state is
    NaN/inf or faster than ``runaway`` (m/s or rad/s), or when one of its wheels (``wveh``: each wheel's vehicle)
    spins at NaN/inf; ``bad`` is set for it and its twist, odometry and previous pose (``prev``, then its last
    finite pose) are left as they were. Returns how many vehicles are bad.

    Odometry: (dx, dy, dyaw) = pose increment in the previous pose's frame, times the multipliers, composed onto
    the odometry pose.
    """
    for i in range(omega.shape[0]):
        if not math.isfinite(omega[i]):
            bad[wveh[i]] = True
    n_bad = 0
    for k in range(state.shape[0]):
        if not bad[k] and _ran_away(state, k, runaway):
            bad[k] = True
        if bad[k]:
            n_bad += 1
            continue
        _twist_and_odometry(state, twist, prev, odo, mult, k)
    for i in range(omega.shape[0]):
        if bad[wveh[i]]:
            continue
        _spin(phi, omega, i, dt)
    return n_bad


@njit(cache=True, parallel=True)
def post_update_threaded(state: np.ndarray, twist: np.ndarray, prev: np.ndarray, odo: np.ndarray, mult: np.ndarray,
                         omega: np.ndarray, phi: np.ndarray, start: np.ndarray, dt: float, runaway: float,
                         bad: np.ndarray) -> int:
    """:func:`post_update` on numba's threads, vehicles shared among them (``prange``), each with its wheels
    ``start[k]:start[k + 1]`` (:attr:`~mvsim_core.dynamics.wheels.WheelArrays.start`): the same arithmetic per
    vehicle and wheel, so the results are bit-identical. Arguments and return as there (``start`` instead of
    ``wveh``)."""
    n_bad = 0
    for k in prange(state.shape[0]):
        for i in range(start[k], start[k + 1]):
            if not math.isfinite(omega[i]):
                bad[k] = True
        if not bad[k] and _ran_away(state, k, runaway):
            bad[k] = True
        if bad[k]:
            n_bad += 1
            continue
        _twist_and_odometry(state, twist, prev, odo, mult, k)
        for i in range(start[k], start[k + 1]):
            _spin(phi, omega, i, dt)
    return n_bad


@njit(cache=True)
def _max_nan(a: float, b: float) -> float:
    """``max`` that returns NaN when either is NaN, as ``np.maximum`` does."""
    return a if (a > b or math.isnan(a)) else b


@njit(cache=True)
def level_vehicles(x: np.ndarray, y: np.ndarray, z: np.ndarray, pitch: np.ndarray, roll: np.ndarray, z0: float,
                   rects: np.ndarray, reach: np.ndarray, tf: np.ndarray, box: np.ndarray, out: np.ndarray) -> int:
    """out[k] = vehicle k rests level at the ground's height ``z0`` (z == z0, pitch == roll == 0), every point within
    ``reach[k]`` (m) of its origin lies over one of the planes ``rects`` (P, 4: x_min, x_max, y_min, y_max, world
    frame; P = 0 for the implicit floor, everywhere) and out of reach of every block (poses ``tf`` (B, 9) and
    footprint boxes ``box`` (B, 4) of :meth:`~mvsim_core.dynamics.terrain.Terrain.block_boxes`). Returns how many
    are. Frames and units: world, m, rad."""
    count = 0
    for k in range(x.shape[0]):
        lv = z[k] == z0 and pitch[k] == 0.0 and roll[k] == 0.0
        if lv and rects.shape[0] > 0:
            lv = False
            for r in range(rects.shape[0]):
                if (x[k] - reach[k] >= rects[r, 0] and x[k] + reach[k] <= rects[r, 1]
                        and y[k] - reach[k] >= rects[r, 2] and y[k] + reach[k] <= rects[r, 3]):
                    lv = True
                    break
        if lv:
            r2 = reach[k] * reach[k]
            for b in range(box.shape[0]):
                # the vehicle's origin in the block's frame; the points the fit asks about lie within reach of it
                dx, dy = x[k] - tf[b, 0], y[k] - tf[b, 1]
                lx = tf[b, 3] * dx + tf[b, 4] * dy - tf[b, 5] * tf[b, 2]
                ly = tf[b, 6] * dx + tf[b, 7] * dy - tf[b, 8] * tf[b, 2]
                gx = _max_nan(_max_nan(box[b, 0] - lx, lx - box[b, 1]), 0.0)
                gy = _max_nan(_max_nan(box[b, 2] - ly, ly - box[b, 3]), 0.0)
                if not gx * gx + gy * gy > r2:
                    lv = False
                    break
        out[k] = lv
        count += lv
    return count
