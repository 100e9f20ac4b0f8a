"""A vehicle wheel as declared in ``<dynamics>`` (reference §1.11, "Wheels").

Frame: the vehicle frame (x forward, y left, origin at the vehicle reference point). Positions in m, yaw in rad.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from mvsim_core.errors import quoted
from mvsim_core.objects.visual import Visual, parse_visuals
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Color, Kind, Param, parse_value, read_params

MIN_WHEEL_SIZE = 1e-3
"""Smallest wheel diameter and width (m): Box2D needs an area for the wheel's box, and the spin of a smaller wheel
(speed / radius) outruns any timestep."""

WHEEL_ATTRS: tuple[Param, ...] = (
    Param("mass", Kind.FLOAT, 2.0, "kg", positive=True),
    Param("width", Kind.FLOAT, 0.2, "m", positive=True, min=MIN_WHEEL_SIZE),
    Param("diameter", Kind.FLOAT, 0.4, "m", positive=True, min=MIN_WHEEL_SIZE),
    Param("color", Kind.COLOR, (0x32, 0x32, 0x32, 255)),
    Param("inertia", Kind.FLOAT, math.nan, "kg·m²", doc="spin inertia Iyy; NaN = m·r²/2"),
    Param("linked_yaw", Kind.STRING, ""),
    Param("linked_yaw_offset_deg", Kind.ANGLE, 0.0, "rad", aliases=("linked_yaw_offset",)),
)
_POS = Param("pos", Kind.FLOATS, ())


@dataclass
class Wheel:
    """One wheel.

    Attributes:
        name: its tag (``l_wheel``, ``fr_wheel``, ...).
        x, y: position in the vehicle frame (m).
        yaw: fixed mounting yaw (rad); steering adds to it.
        mass: kg. width, diameter: m. color: RGBA.
        inertia: spin inertia Iyy (kg·m²), m·r²/2 unless given.
        linked_yaw / linked_yaw_offset: visual group turned with the wheel's yaw.
    """

    name: str
    x: float
    y: float
    yaw: float = 0.0
    mass: float = 2.0
    width: float = 0.2
    diameter: float = 0.4
    color: Color = (0x32, 0x32, 0x32, 255)
    inertia: float = 0.0
    linked_yaw: str = ""
    linked_yaw_offset: float = 0.0
    visuals: list[Visual] = field(default_factory=list)

    @property
    def radius(self) -> float:
        return 0.5 * self.diameter


def parse_wheel(name: str, node: XmlNode | None, default_pos: tuple[float, float], ctx: ParseContext) -> Wheel:
    """Read a wheel element (``None`` gives the defaults at ``default_pos``)."""
    if node is None:
        w = Wheel(name, *default_pos)
        w.inertia = 0.5 * w.mass * w.radius ** 2
        return w
    p = read_params(WHEEL_ATTRS, [node], ctx, attrs=True)
    x, y = default_pos
    yaw = 0.0
    if "pos" in node.attrs:
        vals = parse_value(_POS, node.attrs["pos"], node, ctx, attr="pos")
        if len(vals) not in (2, 3):
            raise ctx.error(node, f"bad pos={quoted(node.attrs['pos'])} of <{name}>: expected 'x y' or 'x y yaw_deg'",
                            attr="pos")
        x, y = vals[0], vals[1]
        yaw = math.radians(vals[2]) if len(vals) == 3 else 0.0
    inertia = p.inertia
    if math.isnan(inertia):
        inertia = 0.5 * p.mass * (0.5 * p.diameter) ** 2
    elif not inertia > 0:
        raise ctx.error(node, f"inertia of <{name}> must be greater than 0 kg·m² (got {inertia:g})", attr="inertia")
    for c in node.children:
        if c.tag != "visual":
            ctx.warn(c, f"unknown tag <{c.tag}> in <{name}> is ignored")
    return Wheel(name=name, x=x, y=y, yaw=yaw, mass=p.mass, width=p.width, diameter=p.diameter, color=p.color,
                 inertia=inertia, linked_yaw=p.linked_yaw, linked_yaw_offset=p.linked_yaw_offset_deg,
                 visuals=parse_visuals(node, ctx))
