"""``<element class="ground_grid">``: a visual XY grid of lines (no physics).

With ``floating`` the grid follows a vehicle (``floating_focus``, or the first vehicle), snapped to multiples of
``interval``; that happens at render time.
"""

from __future__ import annotations

from typing import ClassVar

from mvsim_core.elements.base import WorldElement, check_ordered, child_node
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Kind, Param

MAX_LINES = 10000
"""Most lines a ground grid may draw (each is a renderer segment, rebuilt with the scene)."""


class GroundGrid(WorldElement):
    """A ground grid drawn in the world frame (metres)."""

    xml_class: ClassVar[str] = "ground_grid"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("floating", Kind.BOOL, True, doc="follow a vehicle"),
        Param("floating_focus", Kind.STRING, "", doc="vehicle name to follow; implies floating"),
        Param("color", Kind.COLOR, (0xE0, 0xE0, 0xE0, 0xFF)),
        Param("line_width", Kind.FLOAT, 1.0, "px", positive=True),
        Param("x_min", Kind.FLOAT, -25.0, "m"),
        Param("x_max", Kind.FLOAT, 25.0, "m"),
        Param("y_min", Kind.FLOAT, -25.0, "m"),
        Param("y_max", Kind.FLOAT, 25.0, "m"),
        Param("interval", Kind.FLOAT, 5.0, "m", positive=True, doc="distance between lines"),
    )

    def _load(self, ctx: ParseContext) -> None:
        check_ordered(self, ctx, (("x_min", "x_max"), ("y_min", "y_max")))
        p = self.params
        lines = ((p.x_max - p.x_min) + (p.y_max - p.y_min)) / p.interval + 2
        if lines > MAX_LINES:
            raise ctx.error(child_node(self, "interval"), f"ground_grid draws {lines:.3g} lines ({p.x_max - p.x_min:g} "
                                                          f"x {p.y_max - p.y_min:g} m every {p.interval:g} m), more "
                                                          f"than {MAX_LINES}; use a larger <interval>")
        if self.params.floating_focus:
            self.params["floating"] = True

    def summary(self) -> str:
        p = self.params
        focus = f" (floating on {p.floating_focus})" if p.floating_focus else (" (floating)" if p.floating else "")
        return (f"ground_grid [{p.x_min:g}, {p.x_max:g}] x [{p.y_min:g}, {p.y_max:g}] m every {p.interval:g} m"
                f"{focus}")
