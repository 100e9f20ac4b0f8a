"""``<element class="property_region">``: a named value attached to an axis-aligned box of the world.

Other parts of the simulator query properties by name at a point: ``friction_mu`` and ``friction_C_rr`` (doubles,
overriding the wheel friction model), ``gps_no_coverage`` (bool, no GNSS fix inside). Exactly one of
``value_double`` / ``value_bool`` / ``value_string`` gives the value and its type. :func:`property_at` returns the
value of the first region (in world-file order) that has the name and contains the point.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from mvsim_core.elements.base import WorldElement, check_ordered
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Kind, Param

PropertyValue = float | bool | str

VALUE_TAGS = ("value_double", "value_bool", "value_string")


class PropertyRegion(WorldElement):
    """A box [x_min, x_max] x [y_min, y_max] x [z_min, z_max] (world frame, m, borders included) with a property.

    Attributes:
        name: property name.
        value: the property value (float, bool or str).
    """

    xml_class: ClassVar[str] = "property_region"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("x_min", Kind.FLOAT, -1.0, "m"),
        Param("y_min", Kind.FLOAT, -1.0, "m"),
        Param("z_min", Kind.FLOAT, -1.0, "m"),
        Param("x_max", Kind.FLOAT, 1.0, "m"),
        Param("y_max", Kind.FLOAT, 1.0, "m"),
        Param("z_max", Kind.FLOAT, 1.0, "m"),
        Param("property_name", Kind.STRING, "", doc="e.g. friction_mu, friction_C_rr, gps_no_coverage"),
        Param("value_double", Kind.FLOAT, None),
        Param("value_bool", Kind.BOOL, None),
        Param("value_string", Kind.STRING, None),
    )

    name: str
    value: PropertyValue

    def _load(self, ctx: ParseContext) -> None:
        p = self.params
        if not p.property_name:
            raise ctx.error(self.node.child("property_name") or self.node,
                            "property_region needs a non-empty <property_name> (e.g. friction_mu)")
        self.name = p.property_name
        given = [t for t in VALUE_TAGS if t in p.where]
        if not given:
            raise ctx.error(self.node, f"property_region '{self.name}' needs one value: <value_double>, "
                                       f"<value_bool> or <value_string>")
        if len(given) > 1:
            raise ctx.error(p.where[given[1]], f"property_region '{self.name}' takes exactly one value, but has "
                                               f"both <{given[0]}> and <{given[1]}>")
        self.value = p[given[0]]
        check_ordered(self, ctx, (("x_min", "x_max"), ("y_min", "y_max"), ("z_min", "z_max")))

    def contains(self, x: float, y: float, z: float) -> bool:
        """Whether world point ``(x, y, z)`` [m] is inside the box (borders included)."""
        p = self.params
        return p.x_min <= x <= p.x_max and p.y_min <= y <= p.y_max and p.z_min <= z <= p.z_max

    def summary(self) -> str:
        p = self.params
        return (f"property_region {self.name} = {self.value!r} in [{p.x_min:g}, {p.x_max:g}] x "
                f"[{p.y_min:g}, {p.y_max:g}] x [{p.z_min:g}, {p.z_max:g}] m")


def property_at(elements: Iterable[WorldElement], name: str, x: float, y: float, z: float) -> PropertyValue | None:
    """Value of property ``name`` at world ``(x, y, z)`` [m]: the first matching region wins; None if none."""
    for e in elements:
        if isinstance(e, PropertyRegion) and e.name == name and e.contains(x, y, z):
            return e.value
    return None
