"""All plain ``twist_pid`` differential vehicles of a world, controlled in one compiled call per physics step.

Same law, same arithmetic and order as :meth:`mvsim_core.dynamics.controllers.twist_pid.DifferentialTwistPid.control`
(a test checks the two give bit-identical trajectories); the per-vehicle method remains for the variants the batch
does not cover (reference filter, feed-forward, derivative filter, anti-windup).

The kernel's inputs are packed into a few arrays (per-vehicle constants, wheel indices, PID state, the wheel map):
in a small world the cost of a step's call is mostly that of handing each array over, not the arithmetic.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from mvsim_core.dynamics.controllers.twist_pid import DifferentialTwistPid
from mvsim_core.jit import njit

# columns of TwistPidBatch.consts
C_D, C_RL, C_RR, C_YL, C_KP, C_KI, C_KD, C_MAX = range(8)
# rows of TwistPidBatch.pid (each (K, 2): left, right)
S_INTEG, S_PREV, S_OUT, S_SLOPE = range(4)
# columns of TwistPidBatch.wheel_map
M_WHEEL, M_SLOT, M_SIDE, M_POWERED = range(4)


@njit(cache=True)
def _twist_pid_kernel(sp: np.ndarray, consts: np.ndarray, lr: np.ndarray, omega: np.ndarray, pid: np.ndarray,
                      first: np.ndarray, dt: float, zt: float, st: float, wheel_map: np.ndarray, radius: np.ndarray,
                      torque: np.ndarray, k_motor: np.ndarray) -> None:
    """The law of :meth:`DifferentialTwistPid.control` for K vehicles at once (same arithmetic, same order).

    sp: (K, 2) setpoint (vx m/s, ω rad/s); consts: (K, 8) per vehicle: d = y_L − y_R (m), the radii of the left and
    right wheels (m), y of the left wheel (m), KP, KI, KD, max_torque (columns ``C_*``); lr: (K, 2) int64 wheel
    indices of the left and right wheels; omega: all wheel spins (rad/s); pid: (4, K, 2) the PIDs' integrals,
    previous errors, last outputs (torques, negative forward, N·m) and ∂u/∂error (``Pid.slope``) of the left and
    right sides (rows ``S_*``); first: (K, 2) no derivative yet; zt, st: the zero-setpoint and stop thresholds
    (m/s).

    Then, for each row m of ``wheel_map`` ((M, 4) int64: wheel index, vehicle slot, side 0 left / 1 right, powered
    1/0; columns ``M_*``): that wheel's torque (N·m) and ``k_motor`` (slope × its radius, N·m·s/rad) from its
    vehicle and side, or 0 when it is not powered; written into ``torque`` and ``k_motor``, the world's wheel
    arrays.
    """
    integ, prev, out, slope = pid[S_INTEG], pid[S_PREV], pid[S_OUT], pid[S_SLOPE]
    for k in range(sp.shape[0]):
        d, rl, rr, yl = consts[k, C_D], consts[k, C_RL], consts[k, C_RR], consts[k, C_YL]
        il, ir = lr[k, 0], lr[k, 1]
        w_veh = (omega[ir] * rr - omega[il] * rl) / d
        vx = omega[il] * rl + w_veh * yl
        sps = (sp[k, 0] - 0.5 * sp[k, 1] * d, sp[k, 0] + 0.5 * sp[k, 1] * d)
        acts = (vx - 0.5 * w_veh * d, vx + 0.5 * w_veh * d)
        zero_sp = abs(sps[0]) < zt and abs(sps[1]) < zt
        if zero_sp and abs(acts[0]) < st and abs(acts[1]) < st:
            for j in range(2):
                integ[k, j] = 0.0
                prev[k, j] = 0.0
                first[k, j] = True
                out[k, j] = 0.0
                slope[k, j] = 0.0
            continue
        kp, ki, kd, max_out = consts[k, C_KP], consts[k, C_KI], consts[k, C_KD], consts[k, C_MAX]
        for j in range(2):
            e = sps[j] - acts[j]
            p = kp * e
            sl = kp + ki * dt
            if first[k, j] or dt <= 0.0:
                dd = 0.0
            else:
                dd = kd * (e - prev[k, j]) / dt
                sl += kd / dt
            first[k, j] = False
            prev[k, j] = e
            integ[k, j] += ki * e * dt
            u = p + integ[k, j] + dd
            if max_out > 0.0:
                c = min(max(u, -max_out), max_out)
                if c != u:
                    sl = 0.0
                u = c
            if zero_sp:  # braking to a stop: the motors may only oppose the motion
                if not (u < 0.0 if acts[j] > 0 else u > 0.0):
                    sl = 0.0
                u = min(u, 0.0) if acts[j] > 0 else max(u, 0.0)
            out[k, j] = -u
            slope[k, j] = sl
    for m in range(wheel_map.shape[0]):
        i = wheel_map[m, M_WHEEL]
        if wheel_map[m, M_POWERED]:
            slot, side = wheel_map[m, M_SLOT], wheel_map[m, M_SIDE]
            torque[i] = out[slot, side]
            k_motor[i] = slope[slot, side] * radius[i]
        else:
            torque[i] = 0.0
            k_motor[i] = 0.0


class TwistPidBatch:
    """All batchable ``twist_pid`` vehicles of a world, controlled in one compiled call per step.

    Args:
        members: (vehicle index, vehicle) pairs.
        start: wheel offsets per vehicle (``WheelArrays.start``).
        radius: every wheel's radius (m).

    Attributes (K = number of members): sp: (K, 2) setpoints (each member's controller holds its row);
    consts, lr, wheel_map: what the kernel reads (see :func:`_twist_pid_kernel`); pid: (4, K, 2) the PID state,
    also seen as integ, prev, out, slope ((K, 2) views of its rows); first: (K, 2) bool.
    """

    SNAPSHOT: ClassVar[tuple[str, ...]] = ("sp", "integ", "prev", "first", "out", "slope")
    """The arrays that change while running: setpoints, integrals, previous errors, first-step flags, last outputs
    and slopes (a world snapshot saves them; those of the PID state are views of :attr:`pid`, written in place)."""

    def __init__(self, members: list, start: np.ndarray, radius: np.ndarray) -> None:
        self.members = members
        k = len(members)
        self.sp = np.zeros((k, 2))
        self.consts = np.empty((k, 8))
        self.lr = np.empty((k, 2), dtype=np.int64)
        rows = []
        for j, (vi, veh) in enumerate(members):
            s0 = int(start[vi])
            w0, w1 = veh.wheels[0], veh.wheels[1]
            self.lr[j] = (s0, s0 + 1)
            c = veh.controller
            self.consts[j] = (w0.y - w1.y, radius[s0], radius[s0 + 1], w0.y, c.pid.kp, c.pid.ki, c.pid.kd,
                              c.pid.max_out)
            c.bind_setpoint(self.sp[j])
            for wi, side in enumerate(veh.dynamics.lr_pattern):
                powered = side is not None  # side "l": 0, any other: 1 (right); an unpowered wheel: 0
                rows.append((s0 + wi, j, (0 if side == "l" else 1) if powered else 0, int(powered)))
        self.pid = np.zeros((4, k, 2))
        self.integ, self.prev, self.out, self.slope = (self.pid[r] for r in (S_INTEG, S_PREV, S_OUT, S_SLOPE))
        self.first = np.ones((k, 2), dtype=np.bool_)
        self.wheel_map = np.array(rows, dtype=np.int64).reshape(-1, 4)

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
                self.pid[:, j] = 0.0
                self.first[j] = True

    def run(self, omega: np.ndarray, torque: np.ndarray, k_motor: np.ndarray, radius: np.ndarray, dt: float) -> None:
        """Compute and write the torques (N·m) and ``k_motor`` (N·m·s/rad, slope × wheel radius, as
        :meth:`~mvsim_core.objects.vehicles.base.VehicleDynamics.set_lr_feedback`) of every member's wheels."""
        _twist_pid_kernel(self.sp, self.consts, self.lr, omega, self.pid, self.first, dt,
                          DifferentialTwistPid.ZERO_THRESHOLD, DifferentialTwistPid.STOP_THRESHOLD, self.wheel_map,
                          radius, torque, k_motor)
