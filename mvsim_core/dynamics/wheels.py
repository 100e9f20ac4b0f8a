"""Every wheel of every vehicle in flat arrays (structure of arrays), so one call computes them all.

Index ``i`` is one wheel; ``vehicle[i]`` the index of its vehicle in the world's vehicle order; vehicle ``k`` owns
wheels ``start[k]:start[k+1]`` in its dynamics class' wheel order. Frames: wheel positions, yaws and forces are in
the vehicle frame (x forward, y left). Units: m, rad, kg, N, N·m, rad/s.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mvsim_core.dynamics.friction.kernel import (
    N_PARAMS,
    P_AROLL,
    P_ASAT,
    P_CALPHA,
    P_CALPHAS,
    P_CDAMP,
    P_CRR,
    P_CS,
    P_CSALPHA,
    P_MU,
    P_R1,
    P_R2,
    P_SSAT,
)

_PARAM_COLUMNS = {"mu": P_MU, "C_damping": P_CDAMP, "C_rr": P_CRR, "A_roll": P_AROLL, "R1": P_R1, "R2": P_R2,
                  "C_s": P_CS, "C_alpha": P_CALPHA, "slip_ratio_saturation": P_SSAT,
                  "slip_angle_saturation": P_ASAT, "C_alpha_s": P_CALPHAS, "C_s_alpha": P_CSALPHA}


class WheelArrays:
    """Wheel state and parameters of all vehicles.

    Attributes (one entry per wheel unless said otherwise):
        vehicle: vehicle index. start: (n_vehicles + 1,) wheel offsets per vehicle.
        x, y: position in the vehicle frame (m). yaw: wheel yaw incl. steering (rad).
        radius (m), mass (kg), iyy (kg·m²).
        omega: spin (rad/s, positive rolls forward). phi: spin angle (rad).
        torque: controller torque (N·m, negative drives forward, upstream's sign).
        fz: chassis weight carried (N) = chassis_mass·g / n_wheels.
        model: friction model id. base_params: (n, 12) friction parameters as declared; params: the same after
            property-region overrides (``friction_mu`` / ``friction_C_rr``) for this step.
        slope_x, slope_y: gravity force along the slope on each wheel, vehicle frame (N).
        fx, fy: last friction force on the vehicle at each wheel, vehicle frame (N).
    """

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
        self.fz = np.concatenate([np.full(c, v.chassis.mass * gravity / c) for v, c in zip(vehicles, counts,
                                                                                           strict=True)]) \
            if n else np.zeros(0)
        self.model = np.zeros(n, dtype=np.int64)
        self.base_params = np.zeros((n, N_PARAMS))
        for k, v in enumerate(vehicles):
            s, e = self.start[k], self.start[k + 1]
            self.model[s:e] = getattr(v.friction, "model_id", 0)
            for name, col in _PARAM_COLUMNS.items():
                if name in v.friction.params:
                    self.base_params[s:e, col] = float(v.friction.params[name])
        self.params = self.base_params.copy()
        self.slope_x = np.zeros(n)
        self.slope_y = np.zeros(n)
        self.fx = np.zeros(n)
        self.fy = np.zeros(n)
        self.vx = np.zeros(n)
        self.vy = np.zeros(n)
        for k, v in enumerate(vehicles):
            s, e = self.start[k], self.start[k + 1]
            v.attach_wheel_state(self.torque[s:e], self.omega[s:e], self.phi[s:e])

    def sync_yaws(self, k: int, wheels: Sequence) -> None:
        """Copy the (steered) wheel yaws of vehicle ``k`` into the arrays."""
        s = self.start[k]
        for j, w in enumerate(wheels):
            self.yaw[s + j] = w.yaw
