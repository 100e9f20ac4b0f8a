"""Where a vehicle can be put: whether a disc in the world is clear of the static obstacles, for drawing start poses
and goals.

Obstacles (world frame, m): the occupied cells (occupancy > 0.5) of every occupancy grid, as squares, and the
footprints of the tangible blocks (walls included) at their poses when the :class:`FreeSpace` is made. Vertical
planes, elevation maps and actors are not looked at; vehicles are the caller's business (they move).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from mvsim_core.world import World

OCCUPIED = 0.5
"""Cells whose occupancy is above this are obstacles."""


def _segment_distances(px: float, py: float, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distances (m) from (px, py) to the segments a[i]–b[i] ((n, 2) each)."""
    d = b - a
    p = np.array([px, py]) - a
    length2 = np.maximum((d * d).sum(axis=1), 1e-18)
    t = np.clip((p * d).sum(axis=1) / length2, 0.0, 1.0)
    out: np.ndarray = np.hypot(p[:, 0] - t * d[:, 0], p[:, 1] - t * d[:, 1])
    return out


def _inside(px: float, py: float, poly: np.ndarray) -> bool:
    """Whether (px, py) is inside the polygon (P, 2) (even-odd rule)."""
    x, y = poly[:, 0], poly[:, 1]
    xn, yn = np.roll(x, -1), np.roll(y, -1)
    crosses = (y > py) != (yn > py)
    with np.errstate(divide="ignore", invalid="ignore"):
        xc = x + (py - y) * (xn - x) / (yn - y)
    return bool(np.count_nonzero(crosses & (px < xc)) % 2)


class FreeSpace:
    """The static obstacles of ``world`` (see the module docstring), for :meth:`is_free` queries."""

    def __init__(self, world: World) -> None:
        from mvsim_core.elements.occupancy_grid import OccupancyGrid

        self.grids = [e.grid for e in world.elements if isinstance(e, OccupancyGrid)]
        self.polygons: list[np.ndarray] = []
        for b in world.blocks.values():
            if b.is_intangible:
                continue
            x, y, _, yaw, _, _ = b.pose
            c, s = math.cos(yaw), math.sin(yaw)
            fp = np.asarray(b.footprint, dtype=np.float64).reshape(-1, 2)
            self.polygons.append(fp @ np.array([[c, s], [-s, c]]) + (x, y))

    def is_free(self, x: float, y: float, radius: float) -> bool:
        """Whether the disc of ``radius`` m around (x, y) (world frame, m) touches no obstacle."""
        for g in self.grids:
            res = g.resolution
            i0 = max(0, math.floor((x - radius - g.x_min) / res))
            i1 = min(g.nx, math.floor((x + radius - g.x_min) / res) + 1)
            j0 = max(0, math.floor((y - radius - g.y_min) / res))
            j1 = min(g.ny, math.floor((y + radius - g.y_min) / res) + 1)
            if i0 >= i1 or j0 >= j1:
                continue
            occ = g.occupancy[j0:j1, i0:i1] > OCCUPIED
            if not occ.any():
                continue
            cx = g.x_min + (np.arange(i0, i1) + 0.5) * res
            cy = g.y_min + (np.arange(j0, j1) + 0.5) * res
            dx = np.maximum(np.abs(cx - x) - 0.5 * res, 0.0)
            dy = np.maximum(np.abs(cy - y) - 0.5 * res, 0.0)
            if (np.hypot(dx[None, :], dy[:, None])[occ] < radius).any():
                return False
        for poly in self.polygons:
            if _inside(x, y, poly) or _segment_distances(x, y, poly, np.roll(poly, -1, axis=0)).min() < radius:
                return False
        return True
