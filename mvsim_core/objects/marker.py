"""``<marker type="line_strip">``: a purely visual polyline (points in the world frame, m)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mvsim_core.errors import quoted
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Color, Kind, Param, parse_value, read_params

MARKER_PARAMS = (
    Param("color", Kind.COLOR, (255, 255, 255, 255)),
    Param("translation", Kind.VEC3, (0.0, 0.0, 0.0), "m"),
)
_ROW = Param("points", Kind.FLOATS, ())


@dataclass
class Marker:
    type: str
    points: np.ndarray  # N×3, m, world frame (translation applied)
    color: Color
    node: XmlNode


def parse_marker(node: XmlNode, ctx: ParseContext) -> Marker:
    mtype = ctx.attr(node, "type", "line_strip") or "line_strip"
    if mtype != "line_strip":
        raise ctx.error(node, f"unknown marker type {quoted(mtype)}; the only type is line_strip", attr="type")
    p = read_params(MARKER_PARAMS, [node], ctx)
    pts_node = node.child("points")
    rows = []
    if pts_node is not None:
        for k, line in enumerate(ctx.text(pts_node).splitlines()):
            if not line.strip():
                continue
            vals = parse_value(_ROW, line, pts_node, ctx)
            if len(vals) not in (2, 3):
                raise ctx.error(pts_node, f"marker point {k + 1} needs 'x y [z]', got '{line.strip()}'")
            rows.append((vals[0], vals[1], vals[2] if len(vals) == 3 else 0.0))
    pts = np.array(rows, dtype=float).reshape(-1, 3) + np.array(p.translation)
    return Marker(mtype, pts, p.color, node)
