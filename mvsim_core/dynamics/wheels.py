"""Every wheel of every vehicle in flat arrays (structure of arrays), so one call computes them all.

Index ``i`` is one wheel; ``vehicle[i]`` the index of its vehicle in the world's vehicle order; vehicle ``k`` owns
wheels ``start[k]:start[k+1]`` in its dynamics class' wheel order. Frames: wheel positions, yaws and forces are in
the vehicle frame (x forward, y left). Units: m, rad, kg, N, N·m, rad/s.

The per-wheel float quantities are the rows of one (len(ROWS), W) float64 table, :attr:`WheelArrays.table`, so that a
kernel takes them all as one argument and reads ``table[OMEGA, i]`` (rows named in :mod:`.wheel_rows`); row ``r``
holds the quantity ``ROWS[r]``, and the attribute of that name (``omega``, ``x``, ...) is a view of that row
(contiguous). Write into the rows (``w.omega[:] = ...``), never rebind the attributes: the kernels, the vehicles
(``Vehicle.attach_wheel_state`` gets slices of rows) and the snapshots (:data:`WheelArrays.SNAPSHOT`, restored in
place) all use the one table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from mvsim_core.dynamics import wheel_rows as rows
from mvsim_core.dynamics.friction import FrictionModel


class WheelArrays:
    """Wheel state and parameters of all vehicles.

    Attributes (one entry per wheel unless said otherwise):
        vehicle: vehicle index. start: (n_vehicles + 1,) wheel offsets per vehicle.
        x, y: position in the vehicle frame (m). yaw: wheel yaw incl. steering (rad).
        radius (m), mass (kg), iyy (kg·m²).
        omega: spin (rad/s, positive rolls forward). phi: spin angle (rad).
        torque: controller torque (N·m, negative drives forward, upstream's sign).
        k_motor: how much the controller's torque on the wheel drops per rad/s the wheel speeds up (N·m·s/rad, ≥ 0),
            set by speed controllers whose feedback is that wheel's spin; it steadies a slipping wheel
            (:mod:`mvsim_core.dynamics.friction.slip`).
        fz: chassis weight carried (N) = chassis_mass·g / n_wheels.
        model: kernel id of the vehicle's friction model (``FrictionModel.kernel_id``).
        has_mu: whether that model has ``mu`` (and so ``friction_mu`` property regions override it).
        base_params: (n, FrictionModel.n_columns()) friction parameters as declared, each in its model's column
            (``FrictionModel.COLUMNS``; columns of other models' parameters are 0); params: the same after
            property-region overrides (``friction_mu`` / ``friction_C_rr``) for this step.
        slope_x, slope_y: gravity force along the slope on each wheel, vehicle frame (N).
        fx, fy: last friction force on the vehicle at each wheel, vehicle frame (N).
        vx, vy: last velocity of each wheel centre, vehicle frame (m/s).
        table: (len(ROWS), n) float64, the per-wheel floats above as rows (``x`` … ``vy``, in the order of
            :data:`~mvsim_core.dynamics.wheel_rows.ROWS`); their attributes are views of these rows.
    """

    SNAPSHOT: ClassVar[tuple[str, ...]] = ("omega", "phi", "torque", "k_motor", "fz", "slope_x", "slope_y", "fx", "fy",
                                           "vx", "vy", "yaw", "params")
    """The arrays that change while running (a world snapshot saves them)."""

    def __init__(self, vehicles: Sequence, gravity: float) -> None:
        counts = [len(v.wheels) for v in vehicles]
        self.start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        n = int(self.start[-1])
        self.n = n
        self.vehicle = np.repeat(np.arange(len(vehicles)), counts).astype(np.int64)
        wheels = [w for v in vehicles for w in v.wheels]
        self.table = np.zeros((len(rows.ROWS), n), dtype=np.float64)
        t = self.table
        self.x, self.y, self.yaw = t[rows.X], t[rows.Y], t[rows.YAW]
        self.radius, self.mass, self.iyy = t[rows.RADIUS], t[rows.MASS], t[rows.IYY]
        self.omega, self.phi, self.torque, self.k_motor = t[rows.OMEGA], t[rows.PHI], t[rows.TORQUE], t[rows.K_MOTOR]
        self.fz, self.slope_x, self.slope_y = t[rows.FZ], t[rows.SLOPE_X], t[rows.SLOPE_Y]
        self.fx, self.fy, self.vx, self.vy = t[rows.FX], t[rows.FY], t[rows.VX], t[rows.VY]
        self.x[:] = [w.x for w in wheels]
        self.y[:] = [w.y for w in wheels]
        self.yaw[:] = [w.yaw for w in wheels]
        self.radius[:] = [w.radius for w in wheels]
        self.mass[:] = [w.mass for w in wheels]
        self.iyy[:] = [w.inertia for w in wheels]
        if n:
            self.fz[:] = np.concatenate([np.full(c, v.chassis.mass * gravity / c) for v, c in zip(vehicles, counts,
                                                                                                 strict=True)])
        self.model = np.zeros(n, dtype=np.int64)
        self.has_mu = np.zeros(n, dtype=np.bool_)
        self.base_params = np.zeros((n, FrictionModel.n_columns()))
        for k, v in enumerate(vehicles):
            s, e = self.start[k], self.start[k + 1]
            self.model[s:e] = v.friction.kernel_id
            self.has_mu[s:e] = v.friction.has_mu
            v.friction.fill_columns(self.base_params[s:e])
        self.params = self.base_params.copy()
        for k, v in enumerate(vehicles):
            s, e = self.start[k], self.start[k + 1]
            v.attach_wheel_state(self.torque[s:e], self.omega[s:e], self.phi[s:e], self.k_motor[s:e])

    def sync_yaws(self, k: int, wheels: Sequence) -> None:
        """Copy the (steered) wheel yaws of vehicle ``k`` into the arrays."""
        s = self.start[k]
        for j, w in enumerate(wheels):
            self.yaw[s + j] = w.yaw
