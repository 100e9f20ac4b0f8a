"""``<controller class="raw">``: torques (and steering) set directly, no feedback (reference §1.11).

The default controller of every vehicle. It takes raw torque commands (:meth:`RawController.set_torques`) and
refuses twist and drive commands. Per family:

* differential: left/right wheel torques, both 0 at start (the GUI changes them by ±0.05 N·m per key press);
* ackermann: ``fl_torque``, ``fr_torque`` (N·m, front-wheel drive) and ``steer_ang_deg`` (written in degrees);
* ackermann_drivetrain: ``torque`` (N·m, into the drivetrain) and ``steer_ang_deg``.

Negative torque drives the vehicle forward.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from mvsim_core import arguments as arg
from mvsim_core.dynamics.controllers.base import Command, Controller, Family
from mvsim_core.errors import ControllerError
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Kind, Param

STEER_ANG_DEG = Param("steer_ang_deg", Kind.ANGLE, 0.0, "rad", doc="steering angle; written in degrees")


class RawController(Controller):
    """Common base of the ``raw`` controllers (not registered itself).

    Class attributes:
        TORQUE_NAMES: what each entry of :attr:`torques` drives, in order.
    """

    xml_class: ClassVar[str] = "raw"
    commands: ClassVar[tuple[Command, ...]] = (Command.TORQUES,)
    TORQUE_NAMES: ClassVar[tuple[str, ...]] = ()
    TORQUE_STEP: ClassVar[float] = 1.0

    @property
    def torques(self) -> tuple[float, ...]:
        """The commanded torques (N·m), in the order of ``TORQUE_NAMES``."""
        raise NotImplementedError

    def _store(self, torques: tuple[float, ...]) -> None:
        raise NotImplementedError

    def set_torques(self, torques: Sequence[float], steer: float | None = None) -> None:
        """Command the torques (N·m, negative drives forward; one per ``TORQUE_NAMES``) and, for steering vehicles,
        the steering angle (rad; None keeps it).

        Raises:
            ControllerError: a wrong number of torques, or a steering angle for a vehicle that does not steer.
            CommandValueError: a NaN or infinite value (the last good command stays); an integer too large for a
                float counts as infinite.
            ArgumentTypeError: ``torques`` is no sequence of numbers, ``steer`` no number (nothing changes).
        """
        values = arg.reals("set_torques", "torques", torques, owner=self._owner())
        steer = arg.optional_real("set_torques", "steer", steer, self._owner())
        self._finite(*((f"torques[{i}]", v) for i, v in enumerate(values)),
                     *((("steer", steer),) if steer is not None else ()))
        if len(values) != len(self.TORQUE_NAMES):
            raise ControllerError(f'controller "raw" ({self.family.value}) takes {len(self.TORQUE_NAMES)} torques '
                                  f'({", ".join(self.TORQUE_NAMES)}), got {len(values)}')
        if steer is not None and not self.steering:
            raise ControllerError(f'controller "raw" ({self.family.value}) has no steering angle')
        self._store(values)
        if steer is not None:
            self.steer_angle = float(steer)

    def stop(self) -> None:
        """Zero torques, keeping the steering angle."""
        self.set_torques((0.0,) * len(self.TORQUE_NAMES))


class DifferentialRaw(RawController):
    """``raw`` for differential vehicles: no parameters; ``torque_l``/``torque_r`` (N·m) start at 0."""

    families: ClassVar[tuple[Family, ...]] = (Family.DIFFERENTIAL,)
    TORQUE_NAMES: ClassVar[tuple[str, ...]] = ("left", "right")
    TORQUE_STEP: ClassVar[float] = 0.05

    def _configure(self, ctx: ParseContext) -> None:
        self.torque_l = 0.0
        self.torque_r = 0.0

    @property
    def torques(self) -> tuple[float, float]:
        return (self.torque_l, self.torque_r)

    def _store(self, torques: tuple[float, ...]) -> None:
        self.torque_l, self.torque_r = torques

    def control(self, veh, dt: float) -> None:
        """Apply the stored left/right torques."""
        veh.dynamics.set_lr_torques(veh, self.torque_l, self.torque_r)


class AckermannRaw(RawController):
    """``raw`` for Ackermann vehicles: ``fl_torque``, ``fr_torque`` (N·m, default 0), ``steer_ang_deg`` (0°)."""

    families: ClassVar[tuple[Family, ...]] = (Family.ACKERMANN,)
    steering: ClassVar[bool] = True
    TORQUE_NAMES: ClassVar[tuple[str, ...]] = ("front-left", "front-right")
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("fl_torque", Kind.FLOAT, 0.0, "N·m", doc="front-left wheel torque"),
        Param("fr_torque", Kind.FLOAT, 0.0, "N·m", doc="front-right wheel torque"),
        STEER_ANG_DEG,
    )

    def _configure(self, ctx: ParseContext) -> None:
        self.torque_fl = float(self.params["fl_torque"])
        self.torque_fr = float(self.params["fr_torque"])
        self.steer_angle = float(self.params["steer_ang_deg"])

    @property
    def torques(self) -> tuple[float, float]:
        return (self.torque_fl, self.torque_fr)

    def _store(self, torques: tuple[float, ...]) -> None:
        self.torque_fl, self.torque_fr = torques

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
    steering: ClassVar[bool] = True
    TORQUE_NAMES: ClassVar[tuple[str, ...]] = ("drive",)
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("torque", Kind.FLOAT, 0.0, "N·m", doc="drive torque, split by the differentials"),
        STEER_ANG_DEG,
    )

    def _configure(self, ctx: ParseContext) -> None:
        self.torque = float(self.params["torque"])
        self.steer_angle = float(self.params["steer_ang_deg"])

    @property
    def torques(self) -> tuple[float]:
        return (self.torque,)

    def _store(self, torques: tuple[float, ...]) -> None:
        (self.torque,) = torques

    def control(self, veh, dt: float) -> None:
        """The stored drive torque through the drivetrain, and the steering angle."""
        veh.dynamics.set_drive_torque(veh, self.torque)
        veh.dynamics.steer(veh, self.steer_angle)

    def summary(self) -> str:
        return (f"raw ({self.family.value}, τ={self.torque:g} N·m, "
                f"steer={math.degrees(self.steer_angle):g}°)")

