"""``<controller class="raw">``: torques (and steering) set directly, no feedback (reference §1.11).

The default controller of every vehicle. It refuses twist commands. Per family:

* differential: left/right wheel torques, both 0 at start (the GUI changes them by ±0.05 N·m per key press);
* ackermann: ``fl_torque``, ``fr_torque`` (N·m, front-wheel drive) and ``steer_ang_deg`` (written in degrees);
* ackermann_drivetrain: ``torque`` (N·m, into the drivetrain) and ``steer_ang_deg``.

Negative torque drives the vehicle forward.
"""

from __future__ import annotations

import math
from typing import ClassVar

from mvsim_core.dynamics.controllers.base import Controller, Family
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Kind, Param

STEER_ANG_DEG = Param("steer_ang_deg", Kind.ANGLE, 0.0, "rad", doc="steering angle; written in degrees")


class RawController(Controller):
    """Common base of the ``raw`` controllers (not registered itself)."""

    xml_class: ClassVar[str] = "raw"


class DifferentialRaw(RawController):
    """``raw`` for differential vehicles: no parameters; ``torque_l``/``torque_r`` (N·m) start at 0."""

    families: ClassVar[tuple[Family, ...]] = (Family.DIFFERENTIAL,)

    def _configure(self, ctx: ParseContext) -> None:
        self.torque_l = 0.0
        self.torque_r = 0.0

    def control(self, veh, dt: float) -> None:
        """Apply the stored left/right torques."""
        veh.dynamics.set_lr_torques(veh, self.torque_l, self.torque_r)


class AckermannRaw(RawController):
    """``raw`` for Ackermann vehicles: ``fl_torque``, ``fr_torque`` (N·m, default 0), ``steer_ang_deg`` (0°)."""

    families: ClassVar[tuple[Family, ...]] = (Family.ACKERMANN,)
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("fl_torque", Kind.FLOAT, 0.0, "N·m", doc="front-left wheel torque"),
        Param("fr_torque", Kind.FLOAT, 0.0, "N·m", doc="front-right wheel torque"),
        STEER_ANG_DEG,
    )

    def _configure(self, ctx: ParseContext) -> None:
        self.torque_fl = float(self.params["fl_torque"])
        self.torque_fr = float(self.params["fr_torque"])
        self.steer_angle = float(self.params["steer_ang_deg"])

    def control(self, veh, dt: float) -> None:
        """Front-wheel torques and the steering angle as stored."""
        veh.dynamics.set_drive(veh, 0.0, 0.0, self.torque_fl, self.torque_fr)
        veh.dynamics.steer(veh, self.steer_angle)

    def summary(self) -> str:
        return (f"raw ({self.family.value}, τ_fl={self.torque_fl:g} N·m, τ_fr={self.torque_fr:g} N·m, "
                f"steer={math.degrees(self.steer_angle):g}°)")


class AckermannDrivetrainRaw(RawController):
    """``raw`` for Ackermann-drivetrain vehicles: ``torque`` (N·m into the drivetrain, 0), ``steer_ang_deg`` (0°)."""

    families: ClassVar[tuple[Family, ...]] = (Family.ACKERMANN_DRIVETRAIN,)
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("torque", Kind.FLOAT, 0.0, "N·m", doc="drive torque, split by the differentials"),
        STEER_ANG_DEG,
    )

    def _configure(self, ctx: ParseContext) -> None:
        self.torque = float(self.params["torque"])
        self.steer_angle = float(self.params["steer_ang_deg"])

    def control(self, veh, dt: float) -> None:
        """The stored drive torque through the drivetrain, and the steering angle."""
        veh.dynamics.set_drive_torque(veh, self.torque)
        veh.dynamics.steer(veh, self.steer_angle)

    def summary(self) -> str:
        return (f"raw ({self.family.value}, τ={self.torque:g} N·m, "
                f"steer={math.degrees(self.steer_angle):g}°)")

