"""The pitch of a vehicle whose wheels all sit on one axle (a two-wheel differential robot, issue 16).

MVSim's terrain fit (:meth:`Terrain.fit_vehicles <mvsim_core.dynamics.terrain.Terrain.fit_vehicles>`) needs three
wheel contacts off one line; a robot with one axle gets its wheels' mean height and no pitch, so on a ramp it would
climb level, nose in the slope. Real robots of that kind rest on a caster or skid at each end of the chassis, which
MVSim does not model. Here the two ends of the chassis footprint on the axle's normal (front and rear, at the middle
of the axle) stand for them:

* z and roll come from the two outermost wheels' ground (z at the middle of the axle, roll from their difference);
* the chassis turns about the axle until neither end goes below its ground: the nose-up angle φ obeys
  ``tan φ >= (h_front - z_axle) / (x_front - x_axle)`` and ``tan φ <= (z_axle - h_rear) / (x_axle - x_rear)``; of the
  angles allowed the one nearest level is taken (both bounds are the slope on a ramp, so φ is the slope there). When
  both ends push up (the robot straddles a bump) φ is the mean of the two;
* an end whose ground fell away since the last step by more than the terrain-step height (0.55 wheel diameters),
  or lies farther than that from the axle's ground, is over an edge or against a wall: it is left out, so the robot
  drives off a ledge and does not hang on it.

Frames and units: vehicle frame x forward, y left; world z up; metres and radians. Pitch follows MVSim's sign (a
positive pitch puts the nose down, :mod:`mvsim_core.dynamics.terrain`), so ``pitch = -φ``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

STEP_FACTOR = 0.55
"""Wheel diameters: how far an end's ground may move away from where it was, or from the axle's ground, and still
hold the chassis (the terrain-step height of :mod:`mvsim_core.dynamics.terrain_obstacles`)."""


class ChassisSupports:
    """The one-axle vehicles of a world and the ends of their chassis (built once per physics).

    Attributes:
        rows: indices (into the physics' vehicle arrays) of the vehicles handled here; empty when none.
    """

    def __init__(self, vehicles: Sequence[Any], wheels: Any) -> None:
        """
        Args:
            vehicles: the vehicles in physics order (``chassis.footprint``, vehicle frame, m).
            wheels: their :class:`~mvsim_core.dynamics.wheels.WheelArrays` (``x``, ``y``, ``radius``, ``start``).
        """
        rows, axle, ends, left, right, radius = [], [], [], [], [], []
        for k, v in enumerate(vehicles):
            a, b = int(wheels.start[k]), int(wheels.start[k + 1])
            if b - a < 2:
                continue
            wx, wy = wheels.x[a:b], wheels.y[a:b]
            if np.ptp(wx) > 1e-9 or np.ptp(wy) < 1e-6:
                continue  # not one axle across the vehicle
            fp = np.asarray(v.chassis.footprint, dtype=np.float64).reshape(-1, 2)
            x0 = float(wx[0])
            front, rear = float(fp[:, 0].max()), float(fp[:, 0].min())
            if not (front > x0 + 1e-6 and rear < x0 - 1e-6):
                continue
            rows.append(k)
            axle.append((x0, 0.5 * float(wy.max() + wy.min())))
            ends.append((front, rear))
            left.append(a + int(np.argmax(wy)))
            right.append(a + int(np.argmin(wy)))
            radius.append(float(np.mean(wheels.radius[a:b])))
        self.rows = np.array(rows, dtype=np.int64)
        n = len(rows)
        self._axle = np.array(axle, dtype=np.float64).reshape(n, 2)
        self._ends = np.array(ends, dtype=np.float64).reshape(n, 2)
        self._left = np.array(left, dtype=np.int64)
        self._right = np.array(right, dtype=np.int64)
        self._radius = np.array(radius, dtype=np.float64)
        self._wy = (np.asarray(wheels.y)[self._left] - np.asarray(wheels.y)[self._right]) if n else np.zeros(0)

    def reach(self, n_vehicles: int) -> np.ndarray:
        """(V,) for each vehicle index, the farthest point (m, from the vehicle origin, in its plane) that :meth:`fit`
        asks the ground about: the chassis ends of the one-axle vehicles, 0 for the others."""
        out = np.zeros(n_vehicles)
        if len(self.rows):
            ym = self._axle[:, 1]
            out[self.rows] = np.maximum(np.hypot(self._ends[:, 0], ym), np.hypot(self._ends[:, 1], ym))
        return out

    def fit(self, terrain: Any, state: np.ndarray, z: np.ndarray, pitch: np.ndarray, roll: np.ndarray,
            pitch_prev: np.ndarray | None = None, only: np.ndarray | None = None) -> None:
        """Set z, pitch and roll (m, rad; arrays over all vehicles, changed in place) of the one-axle vehicles.

        Args:
            terrain: the world's :class:`~mvsim_core.dynamics.terrain.Terrain`.
            state: (V, >=3) x, y (m), yaw (rad) of every vehicle.
            z, pitch, roll: (V,) the wheel fit's result (for these vehicles: the wheels' mean ground, 0, 0).
            pitch_prev: (V,) pitch before this step's fit (None: ``pitch``), where the ends were.
            only: (len(rows),) bool: fit only these of the one-axle vehicles (None: all); each vehicle's result
                does not depend on the others'.
        """
        if only is None:
            k, axle, tips, radius, wy = self.rows, self._axle, self._ends, self._radius, self._wy
        else:
            sel = np.flatnonzero(only)
            k, axle, tips, radius, wy = self.rows[sel], self._axle[sel], self._ends[sel], self._radius[sel], \
                self._wy[sel]
        n = len(k)
        if n == 0:
            return
        x, y, yaw = state[k, 0], state[k, 1], state[k, 2]
        c, s = np.cos(yaw), np.sin(yaw)
        x0, ym = axle[:, 0], axle[:, 1]
        half_wy = 0.5 * wy
        # query points, vehicle frame: left wheel, right wheel, front end, rear end (each n rows)
        lx = np.concatenate([x0, x0, tips[:, 0], tips[:, 1]])
        ly = np.concatenate([ym + half_wy, ym - half_wy, ym, ym])
        px = np.tile(x, 4) + np.tile(c, 4) * lx - np.tile(s, 4) * ly
        py = np.tile(y, 4) + np.tile(s, 4) * lx + np.tile(c, 4) * ly
        step = 2.0 * STEP_FACTOR * radius
        zc = z[k]
        tan_prev = -np.tan((pitch if pitch_prev is None else pitch_prev)[k])
        reach = np.concatenate([tips[:, 0] - x0, tips[:, 1] - x0])  # front > 0, rear < 0
        expect = np.tile(zc, 2) + reach * np.tile(tan_prev, 2)  # where the ends were, at this step's axle height
        tilt = np.abs(np.tan(roll[k])) * half_wy
        zq = np.concatenate([zc + tilt + radius, zc + tilt + radius, expect + np.tile(radius, 2)])
        h = terrain.height_at(px, py, zq)
        hl, hr, hf, hb = h[:n], h[n:2 * n], h[2 * n:3 * n], h[3 * n:]
        both = ~(np.isnan(hl) | np.isnan(hr))
        z_axle = np.where(both, 0.5 * (hl + hr), np.where(np.isnan(hl), hr, hl))
        z_axle = np.where(np.isnan(z_axle), zc, z_axle)
        tan_roll = np.where(both, (hl - hr) / np.where(wy > 0, wy, 1.0), 0.0)
        ends = np.concatenate([hf, hb])
        axle2 = np.tile(z_axle, 2)
        with np.errstate(invalid="ignore"):
            bad = (ends < expect - np.tile(step, 2)) | (np.abs(ends - axle2) > np.tile(step, 2))
        ends = np.where(bad, np.nan, ends)
        hf, hb = ends[:n], ends[n:]
        with np.errstate(invalid="ignore"):
            lo = np.where(np.isnan(hf), -np.inf, (hf - z_axle) / reach[:n])
            hi = np.where(np.isnan(hb), np.inf, (z_axle - hb) / -reach[n:])
            tan_phi = np.where(lo <= hi, np.clip(0.0, lo, hi), 0.5 * (lo + hi))
        tan_phi = np.where(np.isfinite(tan_phi), tan_phi, 0.0)
        z[k] = z_axle - x0 * tan_phi - ym * tan_roll
        pitch[k] = -np.arctan(tan_phi)
        roll[k] = np.arctan(tan_roll)
