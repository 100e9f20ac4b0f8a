"""``<controller class="twist_pid">`` (differential vehicles): one PID per wheel on its linear speed.

Setpoints of the wheels: v_L = vx − ω·d/2, v_R = vx + ω·d/2 (d = y_L − y_R of the first two wheels); measured speeds
come from the wheel-odometry velocity estimate, not ground truth. Wheel torque = −PID(error). When both setpoints are
below 0.001 m/s and both wheels below 0.05 m/s, torques are 0 and the PIDs reset; with a zero setpoint but a moving
wheel, the torque may only oppose the motion (reference §1.11).

Each driven wheel's ``k_motor`` is the side's PID slope (∂u/∂error, 0 while the output is clamped) times the wheel
radius: a wheel that slips then follows the loop's own reaction within the step instead of overshooting
(:mod:`mvsim_core.dynamics.friction.slip`).
"""

from __future__ import annotations

from typing import ClassVar

from mvsim_core.dynamics.controllers.base import Family, TwistController
from mvsim_core.dynamics.controllers.pid import LEGACY_IGNORED, Pid, PidConfig, check_pid, pid_params
from mvsim_core.dynamics.controllers.setpoints import TWIST_SETPOINT_PARAMS
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Param


class DifferentialTwistPid(TwistController):
    """``twist_pid``: KP 10, KI 0, KD 0, N 0, max_torque 100 N·m, anti-windup/feedforward/reference filter off;
    ``V`` (m/s) and ``W`` (deg/s) set the initial twist."""

    xml_class: ClassVar[str] = "twist_pid"
    families: ClassVar[tuple[Family, ...]] = (Family.DIFFERENTIAL,)
    PARAMS: ClassVar[tuple[Param, ...]] = (*pid_params(kp=10.0, max_torque=100.0), *TWIST_SETPOINT_PARAMS)
    IGNORED_TAGS: ClassVar[frozenset[str]] = LEGACY_IGNORED

    ZERO_THRESHOLD: ClassVar[float] = 0.001
    """Setpoint speeds below this (m/s) count as zero."""
    STOP_THRESHOLD: ClassVar[float] = 0.05
    """With a zero setpoint, wheel speeds below this (m/s) count as stopped."""

    def _configure(self, ctx: ParseContext) -> None:
        check_pid(self.params, ctx, self.node)
        super()._configure(ctx)
        self.pid = PidConfig.from_params(self.params)

    # ------------------------------------------------------------------ run time
    def control(self, veh, dt: float) -> None:
        """Set the wheel torques of ``veh`` for this step (see the module docstring)."""
        if not hasattr(self, "_pids"):
            self._pids = (Pid(self.pid), Pid(self.pid))
        pl, pr = self._pids
        w0, w1 = veh.wheels[0], veh.wheels[1]
        d = w0.y - w1.y
        sp = self.setpoint
        sp_l = pl.filter_setpoint(sp.vx - 0.5 * sp.omega * d, dt)
        sp_r = pr.filter_setpoint(sp.vx + 0.5 * sp.omega * d, dt)
        vx, _, w = veh.odometry_velocity()
        act_l = vx - 0.5 * w * d
        act_r = vx + 0.5 * w * d
        zt, st = self.ZERO_THRESHOLD, self.STOP_THRESHOLD
        if abs(sp_l) < zt and abs(sp_r) < zt:
            if abs(act_l) < st and abs(act_r) < st:
                pl.reset()
                pr.reset()
                veh.dynamics.set_lr_torques(veh, 0.0, 0.0)
                veh.dynamics.set_lr_feedback(veh, 0.0, 0.0)
                return
            # braking to a stop: the motors may only oppose the motion
            ul = pl.step(sp_l - act_l, dt, sp_l)
            ur = pr.step(sp_r - act_r, dt, sp_r)
            kl = pl.slope if (ul < 0.0 if act_l > 0 else ul > 0.0) else 0.0
            kr = pr.slope if (ur < 0.0 if act_r > 0 else ur > 0.0) else 0.0
            ul = min(ul, 0.0) if act_l > 0 else max(ul, 0.0)
            ur = min(ur, 0.0) if act_r > 0 else max(ur, 0.0)
        else:
            ul = pl.step(sp_l - act_l, dt, sp_l)
            ur = pr.step(sp_r - act_r, dt, sp_r)
            kl, kr = pl.slope, pr.slope
        veh.dynamics.set_lr_torques(veh, -ul, -ur)
        veh.dynamics.set_lr_feedback(veh, kl, kr)

    @property
    def batchable(self) -> bool:
        """Plain PID (no reference filter, feed-forward, derivative filter or anti-windup): runs in the batch."""
        c = self.pid
        return not (c.reference_filter or c.feedforward or c.n > 0.0 or c.antiwindup)
