"""Axis-aligned boxes in the world frame: the extent of an object or element as the simulation places it.

What :meth:`World.extents <mvsim_core.world.World.extents>` returns and ``mvsim check --extents`` prints; a test holds
the physics, the 2D and 3D ray casters and the renderer to it (``tests/mvsim_core/test_world_extents.py``).

Units: metres, world frame (x, y horizontal, z up).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from mvsim_core.geometry.rotations import Pose6, rotation


@dataclass(frozen=True)
class Extent:
    """The box [x_min, x_max] × [y_min, y_max] × [z_min, z_max] (m, world frame)."""

    x_min: float
    x_max: float
    y_min: float
    y_max: float
    z_min: float
    z_max: float

    @classmethod
    def of_points(cls, points: np.ndarray) -> Extent:
        """The box of (N, 3) points (m), N ≥ 1."""
        p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        lo, hi = p.min(axis=0), p.max(axis=0)
        return cls(float(lo[0]), float(hi[0]), float(lo[1]), float(hi[1]), float(lo[2]), float(hi[2]))

    @staticmethod
    def union(boxes: Iterable[Extent]) -> Extent:
        """The smallest box holding all ``boxes`` (at least one)."""
        b = list(boxes)
        return Extent(min(e.x_min for e in b), max(e.x_max for e in b), min(e.y_min for e in b),
                      max(e.y_max for e in b), min(e.z_min for e in b), max(e.z_max for e in b))

    def as_tuple(self) -> tuple[float, float, float, float, float, float]:
        """(x_min, x_max, y_min, y_max, z_min, z_max), m."""
        return (self.x_min, self.x_max, self.y_min, self.y_max, self.z_min, self.z_max)

    def distance(self, other: Extent) -> float:
        """The largest difference between matching bounds (m): 0 for the same box."""
        return max(abs(a - b) for a, b in zip(self.as_tuple(), other.as_tuple(), strict=True))

    def text(self) -> str:
        """``x -3.15..3.65, y -2.9..2.9, z 0..1 m`` (millimetres shown, trailing zeros dropped)."""
        def f(v: float) -> str:
            s = f"{v:.3f}".rstrip("0").rstrip(".")
            return "0" if s in ("-0", "") else s

        return (f"x {f(self.x_min)}..{f(self.x_max)}, y {f(self.y_min)}..{f(self.y_max)}, "
                f"z {f(self.z_min)}..{f(self.z_max)} m")


def prism_corners(polygon: np.ndarray, z0: float, z1: float) -> np.ndarray:
    """(2N, 3) corners of the prism of ``polygon`` ((N, 2), m) from ``z0`` to ``z1`` (m), in its own frame."""
    p = np.asarray(polygon, dtype=np.float64).reshape(-1, 2)
    n = len(p)
    return np.column_stack([np.tile(p, (2, 1)), np.repeat([float(z0), float(z1)], n)])


def posed(points: np.ndarray, pose: Pose6 | tuple[float, ...]) -> np.ndarray:
    """(N, 3) points of a frame (m) moved to the world by ``pose`` (x, y, z, yaw, pitch, roll; m, rad)."""
    x, y, z, yaw, pitch, roll = (float(v) for v in pose)
    r = rotation(yaw, pitch, roll)
    return np.asarray(points, dtype=np.float64).reshape(-1, 3) @ r.T + (x, y, z)


def box_corners(x0: float, x1: float, y0: float, y1: float, z0: float, z1: float) -> np.ndarray:
    """(8, 3) corners of an axis-aligned box (m)."""
    return np.array([(x, y, z) for x in (x0, x1) for y in (y0, y1) for z in (z0, z1)], dtype=np.float64)


def wheel_corners(x: float, y: float, yaw: float, diameter: float, width: float) -> np.ndarray:
    """(8, 3) corners (vehicle frame, m) of the box around a wheel at (x, y) turned by ``yaw`` (rad), resting on
    z = 0: ``diameter`` long, ``width`` wide, ``diameter`` tall."""
    r, h = 0.5 * diameter, 0.5 * width
    c, s = math.cos(yaw), math.sin(yaw)
    pts = box_corners(-r, r, -h, h, 0.0, diameter)
    return np.column_stack([x + c * pts[:, 0] - s * pts[:, 1], y + s * pts[:, 0] + c * pts[:, 1], pts[:, 2]])
