"""``ackermann_drivetrain``: Ackermann steering driven by one motor through differentials (reference §1.11).

``<drivetrain type="open_front|open_rear|open_4wd|torsen_front|torsen_rear|torsen_4wd">`` chooses the driven axles
and the kind of every differential (:class:`DrivetrainType`); the ``*_split`` fractions and ``*_bias`` ratios
configure the differentials. Torques in N·m, negative drives forward; wheel spins in rad/s.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

from mvsim_core.dynamics.controllers.base import Family
from mvsim_core.dynamics.differentials import DifferentialKind
from mvsim_core.errors import quoted
from mvsim_core.objects.vehicles.ackermann import ACKERMANN_CHASSIS, ACKERMANN_PARAMS, Ackermann
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Kind, Param, ParamValues, read_params, warn_unknown_children

if TYPE_CHECKING:
    import numpy as np


class DrivetrainType(Enum):
    """Which axles are driven and by which kind of differential.

    Each member carries ``differential`` (the kind of the centre, front and rear differentials) and
    ``front_rear``: the fixed (front, rear) torque shares of a one-axle drive, or None for 4WD, where a centre
    differential splits the torque between the axles.
    """

    OPEN_FRONT = ("open_front", DifferentialKind.OPEN, (1.0, 0.0))
    OPEN_REAR = ("open_rear", DifferentialKind.OPEN, (0.0, 1.0))
    OPEN_4WD = ("open_4wd", DifferentialKind.OPEN, None)
    TORSEN_FRONT = ("torsen_front", DifferentialKind.TORSEN, (1.0, 0.0))
    TORSEN_REAR = ("torsen_rear", DifferentialKind.TORSEN, (0.0, 1.0))
    TORSEN_4WD = ("torsen_4wd", DifferentialKind.TORSEN, None)

    differential: DifferentialKind
    front_rear: tuple[float, float] | None

    def __new__(cls, name: str, differential: DifferentialKind,
                front_rear: tuple[float, float] | None) -> DrivetrainType:
        member = object.__new__(cls)
        member._value_ = name
        member.differential = differential
        member.front_rear = front_rear
        return member

    @classmethod
    def from_string(cls, s: str) -> DrivetrainType:
        """The type written ``type="s"``.

        Raises:
            ValueError: unknown name; the message lists the known ones.
        """
        for t in cls:
            if t.value == s:
                return t
        raise ValueError(f"unknown drivetrain type {quoted(s)}; known: {', '.join(t.value for t in cls)}")

    def wheel_torques(self, torque: float, omega: np.ndarray, p: ParamValues) -> tuple[float, float, float, float]:
        """Torques (rl, rr, fl, fr) in N·m of the engine torque ``torque`` (N·m) through the differentials.

        Args:
            torque: engine torque (N·m, negative drives forward).
            omega: spins of the wheels rl, rr, fl, fr (rad/s); the centre differential sees the mean spin of each
                axle.
            p: the ``DRIVETRAIN_PARAMS`` values.
        """
        diff = self.differential
        om = omega
        if self.front_rear is not None:
            front, rear = self.front_rear
        else:
            front, rear = diff.split(0.5 * (om[2] + om[3]), 0.5 * (om[0] + om[1]), p["front_rear_bias"],
                                     p["front_rear_split"])
        fl, fr = diff.split(om[2], om[3], p["front_left_right_bias"], p["front_left_right_split"])
        rl, rr = diff.split(om[0], om[1], p["rear_left_right_bias"], p["rear_left_right_split"])
        return torque * rear * rl, torque * rear * rr, torque * front * fl, torque * front * fr


DRIVETRAIN_PARAMS = (
    Param("front_rear_split", Kind.FLOAT, 0.5, min=0.0, doc="share of the engine torque for the front axle (4WD)"),
    Param("front_rear_bias", Kind.FLOAT, 1.5, min=1.0, doc="Torsen bias ratio of the centre differential (4WD)"),
    Param("front_left_right_split", Kind.FLOAT, 0.5, min=0.0, doc="share of the front axle torque for fl_wheel"),
    Param("front_left_right_bias", Kind.FLOAT, 1.5, min=1.0, doc="Torsen bias ratio of the front differential"),
    Param("rear_left_right_split", Kind.FLOAT, 0.5, min=0.0, doc="share of the rear axle torque for rl_wheel"),
    Param("rear_left_right_bias", Kind.FLOAT, 1.5, min=1.0, doc="Torsen bias ratio of the rear differential"),
)
"""``<drivetrain>`` children: splits are fractions in [0, 1] (checked in ``read_extra``), biases ratios ≥ 1."""


class AckermannDrivetrain(Ackermann):
    """Same wheels and geometry as ``ackermann``; adds ``.drivetrain`` (:class:`DrivetrainType`) and
    ``.drivetrain_params`` (values of ``DRIVETRAIN_PARAMS``)."""

    xml_class = "ackermann_drivetrain"
    family: ClassVar[Family] = Family.ACKERMANN_DRIVETRAIN
    chassis_shape = ACKERMANN_CHASSIS
    PARAMS = ACKERMANN_PARAMS

    drivetrain: DrivetrainType
    drivetrain_params: ParamValues

    @classmethod
    def extra_tags(cls) -> frozenset[str]:
        return frozenset({"drivetrain"})

    def set_drive_torque(self, veh, torque: float) -> None:
        """Split the engine torque (N·m, negative drives forward) over the wheels through the differentials."""
        self.set_drive(veh, *self.drivetrain.wheel_torques(torque, veh.omega, self.drivetrain_params))

    @classmethod
    def read_extra(cls, dyn: XmlNode, ctx: ParseContext) -> dict[str, Any]:
        node = dyn.child("drivetrain")
        if node is None:
            return {"drivetrain": DrivetrainType.TORSEN_4WD,
                    "drivetrain_params": read_params(DRIVETRAIN_PARAMS, [], ctx)}
        raw = ctx.attr(node, "type", "torsen_4wd") or "torsen_4wd"
        try:
            dtype = DrivetrainType.from_string(raw)
        except ValueError as e:
            raise ctx.error(node, str(e), attr="type") from None
        warn_unknown_children(node, {p.name for p in DRIVETRAIN_PARAMS}, ctx)
        params = read_params(DRIVETRAIN_PARAMS, [node], ctx)
        for key in ("front_rear_split", "front_left_right_split", "rear_left_right_split"):
            if params[key] > 1.0:
                raise ctx.error(params.where[key], f"<{key}> is a fraction between 0 and 1 (got {params[key]:g})")
        return {"drivetrain": dtype, "drivetrain_params": params}
