"""Ray casting against elevation maps: the exact first crossing of a 3D ray with the terrain surface.

The surface is the one :class:`~mvsim_core.dynamics.terrain.Terrain` (and ``ElevationMap.elevation_at``) uses:
vertex ``(i, j)`` of the height matrix sits at world ``(corner_min_x + i·res, corner_min_y + j·res, heights[i, j])``
(rows along +X, columns along +Y); each cell is split into two triangles by the diagonal from vertex (i, j) to
(i+1, j+1), and the height is linear on each triangle. The surface is two-sided (seen from above and from below) and
has no skirt: a ray passing under its border meets nothing.

Acceleration: a min–max pyramid (:class:`HeightfieldPyramid`). Level 0 holds, per cell, the lowest and highest of its
4 corner heights — the exact height range of the cell's two triangles. Level ``l`` holds the range over blocks of
2^l × 2^l cells; the top level is one node. :func:`cast_heightfield` walks the ray through the nodes along its path
(a 2D DDA whose step size changes with the level): a node whose height range the ray's height range over the node
does not meet is skipped whole; otherwise the walk descends one level. At level 0 the two triangle planes are
intersected analytically, so the hit lies on the surface up to floating-point rounding. The walk climbs back up a
level whenever it leaves the parent node, so open space is crossed in large steps. Before walking, the ray is clipped
to the map's rectangle and to the slab between the map's lowest and highest point: an upward ray above the terrain
costs a few operations.

Several maps are packed into flat arrays (:class:`HeightfieldSet`) so that one compiled kernel sees them all.
Units: metres, world frame; ray parameters ``t`` are distances along unit direction vectors.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from mvsim_core.jit import njit

HF_COLS = 11
"""Columns of a map's row in :attr:`HeightfieldSet.meta`: x0, y0, res (m), rows, cols, height offset, first level
row, number of levels, lowest and highest height (m), intensity."""

Z_TOL = 1e-9
"""m: slack of the node height-range test (rounding of the ray height at the node borders)."""
T_TOL = 1e-9
"""m: slack of a triangle hit against its cell's entry/exit distances (the neighbour cell sees it otherwise)."""
F_TOL = 1e-12
"""Cell fraction: slack of the triangle-side test (a hit on the diagonal belongs to both triangles)."""


# ---------------------------------------------------------------------------------------------------- preparation
class HeightfieldPyramid:
    """Min–max pyramid of one height grid (see the module docstring).

    Attributes:
        heights: (rows, cols) float64 heights (m); rows along +X, columns along +Y.
        x0, y0: world position of vertex (0, 0) (m). res: vertex spacing (m).
        levels: list of (min, max) arrays per level, level 0 = cells ((rows − 1, cols − 1)), the last = (1, 1).
        zmin, zmax: lowest and highest height (m). NaN heights are holes: a cell with a NaN corner is never hit.
        intensity: lidar intensity of the surface (see :mod:`mvsim_core.sensors.lidar3d`).
    """

    def __init__(self, heights: np.ndarray, x0: float, y0: float, res: float, intensity: float = 1.0) -> None:
        h = np.ascontiguousarray(heights, dtype=np.float64)
        if h.ndim != 2 or h.shape[0] < 2 or h.shape[1] < 2:
            raise ValueError(f"a heightfield needs at least 2 × 2 vertices; got shape {h.shape}")
        self.heights = h
        self.x0, self.y0, self.res = float(x0), float(y0), float(res)
        self.intensity = float(intensity)
        corners = np.stack([h[:-1, :-1], h[1:, :-1], h[:-1, 1:], h[1:, 1:]])
        with np.errstate(invalid="ignore"):  # NaN heights are holes: their cells are never entered
            lo = np.where(np.isnan(corners).any(axis=0), np.inf, corners.min(axis=0))
            hi = np.where(np.isnan(corners).any(axis=0), -np.inf, corners.max(axis=0))
        self.levels: list[tuple[np.ndarray, np.ndarray]] = [(lo, hi)]
        while lo.shape != (1, 1):
            r, c = lo.shape
            pr, pc = r + (r & 1), c + (c & 1)  # pad to even sizes with neutral values
            plo = np.full((pr, pc), np.inf)
            phi = np.full((pr, pc), -np.inf)
            plo[:r, :c], phi[:r, :c] = lo, hi
            lo = plo.reshape(pr // 2, 2, pc // 2, 2).min(axis=(1, 3))
            hi = phi.reshape(pr // 2, 2, pc // 2, 2).max(axis=(1, 3))
            self.levels.append((lo, hi))
        finite = h[np.isfinite(h)]
        self.zmin = float(finite.min()) if finite.size else math.inf  # an empty slab: never entered
        self.zmax = float(finite.max()) if finite.size else -math.inf

    @classmethod
    def from_elevation_map(cls, element: object, intensity: float = 1.0) -> HeightfieldPyramid:
        """The pyramid of an :class:`~mvsim_core.elements.elevation_map.ElevationMap`."""
        return cls(element.heights, element.corner_min_x, element.corner_min_y,  # type: ignore[attr-defined]
                   element.resolution, intensity)  # type: ignore[attr-defined]

    def placed(self, x0: float, y0: float, res: float, intensity: float) -> HeightfieldPyramid:
        """This pyramid at another corner ``(x0, y0)`` [m], spacing ``res`` [m] and intensity: a new placement that
        shares the heights and levels (nothing is recomputed or copied)."""
        out = object.__new__(HeightfieldPyramid)
        out.__dict__.update(self.__dict__)
        out.x0, out.y0, out.res, out.intensity = float(x0), float(y0), float(res), float(intensity)
        return out


class HeightfieldSet:
    """Any number of pyramids packed for :func:`cast_heightfield`.

    Placements of one pyramid (:meth:`HeightfieldPyramid.placed`: copies of one elevation map at other corners)
    share its heights and node bounds: only their ``meta`` rows differ. A placement identical to an earlier one
    (same levels, corner, spacing and intensity: a map repeated at the same place) adds no row, as it would give
    the same hits.

    Attributes:
        meta: (M, :data:`HF_COLS`) float64, one row per distinct placement (see :data:`HF_COLS`).
        levels: (total levels, 3) int64: nodes along u (x), nodes along v (y), first node index in ``bounds``.
        heights: every distinct height grid, flattened row-major one after the other (m).
        bounds: (2 · total nodes,) float64: min and max (m) of every node, level after level, row-major.
        n_surfaces: number of distinct height grids stored (each prepared once).
    """

    def __init__(self, pyramids: Sequence[HeightfieldPyramid]) -> None:
        meta: list[list[float]] = []
        levels: list[list[int]] = []
        heights: list[np.ndarray] = []
        bounds: list[np.ndarray] = []
        stored: dict[int, tuple[int, int]] = {}  # id(levels) -> (height offset, first level row)
        placements: set[tuple[float, ...]] = set()
        h_off = node_off = 0
        for p in pyramids:
            rows, cols = p.heights.shape
            where = stored.get(id(p.levels))
            if where is None:
                where = stored[id(p.levels)] = (h_off, len(levels))
                heights.append(p.heights.reshape(-1))
                h_off += p.heights.size
                for lo, hi in p.levels:
                    levels.append([lo.shape[0], lo.shape[1], node_off])
                    bounds.append(np.column_stack([lo.reshape(-1), hi.reshape(-1)]).reshape(-1))
                    node_off += lo.size
            row = [p.x0, p.y0, p.res, rows, cols, where[0], where[1], len(p.levels), p.zmin, p.zmax, p.intensity]
            if tuple(row) in placements:
                continue
            placements.add(tuple(row))
            meta.append(row)
        self.n_surfaces = len(stored)
        self._pyramids = list(pyramids)  # keeps the levels alive while their ids key ``stored``
        self.meta = np.array(meta, dtype=np.float64).reshape(-1, HF_COLS)
        self.levels = np.array(levels, dtype=np.int64).reshape(-1, 3)
        self.heights = np.concatenate([np.zeros(0), *heights])
        self.bounds = np.concatenate([np.zeros(0), *bounds])

    def __len__(self) -> int:
        return len(self.meta)


# ---------------------------------------------------------------------------------------------------- kernels
@njit(cache=True, inline="always", _nrt=False)
def _plane_root(c0: float, c1: float, t0: float, t1: float) -> float:
    """Root of c0 + c1·t within [t0 − T_TOL, t1 + T_TOL] (t0 when the ray lies in the plane), else inf."""
    if c1 != 0.0:
        t = -c0 / c1
        if t0 - T_TOL <= t <= t1 + T_TOL:
            return t
        return math.inf
    return t0 if c0 == 0.0 else math.inf


@njit(cache=True, inline="always", _nrt=False)
def cell_hit(heights: np.ndarray, h_off: int, cols: int, a: int, b: int, u0: float, v0: float, du: float,
             dv: float, oz: float, dz: float, t0: float, t1: float) -> float:
    """First crossing (m along the ray) of the ray with the two triangles of cell (a, b) while the ray is over the
    cell, t in [t0, t1]; inf if none.

    The ray is u(t) = u0 + t·du, v(t) = v0 + t·dv (cell units of the map), z(t) = oz + t·dz (m).
    """
    k = h_off + a * cols + b
    z00 = heights[k]
    z01 = heights[k + 1]
    z10 = heights[k + cols]
    z11 = heights[k + cols + 1]
    fx0 = u0 - a
    fy0 = v0 - b
    best = math.inf
    # triangle fy >= fx: z = z00 + fy·(z01 − z00) + fx·(z11 − z01)
    gy, gx = z01 - z00, z11 - z01
    t = _plane_root(oz - (z00 + fy0 * gy + fx0 * gx), dz - (dv * gy + du * gx), t0, t1)
    if t < best and (fy0 + t * dv) - (fx0 + t * du) >= -F_TOL:
        best = t
    # triangle fy < fx: z = z00 + fx·(z10 − z00) + fy·(z11 − z10)
    gx, gy = z10 - z00, z11 - z10
    t = _plane_root(oz - (z00 + fx0 * gx + fy0 * gy), dz - (du * gx + dv * gy), t0, t1)
    if t < best and (fx0 + t * du) - (fy0 + t * dv) >= -F_TOL:
        best = t
    return best


@njit(cache=True, inline="always", _nrt=False)
def _node_index(w: float, dw: float, n: int) -> int:
    """Index of the node containing coordinate w (node units) for a ray moving by dw: on a border, the node the ray
    is entering. Clamped to [0, n − 1]."""
    if dw >= 0.0:
        i = int(math.floor(w))
    else:
        i = int(math.ceil(w)) - 1
    return min(max(i, 0), n - 1)


@njit(cache=True, _nrt=False)
def cast_heightfield(meta: np.ndarray, levels: np.ndarray, heights: np.ndarray, bounds: np.ndarray, m: int,
                     ox: float, oy: float, oz: float, dx: float, dy: float, dz: float, t_max: float) -> float:
    """Distance (m) along the unit ray o + t·d to its first crossing with map ``m`` of a :class:`HeightfieldSet`,
    for t in [0, t_max); inf if none.

    Args:
        meta, levels, heights, bounds: the arrays of a :class:`HeightfieldSet`. m: the map's row in ``meta``.
        ox, oy, oz: ray origin (m, world). dx, dy, dz: unit direction. t_max: farthest distance of interest (m).
    """
    x0, y0, res = meta[m, 0], meta[m, 1], meta[m, 2]
    rows, cols = int(meta[m, 3]), int(meta[m, 4])
    h_off, lv0, n_lv = int(meta[m, 5]), int(meta[m, 6]), int(meta[m, 7])
    gmin, gmax = meta[m, 8], meta[m, 9]
    inv = 1.0 / res
    u0, v0 = (ox - x0) * inv, (oy - y0) * inv
    du, dv = dx * inv, dy * inv
    cu, cv = float(rows - 1), float(cols - 1)
    # clip to the map rectangle and to the height slab [gmin, gmax]
    ta, tb = 0.0, t_max
    if du != 0.0:
        t1, t2 = -u0 / du, (cu - u0) / du
        if t1 > t2:
            t1, t2 = t2, t1
        ta, tb = max(ta, t1), min(tb, t2)
    elif u0 < 0.0 or u0 > cu:
        return math.inf
    if dv != 0.0:
        t1, t2 = -v0 / dv, (cv - v0) / dv
        if t1 > t2:
            t1, t2 = t2, t1
        ta, tb = max(ta, t1), min(tb, t2)
    elif v0 < 0.0 or v0 > cv:
        return math.inf
    if dz != 0.0:
        t1, t2 = (gmin - oz) / dz, (gmax - oz) / dz
        if t1 > t2:
            t1, t2 = t2, t1
        ta, tb = max(ta, t1 - T_TOL), min(tb, t2 + T_TOL)
    elif oz < gmin or oz > gmax:
        return math.inf
    ta = max(ta, 0.0)
    if not ta <= tb:  # (also when something is NaN)
        return math.inf
    idu = 1.0 / du if du != 0.0 else math.inf
    idv = 1.0 / dv if dv != 0.0 else math.inf
    top = n_lv - 1
    level = top
    nu, nv, noff = levels[lv0 + level, 0], levels[lv0 + level, 1], levels[lv0 + level, 2]
    s = float(1 << level)  # node size in cells at this level
    inv_s = 1.0 / s
    t = ta
    while True:
        iu = _node_index((u0 + t * du) * inv_s, du, nu)
        iv = _node_index((v0 + t * dv) * inv_s, dv, nv)
        if du > 0.0:
            tx = ((iu + 1) * s - u0) * idu
        elif du < 0.0:
            tx = (iu * s - u0) * idu
        else:
            tx = math.inf
        if dv > 0.0:
            ty = ((iv + 1) * s - v0) * idv
        elif dv < 0.0:
            ty = (iv * s - v0) * idv
        else:
            ty = math.inf
        tn = min(tx, ty, tb)
        if tn < t:
            tn = t
        za, zb = oz + t * dz, oz + tn * dz
        k = 2 * (noff + iu * nv + iv)
        if max(za, zb) + Z_TOL >= bounds[k] and min(za, zb) - Z_TOL <= bounds[k + 1]:
            if level > 0:  # look closer
                level -= 1
                s *= 0.5
                inv_s *= 2.0
                nu, nv, noff = levels[lv0 + level, 0], levels[lv0 + level, 1], levels[lv0 + level, 2]
                continue
            th = cell_hit(heights, h_off, cols, iu, iv, u0, v0, du, dv, oz, dz, t, tn)
            if th < math.inf:
                return max(th, 0.0)
        if tn >= tb:
            return math.inf
        # the next node at this level; climb while it lies in another parent node
        ju = iu + (1 if du > 0.0 else -1) if tx <= ty else iu
        jv = iv + (1 if dv > 0.0 else -1) if ty <= tx else iv
        if level < top and ((ju >> 1) != (iu >> 1) or (jv >> 1) != (iv >> 1)):
            while level < top and ((ju >> 1) != (iu >> 1) or (jv >> 1) != (iv >> 1)):
                level += 1
                s *= 2.0
                inv_s *= 0.5
                iu >>= 1
                iv >>= 1
                ju >>= 1
                jv >>= 1
            nu, nv, noff = levels[lv0 + level, 0], levels[lv0 + level, 1], levels[lv0 + level, 2]
        t = tn if tn > t else t + 1e-12 * (1.0 + t)
