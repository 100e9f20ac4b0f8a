"""``<element class="vertical_plane">``: a straight wall from ``(x0, y0)`` to ``(x1, y1)``, with doors and windows.

The wall stands on height ``z`` and is ``height`` tall and ``thickness`` thick (centred on the line). Each
``<door>`` / ``<window>`` child (values as attributes or as child tags) cuts a rectangular opening centred at
``position`` (fraction of the wall length from ``(x0, y0)``), ``width`` wide, from ``z_min`` to ``z_max`` above the
wall base (``z_start`` / ``z_end`` are accepted aliases).

For physics, as upstream: a door lets vehicles through (no 2D collision across its width), a window does not (the
2D body is continuous under it). :meth:`VerticalPlane.segments` gives the full 3D decomposition of the wall around
all openings (for ray casting and drawing); :meth:`VerticalPlane.collision_pieces` the 2D pieces between doors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np

from mvsim_core.elements.base import WorldElement, check_cull_face, child_node, resolve_asset
from mvsim_core.geometry.extent import Extent, prism_corners
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Kind, Param, ParamValues, read_params, table_names, warn_unknown_children

OPENING_TAGS = ("door", "window")

OPENING_PARAMS: tuple[Param, ...] = (
    Param("position", Kind.FLOAT, 0.5, doc="centre, as a fraction [0, 1] of the wall length from (x0, y0)"),
    Param("width", Kind.FLOAT, 1.0, "m", positive=True),
    Param("z_min", Kind.FLOAT, 0.0, "m", aliases=("z_start",), doc="bottom, above the wall base"),
    Param("z_max", Kind.FLOAT, 2.1, "m", aliases=("z_end",), doc="top, above the wall base"),
    Param("name", Kind.STRING, ""),
)
_OPENING_NAMES = table_names(OPENING_PARAMS)

_EPS = 1e-9


@dataclass(frozen=True)
class Opening:
    """A door or window.

    Attributes:
        kind: ``"door"`` or ``"window"``.
        position: centre along the wall, fraction [0, 1] from (x0, y0).
        width: opening width [m].
        z_min, z_max: bottom and top [m] above the wall base.
        name: optional name ("" if none).
        node: where it was written.
    """

    kind: str
    position: float
    width: float
    z_min: float
    z_max: float
    name: str = ""
    node: XmlNode | None = field(default=None, repr=False, compare=False)

    def span(self, length: float) -> tuple[float, float]:
        """Start and end [m] along a wall of ``length`` m, clipped to the wall."""
        c = self.position * length
        return max(0.0, c - 0.5 * self.width), min(length, c + 0.5 * self.width)


@dataclass(frozen=True)
class WallPiece:
    """A solid rectangular piece of a vertical plane.

    Attributes:
        s0, s1: start and end [m] along the wall, measured from (x0, y0).
        z_min, z_max: bottom and top [m], world frame.
        p0, p1: world XY [m] of the piece's ends on the wall's centre line.
        polygon: (4, 2) footprint in world XY [m], counter-clockwise (the piece widened by the wall thickness).
    """

    s0: float
    s1: float
    z_min: float
    z_max: float
    p0: tuple[float, float]
    p1: tuple[float, float]
    polygon: np.ndarray = field(repr=False, compare=False)


def _subtract(lo: float, hi: float, holes: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Parts of the interval [lo, hi] outside the union of the intervals ``holes``, in increasing order."""
    parts = [(lo, hi)]
    for a, b in sorted(holes):
        nxt = []
        for x, y in parts:
            if b <= x or a >= y:
                nxt.append((x, y))
                continue
            if a > x:
                nxt.append((x, a))
            if b < y:
                nxt.append((b, y))
        parts = nxt
    return [(x, y) for x, y in parts if y - x > _EPS]


class VerticalPlane(WorldElement):
    """A vertical wall between two points, with openings.

    Attributes:
        openings: doors and windows, in file order.
        texture_path: local texture image, None when none or unavailable.
    """

    xml_class: ClassVar[str] = "vertical_plane"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("x0", Kind.FLOAT, -10.0, "m"),
        Param("y0", Kind.FLOAT, -10.0, "m"),
        Param("x1", Kind.FLOAT, -10.0, "m"),
        Param("y1", Kind.FLOAT, 10.0, "m"),
        Param("z", Kind.FLOAT, 0.0, "m", doc="height of the wall base"),
        Param("height", Kind.FLOAT, 3.0, "m", positive=True),
        Param("thickness", Kind.FLOAT, 0.02, "m", positive=True, doc="total thickness, centred on the line"),
        Param("color", Kind.COLOR, (0xA0, 0xA0, 0xA0, 0xFF)),
        Param("enable_shadows", Kind.BOOL, True),
        Param("cull_face", Kind.STRING, "NONE", doc="NONE, BACK or FRONT"),
        Param("texture", Kind.STRING, "", doc="image URI; overrides the colour"),
        Param("texture_size_x", Kind.FLOAT, 1.0, "m", positive=True, doc="texture tile size along the wall"),
        Param("texture_size_y", Kind.FLOAT, 1.0, "m", positive=True, doc="texture tile size along the height"),
        Param("name", Kind.STRING, ""),
    )
    EXTRA_TAGS: ClassVar[frozenset[str]] = frozenset(OPENING_TAGS)

    openings: list[Opening]
    texture_path: Path | None

    def _load(self, ctx: ParseContext) -> None:
        p = self.params
        if self.length <= 0.0:
            raise ctx.error(self.node, f"vertical_plane has zero length: (x0, y0) = (x1, y1) = ({p.x0:g}, {p.y0:g})")
        check_cull_face(self, ctx)
        self.openings = [self._read_opening(c, ctx) for c in self.node.children if c.tag in OPENING_TAGS]
        uri = p.texture
        self.texture_path = resolve_asset(uri, child_node(self, "texture"), ctx) if uri else None

    def _read_opening(self, node: XmlNode, ctx: ParseContext) -> Opening:
        what = f"<{node.tag}>"
        warn_unknown_children(node, _OPENING_NAMES, ctx, what=what)
        for a in node.attrs:
            if a not in _OPENING_NAMES:
                ctx.warn(node, f"unknown attribute {a}=\"...\" of {what} is ignored")
        from_attrs = read_params(OPENING_PARAMS, [node], ctx, attrs=True)
        from_tags = read_params(OPENING_PARAMS, [node], ctx)
        v = ParamValues()
        for prm in OPENING_PARAMS:
            v[prm.name] = from_tags[prm.name] if prm.name in from_tags.where else from_attrs[prm.name]
        if not 0.0 <= v["position"] <= 1.0:
            raise ctx.error(_where(node, "position"), f"{what} position must be between 0 (wall start) and 1 "
                                                      f"(wall end); got {v['position']:g}")
        if v["z_max"] <= v["z_min"]:
            raise ctx.error(_where(node, "z_max", "z_end"), f"{what} z_max ({v['z_max']:g}) must be greater than "
                                                            f"z_min ({v['z_min']:g})")
        return Opening(node.tag, v["position"], v["width"], v["z_min"], v["z_max"], v["name"], node)

    # ------------------------------------------------------------------ geometry
    @property
    def p0(self) -> tuple[float, float]:
        """Wall start (x0, y0) [m]."""
        return float(self.params.x0), float(self.params.y0)

    @property
    def p1(self) -> tuple[float, float]:
        """Wall end (x1, y1) [m]."""
        return float(self.params.x1), float(self.params.y1)

    @property
    def length(self) -> float:
        """Wall length [m]."""
        return math.hypot(self.params.x1 - self.params.x0, self.params.y1 - self.params.y0)

    def _piece(self, s0: float, s1: float, z0: float, z1: float) -> WallPiece:
        (ax, ay), (bx, by) = self.p0, self.p1
        length = self.length
        ux, uy = (bx - ax) / length, (by - ay) / length
        nx, ny = -uy * 0.5 * self.params.thickness, ux * 0.5 * self.params.thickness
        q0 = (ax + ux * s0, ay + uy * s0)
        q1 = (ax + ux * s1, ay + uy * s1)
        poly = np.array([[q0[0] - nx, q0[1] - ny], [q1[0] - nx, q1[1] - ny],
                         [q1[0] + nx, q1[1] + ny], [q0[0] + nx, q0[1] + ny]])
        return WallPiece(s0, s1, z0, z1, q0, q1, poly)

    def segments(self) -> list[WallPiece]:
        """The solid parts of the wall around every opening (3D boxes; adjacent equal pieces merged).

        The wall is cut along its length at every opening edge; in each slice, the openings covering it are removed
        from the full height ``[z, z + height]``.
        """
        length, base, top = self.length, float(self.params.z), float(self.params.z + self.params.height)
        spans = [(o, *o.span(length)) for o in self.openings]
        cuts = sorted({0.0, length, *(s for _, a, b in spans for s in (a, b))})
        pieces: list[WallPiece] = []
        open_ranges: dict[tuple[float, float], float] = {}  # (z0, z1) of the previous slice -> its start
        prev_end = 0.0
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            if b - a <= _EPS:
                continue
            holes = [(base + o.z_min, base + o.z_max) for o, s0, s1 in spans if s0 <= a + _EPS and s1 >= b - _EPS]
            solid = _subtract(base, top, holes)
            nxt: dict[tuple[float, float], float] = {}
            for zr in solid:
                nxt[zr] = open_ranges.pop(zr) if zr in open_ranges and abs(prev_end - a) <= _EPS else a
            for (z0, z1), start in open_ranges.items():
                pieces.append(self._piece(start, prev_end, z0, z1))
            open_ranges, prev_end = nxt, b
        for (z0, z1), start in open_ranges.items():
            pieces.append(self._piece(start, prev_end, z0, z1))
        pieces.sort(key=lambda w: (w.s0, w.z_min))
        return pieces

    def collision_pieces(self) -> list[WallPiece]:
        """Full-height pieces between doors: the 2D obstacles (windows do not open the 2D body)."""
        length, base = self.length, float(self.params.z)
        doors = [o.span(length) for o in self.openings if o.kind == "door"]
        return [self._piece(a, b, base, base + float(self.params.height)) for a, b in _subtract(0.0, length, doors)]

    def extent(self) -> Extent:
        """The box of the wall (its full length, thickness and height)."""
        p = self.params
        full = self._piece(0.0, self.length, float(p.z), float(p.z + p.height))
        return Extent.of_points(prism_corners(full.polygon, full.z_min, full.z_max))

    def summary(self) -> str:
        p = self.params
        n_doors = sum(o.kind == "door" for o in self.openings)
        n_windows = len(self.openings) - n_doors
        return (f"vertical_plane ({p.x0:g}, {p.y0:g})-({p.x1:g}, {p.y1:g}) m, {p.height:g} m high, "
                f"{n_doors} door(s), {n_windows} window(s)")


def _where(node: XmlNode, *names: str) -> XmlNode:
    """The child tag (or the node itself, for attributes) where one of ``names`` is written."""
    for n in names:
        c = node.child(n)
        if c is not None:
            return c
    return node
