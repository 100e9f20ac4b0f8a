"""``<controller class="twist_pid">`` (differential vehicles): one PID per wheel on its linear speed.

Setpoints of the wheels: v_L = vx − ω·d/2, v_R = vx + ω·d/2 (d = y_L − y_R of the first two wheels); measured speeds
come from the wheel-odometry velocity estimate, not ground truth. Wheel torque = −PID(error). When both setpoints are
below 0.001 m/s and both wheels below 0.05 m/s, torques are 0 and the PIDs reset; with a zero setpoint but a moving
wheel, the torque may only oppose the motion (reference §1.11).
"""

from __future__ import annotations

from typing import ClassVar

from mvsim_core.dynamics.controllers.base import Family, TwistController
from mvsim_core.dynamics.controllers.pid import LEGACY_IGNORED, PidConfig, check_pid, pid_params
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
