"""``<joint>``: a constraint between two bodies — trailers and articulated vehicles (reference §1.4).

Anchors are in each body's own frame (m). ``distance``/``rope`` joints keep the anchors at most ``max_length``
apart; ``revolute``/``pin`` joints hinge them, optionally within angle limits (rad).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from mvsim_core.errors import quoted
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Kind, Param, ParamValues, read_params


class JointType(Enum):
    """``<joint type="...">``: a distance limit between the anchors (``distance``, ``rope``) or a hinge at them
    (``revolute``, ``pin``)."""

    DISTANCE = "distance"
    ROPE = "rope"
    REVOLUTE = "revolute"
    PIN = "pin"

    @property
    def limits_distance(self) -> bool:
        """Whether the joint keeps the anchors within ``max_length`` (Box2D rope joint, plus a spring with
        ``stiffness``) rather than hinging them (Box2D revolute joint)."""
        return self in (JointType.DISTANCE, JointType.ROPE)


JOINT_ATTRS: tuple[Param, ...] = (
    Param("anchor_a", Kind.VEC2, (0.0, 0.0), "m"),
    Param("anchor_b", Kind.VEC2, (0.0, 0.0), "m"),
    Param("max_length", Kind.FLOAT, 5.0, "m", min=0.0),
    Param("min_length", Kind.FLOAT, 0.0, "m", min=0.0),
    Param("stiffness", Kind.FLOAT, 0.0, min=0.0),
    Param("damping", Kind.FLOAT, 0.0, min=0.0),
    Param("enable_limit", Kind.BOOL, False),
    Param("lower_angle_deg", Kind.ANGLE, 0.0, "rad", aliases=("lower_angle",)),
    Param("upper_angle_deg", Kind.ANGLE, 0.0, "rad", aliases=("upper_angle",)),
)


@dataclass
class Joint:
    """A joint between bodies ``body_a`` and ``body_b`` (object names)."""

    type: JointType
    body_a: str
    body_b: str
    params: ParamValues
    node: XmlNode


def parse_joint(node: XmlNode, ctx: ParseContext, known_bodies: set[str]) -> Joint:
    """Read a ``<joint>``; both bodies must have been defined before it."""
    raw = ctx.attr(node, "type", "distance") or "distance"
    try:
        jtype = JointType(raw)
    except ValueError:
        raise ctx.error(node, f"unknown joint type {quoted(raw)}; known: {', '.join(t.value for t in JointType)}",
                        attr="type") from None
    names = []
    for key in ("body_a", "body_b"):
        body = ctx.require_attr(node, key)
        if body not in known_bodies:
            raise ctx.error(node, f"joint {key}=\"{body}\" is not a vehicle or block defined before this joint",
                            attr=key)
        names.append(body)
    params = read_params(JOINT_ATTRS, [node], ctx, attrs=True)
    if params.min_length > params.max_length:
        raise ctx.error(node, "joint min_length is larger than max_length")
    if names[0] == names[1]:
        raise ctx.error(node, f"joint body_a and body_b are both '{names[0]}'; a joint links two different bodies",
                        attr="body_b")
    if params.enable_limit and params.lower_angle_deg > params.upper_angle_deg:
        raise ctx.error(node, f"joint lower_angle_deg ({math.degrees(params.lower_angle_deg):g}) is larger than "
                              f"upper_angle_deg ({math.degrees(params.upper_angle_deg):g})")
    return Joint(jtype, names[0], names[1], params, node)
