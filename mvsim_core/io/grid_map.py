"""2D occupancy grid container shared by every occupancy-grid reader.

Frames and units: world frame (ENU-style, metres), z up; the grid is axis-aligned with the world X/Y axes.
Cell ``[iy, ix]`` covers ``[x_min + ix*res, x_min + (ix+1)*res) x [y_min + iy*res, y_min + (iy+1)*res)``.
Row ``iy = 0`` is the row at the *smallest* world y (i.e. the bottom row of an image of the map).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Relative tolerance used when converting a coordinate to a cell index, so that a point lying exactly on a
# cell border (up to floating point noise) falls in the cell above it, as intuition expects.
_INDEX_EPS = 1e-9

IndexLike = int | np.integer | np.ndarray
CoordLike = float | np.floating | np.ndarray


@dataclass(eq=False)
class GridMap:
    """A regular 2D occupancy grid (equality is by identity).

    Attributes:
        occupancy: float32 array, shape ``(ny, nx)``, indexed ``[iy, ix]``; value = probability in ``[0, 1]`` that
            the cell is OCCUPIED (1 = obstacle, 0 = free, 0.5 = unknown). ``iy = 0`` is the row at the smallest y.
        resolution: cell side length [m/cell] (cells are square).
        x_min: world x [m] of the outer (left) edge of column ``ix = 0``.
        y_min: world y [m] of the outer (bottom) edge of row ``iy = 0``.
    """

    occupancy: np.ndarray
    resolution: float
    x_min: float
    y_min: float

    def __post_init__(self) -> None:
        occ = np.ascontiguousarray(self.occupancy, dtype=np.float32)
        if occ.ndim != 2:
            raise ValueError(f"GridMap.occupancy must be a 2D array (ny, nx); got shape {occ.shape}")
        self.occupancy = occ
        self.resolution = float(self.resolution)
        self.x_min = float(self.x_min)
        self.y_min = float(self.y_min)
        if not (math.isfinite(self.resolution) and self.resolution > 0.0):
            raise ValueError(f"GridMap.resolution must be a finite number > 0 [m/cell]; got {self.resolution!r}")
        if not (math.isfinite(self.x_min) and math.isfinite(self.y_min)):
            raise ValueError(f"GridMap corner must be finite; got x_min={self.x_min!r}, y_min={self.y_min!r}")

    @property
    def nx(self) -> int:
        """Number of columns (cells along +x)."""
        return int(self.occupancy.shape[1])

    @property
    def ny(self) -> int:
        """Number of rows (cells along +y)."""
        return int(self.occupancy.shape[0])

    @property
    def x_max(self) -> float:
        """World x [m] of the outer (right) edge of the last column."""
        return self.x_min + self.nx * self.resolution

    @property
    def y_max(self) -> float:
        """World y [m] of the outer (top) edge of the last row."""
        return self.y_min + self.ny * self.resolution

    def cell_center(self, ix: IndexLike, iy: IndexLike) -> tuple[CoordLike, CoordLike]:
        """World coordinates ``(x, y)`` [m] of the centre of cell ``[iy, ix]``.

        Accepts Python ints or integer numpy arrays (vectorised). Indices are not bounds-checked.
        """
        x = self.x_min + (np.asarray(ix, dtype=np.float64) + 0.5) * self.resolution
        y = self.y_min + (np.asarray(iy, dtype=np.float64) + 0.5) * self.resolution
        if np.ndim(x) == 0 and np.ndim(y) == 0:
            return float(x), float(y)
        return x, y

    def world_to_cell(self, x: CoordLike, y: CoordLike) -> tuple[IndexLike, IndexLike]:
        """Cell indices ``(ix, iy)`` containing the world point ``(x, y)`` [m].

        Uses ``floor((x - x_min) / resolution)``; the result may lie outside ``[0, nx) x [0, ny)`` for points off
        the map (check with :meth:`in_bounds`). Scalars give Python ints, arrays give int64 arrays.
        """
        fx = np.floor((np.asarray(x, dtype=np.float64) - self.x_min) / self.resolution + _INDEX_EPS)
        fy = np.floor((np.asarray(y, dtype=np.float64) - self.y_min) / self.resolution + _INDEX_EPS)
        if fx.ndim == 0 and fy.ndim == 0:
            return int(fx), int(fy)
        return fx.astype(np.int64), fy.astype(np.int64)

    def in_bounds(self, ix: IndexLike, iy: IndexLike) -> bool | np.ndarray:
        """True where ``(ix, iy)`` is a valid cell index (scalar bool or boolean array)."""
        ok = (np.asarray(ix) >= 0) & (np.asarray(ix) < self.nx) & (np.asarray(iy) >= 0) & (np.asarray(iy) < self.ny)
        return bool(ok) if np.ndim(ok) == 0 else ok
