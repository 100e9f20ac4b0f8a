"""``<element class="horizontal_plane">``: a flat rectangle at height ``z`` (a floor, or a ceiling).

It is drawn (plain colour or tiled texture) and it is ground: inside its rectangle it offers height ``z`` to the
terrain query, so planes at several heights make a multi-storey world.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from mvsim_core.elements.base import WorldElement, check_cull_face, check_ordered, child_node, resolve_asset
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Kind, Param


class HorizontalPlane(WorldElement):
    """An axis-aligned horizontal rectangle in the world frame.

    Attributes:
        texture_path: local texture image, None when none or unavailable.
    """

    xml_class: ClassVar[str] = "horizontal_plane"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("x_min", Kind.FLOAT, -10.0, "m"),
        Param("x_max", Kind.FLOAT, 10.0, "m"),
        Param("y_min", Kind.FLOAT, -10.0, "m"),
        Param("y_max", Kind.FLOAT, 10.0, "m"),
        Param("z", Kind.FLOAT, 0.0, "m", doc="height of the plane"),
        Param("color", Kind.COLOR, (0xA0, 0xA0, 0xA0, 0xFF)),
        Param("enable_shadows", Kind.BOOL, True),
        Param("cull_face", Kind.STRING, "NONE", doc="NONE, BACK or FRONT"),
        Param("texture", Kind.STRING, "", doc="image URI; overrides the colour"),
        Param("texture_size_x", Kind.FLOAT, 1.0, "m", positive=True, doc="texture tile size along X"),
        Param("texture_size_y", Kind.FLOAT, 1.0, "m", positive=True, doc="texture tile size along Y"),
        Param("name", Kind.STRING, ""),
    )

    texture_path: Path | None

    def _load(self, ctx: ParseContext) -> None:
        check_ordered(self, ctx, (("x_min", "x_max"), ("y_min", "y_max")))
        check_cull_face(self, ctx)
        uri = self.params.texture
        self.texture_path = resolve_asset(uri, child_node(self, "texture"), ctx) if uri else None

    @property
    def z(self) -> float:
        """Height of the plane [m]."""
        return float(self.params.z)

    def contains_xy(self, x: float, y: float) -> bool:
        """Whether world ``(x, y)`` [m] lies over the rectangle (borders included)."""
        p = self.params
        return p.x_min <= x <= p.x_max and p.y_min <= y <= p.y_max

    def elevation_at(self, x: float, y: float) -> float | None:
        """``z`` [m] inside the rectangle, None outside."""
        return self.z if self.contains_xy(x, y) else None

    def summary(self) -> str:
        p = self.params
        return f"horizontal_plane [{p.x_min:g}, {p.x_max:g}] x [{p.y_min:g}, {p.y_max:g}] m at z = {p.z:g} m"
