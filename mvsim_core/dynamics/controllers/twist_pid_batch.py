"""All plain ``twist_pid`` differential vehicles of a world, controlled in one compiled call per physics step.

Same law, same arithmetic and order as :meth:`mvsim_core.dynamics.controllers.twist_pid.DifferentialTwistPid.control`
(a test checks the two give bit-identical trajectories); the per-vehicle method remains for the variants the batch
does not cover (reference filter, feed-forward, derivative filter, anti-windup).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from mvsim_core.dynamics.controllers.twist_pid import DifferentialTwistPid
from mvsim_core.jit import njit


@njit(cache=True)
def _twist_pid_kernel(sp: np.ndarray, d: np.ndarray, il: np.ndarray, ir: np.ndarray, rl: np.ndarray,
                      rr: np.ndarray, yl: np.ndarray, omega: np.ndarray, gains: np.ndarray, integ: np.ndarray,
                      prev: np.ndarray, first: np.ndarray, dt: float, zt: float, st: float, out: np.ndarray,
                      slope: np.ndarray, wheel_ids: np.ndarray, powered: np.ndarray, slot: np.ndarray,
                      side: np.ndarray, radius: np.ndarray, torque: np.ndarray, k_motor: np.ndarray) -> None:
    """The law of :meth:`DifferentialTwistPid.control` for K vehicles at once (same arithmetic, same order).

    sp: (K, 2) setpoint (vx, ω); d: (K,) y_L − y_R; il, ir: wheel indices of the left/right wheels; rl, rr: their
    radii; yl: y of the left wheel; omega: all wheel spins; gains: (K, 4) KP, KI, KD, max_torque; integ, prev:
    (K, 2) PID integrals and previous errors; first: (K, 2) no derivative yet; out: (K, 2) torques (negative
    forward) of the left and right sides; slope: (K, 2) their PIDs' ∂u/∂error (``Pid.slope``).

    Then, for each member wheel ``wheel_ids[m]``: its torque (N·m) and ``k_motor`` (slope × its radius, N·m·s/rad)
    from its vehicle ``slot[m]`` and side ``side[m]`` (0 left, 1 right), or 0 when it is not ``powered[m]``; written
    into ``torque`` and ``k_motor``, the world's wheel arrays.
    """
    for k in range(sp.shape[0]):
        w_veh = (omega[ir[k]] * rr[k] - omega[il[k]] * rl[k]) / d[k]
        vx = omega[il[k]] * rl[k] + w_veh * yl[k]
        sps = (sp[k, 0] - 0.5 * sp[k, 1] * d[k], sp[k, 0] + 0.5 * sp[k, 1] * d[k])
        acts = (vx - 0.5 * w_veh * d[k], vx + 0.5 * w_veh * d[k])
        zero_sp = abs(sps[0]) < zt and abs(sps[1]) < zt
        if zero_sp and abs(acts[0]) < st and abs(acts[1]) < st:
            for j in range(2):
                integ[k, j] = 0.0
                prev[k, j] = 0.0
                first[k, j] = True
                out[k, j] = 0.0
                slope[k, j] = 0.0
            continue
        for j in range(2):
            e = sps[j] - acts[j]
            p = gains[k, 0] * e
            sl = gains[k, 0] + gains[k, 1] * dt
            if first[k, j] or dt <= 0.0:
                dd = 0.0
            else:
                dd = gains[k, 2] * (e - prev[k, j]) / dt
                sl += gains[k, 2] / dt
            first[k, j] = False
            prev[k, j] = e
            integ[k, j] += gains[k, 1] * e * dt
            u = p + integ[k, j] + dd
            if gains[k, 3] > 0.0:
                c = min(max(u, -gains[k, 3]), gains[k, 3])
                if c != u:
                    sl = 0.0
                u = c
            if zero_sp:  # braking to a stop: the motors may only oppose the motion
                if not (u < 0.0 if acts[j] > 0 else u > 0.0):
                    sl = 0.0
                u = min(u, 0.0) if acts[j] > 0 else max(u, 0.0)
            out[k, j] = -u
            slope[k, j] = sl
    for m in range(wheel_ids.shape[0]):
        i = wheel_ids[m]
        if powered[m]:
            torque[i] = out[slot[m], side[m]]
            k_motor[i] = slope[slot[m], side[m]] * radius[i]
        else:
            torque[i] = 0.0
            k_motor[i] = 0.0


class TwistPidBatch:
    """All batchable ``twist_pid`` vehicles of a world, controlled in one compiled call per step.

    Args:
        members: (vehicle index, vehicle) pairs.
        start: wheel offsets per vehicle (``WheelArrays.start``).
    """

    SNAPSHOT: ClassVar[tuple[str, ...]] = ("sp", "integ", "prev", "first", "out", "slope")
    """The arrays that change while running: setpoints, integrals, previous errors, first-step flags, last outputs
    and slopes (a world snapshot saves them)."""

    def __init__(self, members: list, start: np.ndarray, radius: np.ndarray) -> None:
        self.members = members
        k = len(members)
        self.sp = np.zeros((k, 2))
        self.d = np.empty(k)
        self.il = np.empty(k, dtype=np.int64)
        self.ir = np.empty(k, dtype=np.int64)
        self.yl = np.empty(k)
        self.gains = np.empty((k, 4))
        wheel_ids, sides, slots = [], [], []
        for j, (vi, veh) in enumerate(members):
            s0 = int(start[vi])
            w0, w1 = veh.wheels[0], veh.wheels[1]
            self.d[j] = w0.y - w1.y
            self.il[j], self.ir[j] = s0, s0 + 1
            self.yl[j] = w0.y
            c = veh.controller
            self.gains[j] = (c.pid.kp, c.pid.ki, c.pid.kd, c.pid.max_out)
            c.bind_setpoint(self.sp[j])
            for wi, side in enumerate(veh.dynamics.lr_pattern):
                wheel_ids.append(s0 + wi)
                sides.append(-1 if side is None else (0 if side == "l" else 1))
                slots.append(j)
        self.rl = radius[self.il].copy()
        self.rr = radius[self.ir].copy()
        self.integ = np.zeros((k, 2))
        self.prev = np.zeros((k, 2))
        self.first = np.ones((k, 2), dtype=np.bool_)
        self.out = np.zeros((k, 2))
        self.slope = np.zeros((k, 2))
        self.wheel_ids = np.array(wheel_ids, dtype=np.int64)
        sides_a = np.array(sides, dtype=np.int64)
        self.powered = sides_a >= 0
        self.slot = np.array(slots, dtype=np.int64)
        self.side = np.where(self.powered, sides_a, 0)

    def carry_over(self, old: TwistPidBatch) -> None:
        """Take the PID state (integrals, previous errors, first-step flags) of every vehicle that was a member of
        ``old`` (the batch before the physics was rebuilt for a spawn or removal)."""
        slot = {id(veh): j for j, (_, veh) in enumerate(old.members)}
        for j, (_, veh) in enumerate(self.members):
            i = slot.get(id(veh))
            if i is not None:
                self.integ[j], self.prev[j], self.first[j] = old.integ[i], old.prev[i], old.first[i]

    def reset_member(self, vehicle_index: int) -> None:
        """Clear the PID state (integrals, previous errors) of the member at this vehicle index, if it is one (a
        vehicle reset after a blow-up)."""
        for j, (vi, _) in enumerate(self.members):
            if vi == vehicle_index:
                self.integ[j] = 0.0
                self.prev[j] = 0.0
                self.first[j] = True
                self.out[j] = 0.0
                self.slope[j] = 0.0

    def run(self, omega: np.ndarray, torque: np.ndarray, k_motor: np.ndarray, radius: np.ndarray, dt: float) -> None:
        """Compute and write the torques (N·m) and ``k_motor`` (N·m·s/rad, slope × wheel radius, as
        :meth:`~mvsim_core.objects.vehicles.base.VehicleDynamics.set_lr_feedback`) of every member's wheels."""
        _twist_pid_kernel(self.sp, self.d, self.il, self.ir, self.rl, self.rr, self.yl, omega, self.gains,
                          self.integ, self.prev, self.first, dt, DifferentialTwistPid.ZERO_THRESHOLD,
                          DifferentialTwistPid.STOP_THRESHOLD, self.out, self.slope, self.wheel_ids, self.powered,
                          self.slot, self.side, radius, torque, k_motor)
