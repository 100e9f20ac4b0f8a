"""``<controller class="twist_front_steer_pid">`` (Ackermann vehicles): follow a twist by steering + PID on speed.

Steering: δ = atan(L/(v/ω)) (0 when ω = 0), L = wheelbase. Speed (reference §1.11):

* ``ackermann``: two PIDs on the front wheels' longitudinal speeds (desired from the steering kinematics, measured
  from the odometry velocity estimate) give the front torques; rear torques are 0;
* ``ackermann_drivetrain``: one PID on vx (from the odometry estimate) gives the drive torque, split by the
  differentials; its default ``max_torque`` is 400 N·m instead of 100.

Stop logic: setpoint speeds below ``zero_threshold`` count as zero; with a zero setpoint and speeds below
``stop_threshold`` the torque is 0 and the PIDs reset.
"""

from __future__ import annotations

import math
from typing import ClassVar

from mvsim_core.dynamics.controllers.base import Command, Family, TwistController
from mvsim_core.dynamics.controllers.pid import LEGACY_IGNORED, Pid, PidConfig, check_pid, pid_params
from mvsim_core.dynamics.controllers.setpoints import TWIST_SETPOINT_PARAMS
from mvsim_core.dynamics.controllers.steering import front_wheel_pids, steer_from_twist
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Param


class TwistFrontSteerPidController(TwistController):
    """Common base of the ``twist_front_steer_pid`` controllers (not registered itself).

    Attributes:
        pid: PID settings. zero_threshold, stop_threshold: m/s.
    """

    xml_class: ClassVar[str] = "twist_front_steer_pid"
    commands: ClassVar[tuple[Command, ...]] = (Command.TWIST, Command.DRIVE)
    OMEGA_STEP: ClassVar[float] = math.radians(1.0)
    IGNORED_TAGS: ClassVar[frozenset[str]] = LEGACY_IGNORED

    def _configure(self, ctx: ParseContext) -> None:
        check_pid(self.params, ctx, self.node)
        super()._configure(ctx)
        self.pid = PidConfig.from_params(self.params)
        self.zero_threshold = float(self.params["zero_threshold"])
        self.stop_threshold = float(self.params["stop_threshold"])

    # ------------------------------------------------------------------ run time
    def _speed_is_zero(self, veh, dt: float) -> bool:
        """Stop logic: a zero setpoint with the vehicle (nearly) stopped gives zero torque and resets the PIDs."""
        sp = self.setpoint
        if abs(sp.vx) >= self.zero_threshold or abs(sp.omega) >= self.zero_threshold:
            return False
        vx, _, w = veh.odometry_velocity()
        return abs(vx) < self.stop_threshold and abs(w) < self.stop_threshold

    def control(self, veh, dt: float) -> None:
        """Steer from the twist and run the speed PIDs (see the module docstring)."""
        self.follow(veh, dt, self.setpoint.vx, self.setpoint.omega)

    def follow(self, veh, dt: float, vx: float, omega: float, steer: float | None = None) -> None:
        """Follow (vx, ω); ``steer`` overrides the steering angle derived from the twist (front_steer_pid)."""
        dyn = veh.dynamics
        if steer is None:
            steer = steer_from_twist(vx, omega, dyn.wheelbase)
        if not hasattr(self, "_pids"):
            self._pids = (Pid(self.pid), Pid(self.pid))
        if self._speed_is_zero(veh, dt):
            for p in self._pids:
                p.reset()
            dyn.set_drive(veh, 0.0, 0.0, 0.0, 0.0)
        elif self.family is Family.ACKERMANN_DRIVETRAIN:
            ovx, _, _ = veh.odometry_velocity()
            sp = self._pids[0].filter_setpoint(vx, dt)
            u = self._pids[0].step(sp - ovx, dt, sp)
            dyn.set_drive_torque(veh, -u)
        else:
            tfl, tfr = front_wheel_pids(veh, self._pids, vx, omega, steer, dt)
            dyn.set_drive(veh, 0.0, 0.0, tfl, tfr)
        dyn.steer(veh, steer)


class AckermannTwistFrontSteerPid(TwistFrontSteerPidController):
    """``twist_front_steer_pid`` for ``ackermann``: KP 100, KI 0, KD 0, N 0, max_torque 100 N·m,
    zero_threshold 0.001 m/s, stop_threshold 0.05 m/s, filters off; ``V`` (m/s), ``W`` (deg/s)."""

    families: ClassVar[tuple[Family, ...]] = (Family.ACKERMANN,)
    PARAMS: ClassVar[tuple[Param, ...]] = (*pid_params(kp=100.0, max_torque=100.0, thresholds=True),
                                           *TWIST_SETPOINT_PARAMS)


class AckermannDrivetrainTwistFrontSteerPid(TwistFrontSteerPidController):
    """``twist_front_steer_pid`` for ``ackermann_drivetrain``: as for ``ackermann`` but max_torque 400 N·m."""

    families: ClassVar[tuple[Family, ...]] = (Family.ACKERMANN_DRIVETRAIN,)
    PARAMS: ClassVar[tuple[Param, ...]] = (*pid_params(kp=100.0, max_torque=400.0, thresholds=True),
                                           *TWIST_SETPOINT_PARAMS)
