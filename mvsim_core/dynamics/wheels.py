"""Every wheel of every vehicle in flat arrays (structure of arrays), so one call computes them all.

Index ``i`` is one wheel; ``vehicle[i]`` the index of its vehicle in the world's vehicle order; vehicle ``k`` owns
wheels ``start[k]:start[k+1]`` in its dynamics class' wheel order. Frames: wheel positions, yaws and forces are in
the vehicle frame (x forward, y left). Units: m, rad, kg, N, N·m, rad/s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

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
        self.x = np.array([w.x for w in wheels], dtype=np.float64)
        self.y = np.array([w.y for w in wheels], dtype=np.float64)
        self.yaw = np.array([w.yaw for w in wheels], dtype=np.float64)
        self.radius = np.array([w.radius for w in wheels], dtype=np.float64)
        self.mass = np.array([w.mass for w in wheels], dtype=np.float64)
        self.iyy = np.array([w.inertia for w in wheels], dtype=np.float64)
        self.omega = np.zeros(n)
        self.phi = np.zeros(n)
        self.torque = np.zeros(n)
        self.k_motor = np.zeros(n)
        self.fz = np.concatenate([np.full(c, v.chassis.mass * gravity / c) for v, c in zip(vehicles, counts,
                                                                                           strict=True)]) \
            if n else np.zeros(0)
        self.model = np.zeros(n, dtype=np.int64)
        self.has_mu = np.zeros(n, dtype=np.bool_)
        self.base_params = np.zeros((n, FrictionModel.n_columns()))
        for k, v in enumerate(vehicles):
            s, e = self.start[k], self.start[k + 1]
            self.model[s:e] = v.friction.kernel_id
            self.has_mu[s:e] = v.friction.has_mu
            v.friction.fill_columns(self.base_params[s:e])
        self.params = self.base_params.copy()
        self.slope_x = np.zeros(n)
        self.slope_y = np.zeros(n)
        self.fx = np.zeros(n)
        self.fy = np.zeros(n)
        self.vx = np.zeros(n)
        self.vy = np.zeros(n)
        for k, v in enumerate(vehicles):
            s, e = self.start[k], self.start[k + 1]
            v.attach_wheel_state(self.torque[s:e], self.omega[s:e], self.phi[s:e], self.k_motor[s:e])

    def sync_yaws(self, k: int, wheels: Sequence) -> None:
        """Copy the (steered) wheel yaws of vehicle ``k`` into the arrays."""
        s = self.start[k]
        for j, w in enumerate(wheels):
            self.yaw[s + j] = w.yaw
