"""``<controller class="front_steer_pid">`` (Ackermann vehicles): speed + steering-angle commands.

The command (v, δ) is turned into the twist (v, ω = v·tan(δ)/L), L = wheelbase, which the family's
``twist_front_steer_pid`` then follows with these gains; the steering angle is applied as commanded (reference
§1.11). It takes drive commands (speed, steering angle); twist commands are refused.
"""

from __future__ import annotations

import math
from typing import ClassVar

from mvsim_core.dynamics.controllers.base import Command, Controller, Family, Twist2D
from mvsim_core.dynamics.controllers.pid import LEGACY_IGNORED, PidConfig, gain_params
from mvsim_core.dynamics.controllers.setpoints import STEER_ANG, V
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Param


class FrontSteerPid(Controller):
    """``front_steer_pid``: KP 100, KI 0, KD 0, max_torque 100 N·m; ``V`` (m/s) and ``STEER_ANG`` (degrees written,
    rad stored) are the initial commands.

    Attributes:
        speed: commanded forward speed (m/s).
        steer_angle: commanded steering angle (rad).
        pid: the gains handed to the inner twist controller.
    """

    xml_class: ClassVar[str] = "front_steer_pid"
    families: ClassVar[tuple[Family, ...]] = (Family.ACKERMANN, Family.ACKERMANN_DRIVETRAIN)
    commands: ClassVar[tuple[Command, ...]] = (Command.DRIVE,)
    steering: ClassVar[bool] = True
    PARAMS: ClassVar[tuple[Param, ...]] = (*gain_params(kp=100.0, max_torque=100.0), V, STEER_ANG)
    IGNORED_TAGS: ClassVar[frozenset[str]] = LEGACY_IGNORED

    def _configure(self, ctx: ParseContext) -> None:
        self.speed = float(self.params["V"])
        self.steer_angle = float(self.params["STEER_ANG"])
        self.pid = PidConfig.from_params(self.params)

    def drive(self, speed: float, steer: float, wheelbase: float | None = None) -> None:
        """Command a forward speed (m/s) and a steering angle (rad, as given: the control law clamps it to the
        vehicle's maximum); ``wheelbase`` is not needed.

        Raises:
            CommandValueError: a NaN or infinite value (the last good command stays); an integer too large for a
                float counts as infinite.
            ArgumentTypeError: a value that is no number (nothing changes).
            ArgumentValueError: a wheelbase that is not finite and > 0.
        """
        speed, steer = self._real("drive", "speed", speed), self._real("drive", "steer", steer)
        self._wheelbase(wheelbase)  # not needed, but refused when it is no length
        self._finite(("speed", speed), ("steer", steer))
        self.speed = speed
        self.steer_angle = steer

    def set_command(self, speed: float, steer_angle: float) -> None:
        """Command a forward speed (m/s) and a steering angle (rad); same as :meth:`drive`.

        Raises:
            CommandValueError, ArgumentTypeError: as :meth:`drive` (the angle named ``steer``).
        """
        self.drive(speed, steer_angle)

    def stop(self) -> None:
        """Speed 0, keeping the steering angle."""
        self.drive(0.0, self.steer_angle)

    def summary(self) -> str:
        return (f"{self.xml_class} ({self.family.value}, v={self.speed:g} m/s, "
                f"steer={math.degrees(self.steer_angle):g}°)")

    # ------------------------------------------------------------------ run time
    def control(self, veh, dt: float) -> None:
        """Turn (speed, steering) into the twist (v, v·tan(δ)/L) and follow it with the twist PID of the family."""
        if not hasattr(self, "_inner"):
            from mvsim_core.dynamics.controllers.twist_front_steer_pid import TwistFrontSteerPidController

            inner = Controller.lookup(self.family, "twist_front_steer_pid")
            assert inner is not None and issubclass(inner, TwistFrontSteerPidController)
            obj = inner.__new__(inner)
            obj.family = self.family
            obj.params = self.params
            obj.node = self.node
            obj.pid = self.pid
            obj.zero_threshold = 0.001
            obj.stop_threshold = 0.05
            self._inner = obj
        dyn = veh.dynamics
        steer = max(-dyn.max_steer, min(dyn.max_steer, self.steer_angle))
        omega = self.speed * math.tan(steer) / dyn.wheelbase
        self._inner.setpoint = Twist2D(self.speed, 0.0, omega)
        self._inner.follow(veh, dt, self.speed, omega, steer)
