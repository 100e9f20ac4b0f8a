"""``<element class="pointcloud">``: a static point cloud read from a text file, drawn only (no physics).

``<file_txt_2d>`` holds ``x y`` per line (z = 0), ``<file_txt_3d>`` ``x y z`` per line; extra columns are ignored,
blank lines and lines starting with ``#`` or ``%`` are skipped. Points are in the cloud frame, placed in the world by
``<pose_3d>`` (``x y z yaw pitch roll``, degrees).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import ClassVar

import numpy as np

from mvsim_core.elements.base import WorldElement
from mvsim_core.io.file_check import FileProblem, file_problem, read_bytes_limited, shown_path
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Kind, Param

_SPLIT = re.compile(r"[,\s]+")


def read_points_txt(path: Path, dims: int) -> np.ndarray:
    """Read ``dims`` (2 or 3) leading columns per line of a text file.

    Returns:
        float64 (N, 3) points [m] (z = 0 for 2D files).

    Raises:
        ValueError: unreadable file, a short or non-numeric line (the message gives the 1-based line), or no data.
    """
    try:
        text = read_bytes_limited(path).decode("utf-8")
    except FileProblem as e:
        raise ValueError(f"point file {e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read point file {path}: {e}") from None
    rows: list[list[float]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s or s[0] in "#%":
            continue
        tokens = [t for t in _SPLIT.split(s) if t]
        if len(tokens) < dims:
            raise ValueError(f"{path}: line {lineno}: expected {dims} numbers, found {len(tokens)}")
        try:
            vals = [float(t) for t in tokens[:dims]]
        except ValueError:
            raise ValueError(f"{path}: line {lineno}: not a number in {s!r}") from None
        if not all(math.isfinite(v) for v in vals):
            raise ValueError(f"{path}: line {lineno}: coordinates must be finite")
        rows.append(vals + [0.0] * (3 - dims))
    if not rows:
        raise ValueError(f"{path}: no points found (expected {'x y' if dims == 2 else 'x y z'} per line)")
    return np.array(rows, dtype=np.float64)


class PointCloud(WorldElement):
    """A static point cloud.

    Attributes:
        path: the text file read.
        points: float64 (N, 3) points [m] in the cloud frame (apply ``params.pose_3d`` for the world frame).
    """

    xml_class: ClassVar[str] = "pointcloud"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("file_txt_2d", Kind.STRING, "", doc="text file, 'x y' per line"),
        Param("file_txt_3d", Kind.STRING, "", doc="text file, 'x y z' per line"),
        Param("points_size", Kind.FLOAT, 3.0, "px", positive=True),
        Param("pose_3d", Kind.POSE3D, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0), "m, rad", doc="cloud frame in the world"),
    )

    path: Path
    points: np.ndarray

    def _load(self, ctx: ParseContext) -> None:
        p = self.params
        if p.file_txt_2d:
            tag, dims = "file_txt_2d", 2
            if p.file_txt_3d:
                ctx.warn(self.node.child("file_txt_3d"), "<file_txt_3d> is ignored: <file_txt_2d> is also given")
        elif p.file_txt_3d:
            tag, dims = "file_txt_3d", 3
        else:
            raise ctx.error(self.node, "pointcloud needs a <file_txt_2d> or <file_txt_3d> file")
        node: XmlNode = self.node.child(tag) or self.node
        self.path = ctx.resolve_path(p[tag], node)
        problem = file_problem(self.path)
        if problem is not None:
            raise ctx.error(node, f"point cloud file {problem}: {shown_path(self.path)}")
        try:
            self.points = read_points_txt(self.path, dims)
        except ValueError as e:
            raise ctx.error(node, str(e)) from None

    def summary(self) -> str:
        return f"pointcloud {self.path.name} {len(self.points)} points"
