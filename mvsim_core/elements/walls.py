"""``<walls>``: static wall boxes built from line segments (reference §1.8).

The segments come from ``<shape>`` — a list of ``<pt>x y</pt>`` taken **in pairs**, each pair one segment (as
upstream; consecutive pairs may share a point) — or, without ``<shape>``, from the wireframe edges of the 3D model in
``<model_uri>`` (scaled by ``<scale>``). An optional ``<transformation>`` (4x4 homogeneous matrix, Matlab text
``[1 0 0 x; 0 1 0 y; 0 0 1 z; 0 0 0 1]``) moves the points; only their X and Y are used.

Each segment becomes a box ``wallThickness`` wide and ``wallHeight`` tall (z from 0) named ``wall_0001``,
``wall_0002``, ... (numbered across all ``<walls>`` of the world). To close the gap at corners, an end that lies within
``1.01 * wallThickness`` of an end of an earlier segment of the same ``<walls>`` is extended outwards by half the
thickness.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mvsim_core.errors import AssetError
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import (
    MAX_MAGNITUDE,
    Kind,
    Param,
    parse_value,
    read_params,
    table_names,
    warn_unknown_children,
)

Color = tuple[int, int, int, int]

WALLS_PARAMS: tuple[Param, ...] = (
    Param("model_uri", Kind.STRING, "", doc="3D model whose wireframe edges become walls"),
    Param("transformation", Kind.STRING, "", doc="4x4 homogeneous matrix, Matlab text"),
    Param("wallThickness", Kind.FLOAT, 0.10, "m", positive=True),
    Param("wallHeight", Kind.FLOAT, 2.0, "m", positive=True),
    Param("scale", Kind.FLOAT, 1.0, positive=True, doc="model scale factor"),
    Param("color", Kind.COLOR, (0x32, 0x32, 0x32, 0xFF)),
)
_KNOWN = table_names(WALLS_PARAMS) | {"shape"}
_PT = Param("pt", Kind.VEC2, unit="m")

EXTEND_RADIUS = 1.01
"""An end closer than this many thicknesses to an earlier end is extended (by half a thickness)."""


MAX_SEGMENTS = 50000
"""Most segments one ``<walls>`` may have."""


class _EndIndex:
    """Segment ends seen so far, hashed in square cells (side ``radius``, at least 1 mm): :meth:`near` tells whether
    one lies closer than ``radius`` to a point (m), in constant time per query."""

    def __init__(self, radius: float) -> None:
        self.radius = radius
        self.cell = max(radius, 1e-3)  # cells at least as large as the radius: the 3x3 around a point cover it
        self.cells: dict[tuple[int, int], list[tuple[float, float]]] = {}

    def _cell(self, q: np.ndarray) -> tuple[int, int]:
        return int(math.floor(q[0] / self.cell)), int(math.floor(q[1] / self.cell))

    def add(self, q: np.ndarray) -> None:
        self.cells.setdefault(self._cell(q), []).append((float(q[0]), float(q[1])))

    def near(self, q: np.ndarray) -> bool:
        cx, cy = self._cell(q)
        x, y = float(q[0]), float(q[1])
        return any(math.hypot(px - x, py - y) < self.radius
                   for dx in (-1, 0, 1) for dy in (-1, 0, 1) for px, py in self.cells.get((cx + dx, cy + dy), ()))


@dataclass
class WallSegment:
    """One wall box.

    Attributes:
        name: ``wall_NNNN``.
        p0, p1: the segment ends as given [m], world XY.
        thickness: box width [m].
        height: box height [m].
        color: RGBA 0..255.
        polygon: (4, 2) box footprint [m], world XY, counter-clockwise; includes the end extensions.
        zmin, zmax: vertical extent [m].
    """

    name: str
    p0: tuple[float, float]
    p1: tuple[float, float]
    thickness: float
    height: float
    color: Color
    polygon: np.ndarray = field(repr=False)
    zmin: float = 0.0
    zmax: float = float("nan")

    def __post_init__(self) -> None:
        if math.isnan(self.zmax):
            self.zmax = self.height

    @property
    def center(self) -> tuple[float, float]:
        """Centre of the box [m]."""
        c = self.polygon.mean(axis=0)
        return float(c[0]), float(c[1])

    @property
    def yaw(self) -> float:
        """Direction of the segment p0 -> p1 [rad]."""
        return math.atan2(self.p1[1] - self.p0[1], self.p1[0] - self.p0[0])

    @property
    def length(self) -> float:
        """Length of the box [m] (the segment plus any end extensions)."""
        return float(np.linalg.norm(self.polygon[1] - self.polygon[0]))


def wall_polygon(p0: np.ndarray, p1: np.ndarray, thickness: float, extend0: bool, extend1: bool) -> np.ndarray:
    """Counter-clockwise (4, 2) footprint of a wall from ``p0`` to ``p1`` [m].

    Args:
        p0, p1: segment ends (distinct).
        thickness: box width [m], centred on the segment.
        extend0, extend1: lengthen the box by ``thickness / 2`` beyond ``p0`` / ``p1``.
    """
    d = p1 - p0
    u = d / np.linalg.norm(d)
    n = np.array([-u[1], u[0]]) * (0.5 * thickness)
    a = p0 - u * (0.5 * thickness) if extend0 else p0
    b = p1 + u * (0.5 * thickness) if extend1 else p1
    return np.array([a - n, b - n, b + n, a + n])


def _transform_matrix(text: str, node: XmlNode, ctx: ParseContext) -> np.ndarray:
    from mvsim_core.io.elevation_data import parse_matrix_text

    try:
        m = parse_matrix_text(text)
    except ValueError as e:
        raise ctx.error(node, f"bad <transformation>: {e}") from None
    if m.shape != (4, 4):
        raise ctx.error(node, f"<transformation> must be a 4x4 matrix such as [1 0 0 0; 0 1 0 0; 0 0 1 0; 0 0 0 1]; "
                              f"got {m.shape[0]}x{m.shape[1]}")
    return m


def _shape_segments(shape: XmlNode, tf: np.ndarray | None, ctx: ParseContext) -> list[tuple[np.ndarray, np.ndarray]]:
    pts_nodes = list(shape.children_named("pt"))
    warn_unknown_children(shape, {"pt"}, ctx)
    if len(pts_nodes) < 2 or len(pts_nodes) % 2:
        raise ctx.error(shape, f"<shape> of <walls> needs an even number of <pt> (each pair of points is one wall "
                               f"segment); got {len(pts_nodes)}")
    pts = np.array([parse_value(_PT, n.text, n, ctx) for n in pts_nodes], dtype=np.float64)
    if tf is not None:
        pts = pts @ tf[:2, :2].T + tf[:2, 3]
    out = []
    for k in range(0, len(pts), 2):
        if np.linalg.norm(pts[k + 1] - pts[k]) <= 0.0:
            raise ctx.error(pts_nodes[k + 1], "wall segment has zero length (both <pt> of the pair are equal)")
        out.append((pts[k], pts[k + 1]))
    return out


def _model_segments(uri: str, uri_node: XmlNode, scale: float, tf: np.ndarray | None,
                    ctx: ParseContext) -> list[tuple[np.ndarray, np.ndarray]]:
    from mvsim_core.io.meshes import load_mesh, wireframe_segments
    from mvsim_core.io.remote_assets import resolve_model_uri

    base = str(Path(uri_node.file).resolve().parent) if uri_node.file and not uri_node.file.startswith("<") else "."
    res = resolve_model_uri(uri, base)
    if res.local_path is None:
        if res.remote:
            ctx.missing_asset(uri, uri_node, res.reason)
            return []
        raise ctx.error(uri_node, f"wall model not found: {ctx.resolve_path(uri, uri_node)} ({res.reason})")
    try:
        mesh = load_mesh(res.local_path, scale=scale)
    except AssetError as e:
        raise ctx.error(uri_node, str(e)) from None
    if tf is not None:
        mesh = mesh.transformed(tf)
    segs = np.asarray(wireframe_segments(mesh), dtype=np.float64).reshape(-1, 2, 2)
    keep = np.linalg.norm(segs[:, 1] - segs[:, 0], axis=1) > 1e-12
    return [(s[0], s[1]) for s in segs[keep]]


def parse_walls(node: XmlNode, ctx: ParseContext) -> list[WallSegment]:
    """Read one ``<walls>`` node into wall segments (names numbered across the world through ``ctx``).

    Raises:
        WorldFileError: neither ``<shape>`` nor ``<model_uri>``, an odd number of ``<pt>``, a zero-length segment,
            a bad matrix, or a missing local model file ("wall model not found: ...") at the ``<model_uri>`` line.
            A remote model that cannot be fetched only warns (missing asset) and gives no walls.
    """
    warn_unknown_children(node, _KNOWN, ctx)
    p = read_params(WALLS_PARAMS, [node], ctx)
    tf = _transform_matrix(p.transformation, p.where["transformation"], ctx) if p.transformation else None
    shape = node.child("shape")
    if shape is not None:
        if p.model_uri:
            ctx.warn(p.where["model_uri"], "<model_uri> of <walls> is ignored: <shape> is given")
        raw = _shape_segments(shape, tf, ctx)
    elif p.model_uri:
        raw = _model_segments(p.model_uri, p.where["model_uri"], p.scale, tf, ctx)
    else:
        raise ctx.error(node, "<walls> needs a <model_uri> (a 3D model whose edges are the walls) or a <shape> "
                              "with pairs of <pt>x y</pt>")

    if not all(np.isfinite(a).all() and np.isfinite(b).all() and np.abs(a).max() <= MAX_MAGNITUDE
               and np.abs(b).max() <= MAX_MAGNITUDE for a, b in raw):
        where = p.where.get("model_uri") if shape is None else shape
        raise ctx.error(where or node, f"<walls>: a point lies beyond {MAX_MAGNITUDE:g} m (or is not a number) once "
                                       f"scaled and transformed; check <scale> and <transformation>")
    if len(raw) > MAX_SEGMENTS:
        where = p.where.get("model_uri") if shape is None else shape
        raise ctx.error(where or node, f"<walls> has {len(raw)} segments, more than {MAX_SEGMENTS} (each is a "
                                       f"static block); use a simpler model")
    t = float(p.wallThickness)
    ends = _EndIndex(EXTEND_RADIUS * t)
    walls = []
    for a, b in raw:
        poly = wall_polygon(a, b, t, ends.near(a), ends.near(b))
        ends.add(a)
        ends.add(b)
        walls.append(WallSegment(
            name=f"wall_{ctx.next_index('wall_'):04d}",
            p0=(float(a[0]), float(a[1])), p1=(float(b[0]), float(b[1])),
            thickness=t, height=float(p.wallHeight), color=p.color, polygon=poly,
        ))
    return walls
