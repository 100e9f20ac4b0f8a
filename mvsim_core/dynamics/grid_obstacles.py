"""Occupancy-grid cells as Box2D obstacles, only near the bodies that move (reference §1.9/§1.10).

Each occupancy grid gets one static Box2D body; for each dynamic body (vehicles, dynamic blocks), the occupied cells
(occupancy > 0.5) on the surface of their region (:func:`surface_cells`: a free or out-of-grid 4-neighbour) whose
centres lie within ``r = 1.5 * max_radius + resolution`` of the body origin (searched from
the body's cell, so up to half a cell diagonal more) get a static square fixture of half-width 0.5 cell (upstream:
0.4, which leaves gaps between neighbouring cells) on the grid's body, with the grid's ``lateral_friction`` and
``restitution``; fixtures of cells no longer near any moving body are removed. Upstream finds the cells with a 50-ray
scan of range 1.5 x max radius; a full neighbourhood is simpler and at least as correct (a scan can miss cells between
rays or behind the first hit).

Cost (:meth:`GridObstacles.update`): the cell of every moving body is compared with the last call's; when none changed
cell the call returns after one compiled pass (:func:`body_cells`, ~2 µs for 25 vehicles); each body that changed
cell costs one compiled pass over its neighbourhood (:func:`near_cells`) and Box2D calls only for the cells that enter
or leave the union of all neighbourhoods (reference-counted per cell).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mvsim_core.dynamics.cell_squares import restore_cell_squares, swap_cell_squares
from mvsim_core.elements.occupancy_grid import OCCUPIED
from mvsim_core.jit import njit

GRID_OCCUPIED = OCCUPIED
"""Cells whose occupancy probability is above this are obstacles (the rule of every part of the simulator)."""
GRID_HALF_WIDTH = 0.5
"""Obstacle square half-width in cells (upstream 0.4, which leaves 0.2-cell gaps between neighbouring cells)."""
GRID_RADIUS_FACTOR = 1.5
"""Neighbourhood radius = this x the body's max radius + one cell (upstream's scan range is 1.5 x max radius)."""


def stencil_reach(max_radius: float, resolution: float) -> float:
    """Radius (m) of the neighbourhood searched around a body of ``max_radius`` (m) on a grid of ``resolution`` (m):
    the module docstring's r, widened by half a cell diagonal (the body may sit anywhere in its cell)."""
    return GRID_RADIUS_FACTOR * max_radius + resolution + resolution * math.sqrt(0.5)


def stencil_bytes(max_radius: float, resolution: float) -> float:
    """Bytes that :meth:`GridObstacles.build` works with to make the neighbourhood of one body of ``max_radius`` (m)
    on a grid of ``resolution`` (m): ~64 per cell of its (2n+1)² square. A float, inf for NaN."""
    n = stencil_reach(max_radius, resolution) / resolution
    if not n < 1e15:  # NaN, inf, or far beyond any budget (the square would overflow)
        return math.inf
    side = 2.0 * math.ceil(n) + 1.0
    return side * side * 64.0


@njit(cache=True)
def body_cells(pos: np.ndarray, x_min: float, y_min: float, resolution: float, last: np.ndarray,
               cells: np.ndarray) -> int:
    """Cell (ix, iy) of each body origin: ``cells[k] = floor((pos[k] − (x_min, y_min)) / resolution)`` (pos: (n, 2)
    m, world frame; cells: (n, 2) int64 out); returns how many rows differ from ``last`` ((n, 2), the previous
    cells)."""
    changed = 0
    for k in range(pos.shape[0]):
        ix = int(np.floor((pos[k, 0] - x_min) / resolution))
        iy = int(np.floor((pos[k, 1] - y_min) / resolution))
        changed += ix != last[k, 0] or iy != last[k, 1]
        cells[k, 0] = ix
        cells[k, 1] = iy
    return changed


@njit(cache=True)
def near_cells(ix: int, iy: int, stencil: np.ndarray, occupied: np.ndarray, nx: int, ny: int,
               out: np.ndarray) -> int:
    """The occupied cells around cell (ix, iy): flat indices ``iy·nx + ix`` of the cells ``(ix, iy) + stencil[j]``
    inside the grid whose ``occupied`` flag is set, in stencil order, into ``out`` ((K,) int64, K ≥ len(stencil));
    returns how many."""
    n = 0
    for j in range(stencil.shape[0]):
        cx, cy = ix + stencil[j, 0], iy + stencil[j, 1]
        if 0 <= cx < nx and 0 <= cy < ny:
            lin = cy * nx + cx
            if occupied[lin]:
                out[n] = lin
                n += 1
    return n


def surface_cells(solid: np.ndarray) -> np.ndarray:
    """The cells of ``solid`` ((ny, nx) bool, occupied cells) that a body outside can touch: those with a
    4-neighbour that is free or beyond the grid's edge. A cell whose four neighbours are all solid lies behind
    them: a body reaches it only through one of them (Box2D stops bodies at a static surface), so it gets no
    fixture. A body placed inside a large solid region thus meets only that region's surface instead of thousands
    of overlapping squares (an all-black 4000 x 4000 map at 5 cm made one Box2D step take minutes)."""
    pad = np.pad(solid, 1, constant_values=False)
    buried = pad[:-2, 1:-1] & pad[2:, 1:-1] & pad[1:-1, :-2] & pad[1:-1, 2:]
    return solid & ~buried


@dataclass
class GridObstacles:
    """The obstacle fixtures of one occupancy grid.

    Attributes:
        element: the ``OccupancyGrid`` element.
        body: its static Box2D body (world frame).
        occupied: flat bool array over cells ``iy * nx + ix``: the surface of the occupied cells (occupancy > 0.5;
            :func:`surface_cells`), the only ones that get fixtures.
        nx, ny, resolution, x_min, y_min: the grid's geometry (cells, m).
        friction, restitution: of the obstacle fixtures.
        fixtures: flat cell index -> square fixture (the union of the ``near`` sets).
    """

    element: Any
    body: Any
    occupied: np.ndarray
    nx: int
    ny: int
    resolution: float
    x_min: float
    y_min: float
    friction: float
    restitution: float
    stencils: list[np.ndarray] = field(default_factory=list)  # per moving body: (K, 2) cell offsets (dx, dy)
    last_cells: np.ndarray | None = None  # (n, 2) cell (ix, iy) of each moving body at the last update
    near: list[set[int]] = field(default_factory=list)  # per moving body: occupied cells in its neighbourhood
    refcount: dict[int, int] = field(default_factory=dict)  # cell -> number of bodies it is near
    fixtures: dict[int, Any] = field(default_factory=dict)
    _scratch: np.ndarray | None = field(default=None, repr=False)  # (n, 2) int64 for update's cells, reused

    @classmethod
    def build(cls, b2world: Any, el: Any, radii: Sequence[float]) -> GridObstacles:
        """A new static body in ``b2world`` for the ``OccupancyGrid`` element ``el``, without fixtures yet, serving
        moving bodies of max radius ``radii`` (m, one per moving body, in the order :meth:`update` gets them)."""
        g = el.grid
        body = b2world.CreateStaticBody(position=(0.0, 0.0))
        go = cls(element=el, body=body, occupied=surface_cells(g.occupancy > GRID_OCCUPIED).ravel(), nx=g.nx, ny=g.ny,
                 resolution=g.resolution, x_min=g.x_min, y_min=g.y_min, friction=float(el.params["lateral_friction"]),
                 restitution=float(el.params["restitution"]))
        res = g.resolution
        cache: dict[int, np.ndarray] = {}
        for max_radius in radii:
            # cells whose centre is within r of the body, searched around the body's cell
            reach = stencil_reach(max_radius, res)
            n = int(math.ceil(reach / res))
            key = int(round(reach / res * 1e6))
            if key not in cache:
                d = np.arange(-n, n + 1)
                dx, dy = np.meshgrid(d, d, indexing="xy")
                keep = np.hypot(dx, dy) * res <= reach
                cache[key] = np.column_stack([dx[keep], dy[keep]]).astype(np.int64)
            go.stencils.append(cache[key])
            go.near.append(set())
        return go

    def cell_center(self, k: int) -> tuple[float, float]:
        """World (x, y) of flat cell ``k`` (m)."""
        iy, ix = divmod(k, self.nx)
        return self.x_min + (ix + 0.5) * self.resolution, self.y_min + (iy + 0.5) * self.resolution

    def update(self, pos: np.ndarray) -> None:
        """Make the obstacle fixtures match the neighbourhoods of the moving bodies at ``pos`` (n×2 origins, m, world
        frame, in the order of :meth:`build`'s ``radii``); see the module docstring."""
        cells = self._scratch  # the cells of this call; they become last_cells when a body changed cell
        if cells is None or len(cells) != len(pos):
            cells = self._scratch = np.empty((len(pos), 2), dtype=np.int64)
        last = self.last_cells
        if last is None:
            body_cells(pos, self.x_min, self.y_min, self.resolution, cells, cells)
            moved: Sequence[int] = range(len(cells))
        elif body_cells(pos, self.x_min, self.y_min, self.resolution, last, cells) == 0:
            return
        else:
            moved = np.flatnonzero((cells != last).any(axis=1)).tolist()
        self.last_cells, self._scratch = cells, last  # the old cells' array is the next call's scratch
        h = GRID_HALF_WIDTH * self.resolution
        for k in moved:
            stencil = self.stencils[k]
            found = np.empty(len(stencil), dtype=np.int64)
            n = near_cells(int(cells[k, 0]), int(cells[k, 1]), stencil, self.occupied, self.nx, self.ny, found)
            new = set(found[:n].tolist())
            old = self.near[k]
            self.near[k] = new
            swap_cell_squares(self.body, self.fixtures, self.refcount, old, new, h, self.cell_center, self.friction,
                              self.restitution)

    def save_state(self) -> dict[str, Any]:
        """What :meth:`update` carries from one call to the next, for a world snapshot: the cells that have a square
        (in order), their reference counts, each moving body's cells and the cell it was in."""
        return {"cells": list(self.fixtures), "refcount": dict(self.refcount), "near": [sorted(s) for s in self.near],
                "last_cells": None if self.last_cells is None else self.last_cells.copy()}

    def restore_state(self, saved: dict[str, Any]) -> None:
        """Go back to a :meth:`save_state` result: squares are made or destroyed so that the same cells have one."""
        restore_cell_squares(self.body, self.fixtures, saved["cells"], GRID_HALF_WIDTH * self.resolution,
                             self.cell_center, self.friction, self.restitution)
        self.refcount = dict(saved["refcount"])
        self.near = [set(s) for s in saved["near"]]
        self.last_cells = None if saved["last_cells"] is None else saved["last_cells"].copy()
