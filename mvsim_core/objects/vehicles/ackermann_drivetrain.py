"""``ackermann_drivetrain``: Ackermann steering driven by one motor through differentials (reference §1.11).

``<drivetrain type="open_front|open_rear|open_4wd|torsen_front|torsen_rear|torsen_4wd">`` chooses where the torque
goes and how it splits; the ``*_split`` fractions and ``*_bias`` ratios configure the differentials.
"""

from enum import Enum
from typing import Any

from mvsim_core.dynamics.differentials import open_split, torsen_split
from mvsim_core.objects.vehicles.ackermann import ACKERMANN_CHASSIS, ACKERMANN_PARAMS, Ackermann
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Kind, Param, read_params, warn_unknown_children


class DrivetrainType(Enum):
    """Which axles are driven and by which kind of differential."""

    OPEN_FRONT = "open_front"
    OPEN_REAR = "open_rear"
    OPEN_4WD = "open_4wd"
    TORSEN_FRONT = "torsen_front"
    TORSEN_REAR = "torsen_rear"
    TORSEN_4WD = "torsen_4wd"

    @classmethod
    def from_string(cls, s: str) -> "DrivetrainType":
        return cls(s)


DRIVETRAIN_PARAMS = (
    Param("front_rear_split", Kind.FLOAT, 0.5, min=0.0),
    Param("front_rear_bias", Kind.FLOAT, 1.5, min=1.0),
    Param("front_left_right_split", Kind.FLOAT, 0.5, min=0.0),
    Param("front_left_right_bias", Kind.FLOAT, 1.5, min=1.0),
    Param("rear_left_right_split", Kind.FLOAT, 0.5, min=0.0),
    Param("rear_left_right_bias", Kind.FLOAT, 1.5, min=1.0),
)


class AckermannDrivetrain(Ackermann):
    """Same wheels and geometry as ``ackermann``; adds ``.drivetrain`` (type) and ``.drivetrain_params``."""

    xml_class = "ackermann_drivetrain"
    family = "ackermann_drivetrain"
    chassis_shape = ACKERMANN_CHASSIS
    PARAMS = ACKERMANN_PARAMS

    @classmethod
    def extra_tags(cls) -> frozenset[str]:
        return frozenset({"drivetrain"})

    def set_drive_torque(self, veh, torque: float) -> None:
        """Split the engine torque (N·m, negative drives forward) over the wheels through the differentials."""
        p = self.drivetrain_params
        om = veh.omega
        t = self.drivetrain.value
        torsen = t.startswith("torsen")
        if t.endswith("front"):
            front, rear = 1.0, 0.0
        elif t.endswith("rear"):
            front, rear = 0.0, 1.0
        elif torsen:
            front, rear = torsen_split(0.5 * (om[2] + om[3]), 0.5 * (om[0] + om[1]), p["front_rear_bias"],
                                       p["front_rear_split"])
        else:
            front, rear = open_split(p["front_rear_split"])
        if torsen:
            fl, fr = torsen_split(om[2], om[3], p["front_left_right_bias"], p["front_left_right_split"])
            rl, rr = torsen_split(om[0], om[1], p["rear_left_right_bias"], p["rear_left_right_split"])
        else:
            fl, fr = open_split(p["front_left_right_split"])
            rl, rr = open_split(p["rear_left_right_split"])
        self.set_drive(veh, torque * rear * rl, torque * rear * rr, torque * front * fl, torque * front * fr)

    @classmethod
    def read_extra(cls, dyn: XmlNode, ctx: ParseContext) -> dict[str, Any]:
        node = dyn.child("drivetrain")
        if node is None:
            return {"drivetrain": DrivetrainType.TORSEN_4WD,
                    "drivetrain_params": read_params(DRIVETRAIN_PARAMS, [], ctx)}
        raw = ctx.attr(node, "type", "torsen_4wd") or "torsen_4wd"
        try:
            dtype = DrivetrainType.from_string(raw)
        except ValueError:
            raise ctx.error(node, f"unknown drivetrain type '{raw}'; known: "
                                  f"{', '.join(t.value for t in DrivetrainType)}", attr="type") from None
        warn_unknown_children(node, {p.name for p in DRIVETRAIN_PARAMS}, ctx)
        params = read_params(DRIVETRAIN_PARAMS, [node], ctx)
        for key in ("front_rear_split", "front_left_right_split", "rear_left_right_split"):
            if params[key] > 1.0:
                raise ctx.error(params.where[key], f"<{key}> is a fraction between 0 and 1 (got {params[key]:g})")
        return {"drivetrain": dtype, "drivetrain_params": params}
