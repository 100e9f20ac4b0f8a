"""Steep terrain steps as walls (reference §2.1 step 1, last part).

Box2D only sees the world from above, so a vehicle would drive straight through the edge of a raised platform or up
a cliff of an elevation map. Upstream MVSim therefore samples, each step, the terrain at the vertices of every
chassis contour (at 1.05 · ``zmax``) and, where the ground is more than 0.55 wheel diameters above the mean wheel
height, places a static Box2D square (half-size ``0.01 + 0.07 · speed``, snapped to a grid of that size) there.

This module does the same job with a few deliberate differences (:class:`TerrainObstacles`):

* **Where it looks.** Not only at the contour vertices but on a *band* around each vehicle: every point outside the
  vehicle's outline (chassis polygon plus a disc around each wheel, so that steered wheels are covered) and at most
  :data:`~.outline_band.BAND` m from it, sampled on a lattice of :data:`~.outline_band.SAMPLE_SPACING` m fixed in
  the vehicle frame (:mod:`.outline_band`). The samples are snapped to a world-aligned grid of :data:`CELL` m cells,
  and the ground is asked at the centres of the cells they hit -- one :meth:`Terrain.height_at` call for all cells of
  all vehicles that need an update. The lattice is fine enough that every cell lying wholly in the band is hit, so
  the wall has no holes.
* **What is a step.** The reference is the ground plane the vehicle stands on (through its reference point at height
  ``z``, tilted by its pitch and roll), i.e. upstream's mean wheel height on level ground, but a vehicle on a constant
  slope does not see the slope ahead of it as a step. A cell is a step when either

  - the highest ground at the cell centre that is not above the chassis top (reference + 1.05 · ``zmax``, as
    upstream) is more than 0.55 · (mean wheel diameter) above the reference, or
  - there is no ground at all up to the chassis top but there is ground higher up: a cliff taller than the vehicle
    (upstream misses these: its query ignores ground above 1.05 · ``zmax``).

  Ground that only lies above the chassis top, over drivable ground, is a ceiling (a higher storey, a table top) and
  no wall. Points with no ground at all (off the edge of every element) are no wall either, as upstream.
* **What is built.** One static body holds every square. Of a vehicle's step cells only those facing it get a
  square -- those with a non-step cell of its band among their 8 neighbours, or reaching within a cell of its outline
  -- so a wall is one or two cells thick instead of filling the band: Box2D computes a time of impact for every
  (fattened-AABB) pair of a dynamic and a static fixture each step, so contacts are what a wall costs. Each square is
  axis-aligned with half-size :data:`HALF_SIZE` (= half a cell, so neighbouring squares join into a solid wall)
  instead of upstream's speed-dependent size: the band is deeper than a vehicle moves between two updates at any
  sensible speed, and Box2D's continuous collision keeps dynamic bodies from tunnelling through static fixtures. A
  square is only *created* where it keeps at least :data:`SKIN_GAP` from every vehicle (no violent push-out of a
  vehicle placed over a step, or standing on ground that is a step for its neighbour; a cell skipped so is tried
  again at the next evaluation of its vehicle); existing squares stay while they face a vehicle, including while it
  touches them. Cells are reference-counted over vehicles (as the
  occupancy-grid obstacles of :mod:`mvsim_core.dynamics.grid_obstacles`): a square disappears when no vehicle's band
  holds it as a wall cell any more. The squares act on every body, as upstream's.
* **What is ground here.** The terrain's elevation maps, horizontal planes and other ground elements, blocks
  without a Box2D body (intangible ones), and ramps and bumps (vehicles do not collide with their bodies: the high
  end of a ramp is a wall through this rule); other blocks with a body already collide in Box2D and are left out.

Cost: :meth:`TerrainObstacles.update` returns at once when that ground is one level (``flat_z``), and after one
compiled check when no vehicle moved more than :data:`MOVE_TOLERANCE` (position, yaw, z, pitch and roll, measured at
the edge of its band) since its band was last evaluated. A vehicle that moved costs one compiled pass over its band
samples (~775 for the default differential robot, ~400 cells), its share of the height query, and Python set
operations only where step cells are near. Measured on the dev machine (Python 3.11, median of many calls): flat
ground 0.07 µs per call; steps about but nobody moved 0.7 µs; one evaluation of one robot ~30 µs (band cells 11 µs,
height query 10 µs); 25 robots driving on an elevation map (each evaluated every few steps) ~27 µs per step on
average. A robot pressed against a wall touches ~20 squares; its Box2D step went from 49 to 68 µs.

Frames and units: world frame x, y horizontal, z up; vehicle frame x forward, y left, origin = reference point;
metres and radians.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from mvsim_core.dynamics.cell_squares import restore_cell_squares, swap_cell_squares
from mvsim_core.dynamics.outline_band import band_discs, band_samples
from mvsim_core.geometry.rotation_kernels import rotation_entries
from mvsim_core.jit import njit

STEP_FACTOR = 0.55
"""A cell is a step when its ground is more than this x the vehicle's mean wheel diameter above the reference."""
CLEARANCE_FACTOR = 1.05
"""Ground is looked for up to this x the chassis ``zmax`` above the reference (upstream's representative height)."""
CELL = 0.05
"""m: side of the world-aligned grid cells the squares snap to (upstream snaps to its square size)."""
HALF_SIZE = 0.5 * CELL
"""m: half side of a square (upstream: 0.01 + 0.07 · speed)."""
SKIN_GAP = 0.02
"""m: two Box2D 2.3 polygon skins; a new square keeps at least this from the vehicle outline."""
CLEAR_DISTANCE = math.sqrt(2.0) * HALF_SIZE + SKIN_GAP
"""m: a new square is made only if its centre is at least this far from every vehicle's outline (chassis polygon
and wheel discs), so that it keeps :data:`SKIN_GAP` from them (a square reaches half a diagonal from its centre)."""
MOVE_TOLERANCE = 0.02
"""m: a vehicle's band is evaluated again once any of its samples may have moved more than this (or its reference
plane moved more than this at the band's edge)."""
OBSTACLE_FRICTION, OBSTACLE_RESTITUTION = 0.5, 0.1
"""Of the squares (upstream's values)."""

_OFFSET = 1 << 30  # cell index offset, so that keys of cells within ±2^30 cells of the origin are non-negative
_SHIFT = 31


def cell_key(ix: int, iy: int) -> int:
    """Key of grid cell (ix, iy): ``(ix + 2^30) · 2^31 + (iy + 2^30)``."""
    return ((ix + _OFFSET) << _SHIFT) | (iy + _OFFSET)


def cell_center(key: int, cell: float = CELL) -> tuple[float, float]:
    """World (x, y) (m) of the centre of the cell with key ``key``."""
    ix = (key >> _SHIFT) - _OFFSET
    iy = (key & ((1 << _SHIFT) - 1)) - _OFFSET
    return (ix + 0.5) * cell, (iy + 0.5) * cell


# ---------------------------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def _moved(state, z, pitch, roll, last, radius, active, tol, out):  # pragma: no cover (compiled)
    """Indices (into ``out``) of the active vehicles whose band may have moved more than ``tol`` since ``last``
    (rows x, y, yaw, z, pitch, roll; NaN = never evaluated); returns their count."""
    n = 0
    for k in range(state.shape[0]):
        if not active[k]:
            continue
        dyaw = state[k, 2] - last[k, 2]
        dyaw = (dyaw + math.pi) % (2.0 * math.pi) - math.pi
        shift = (abs(state[k, 0] - last[k, 0]) + abs(state[k, 1] - last[k, 1]) + abs(z[k] - last[k, 3])
                 + radius[k] * (abs(dyaw) + abs(pitch[k] - last[k, 4]) + abs(roll[k] - last[k, 5])))
        if not shift <= tol:  # NaN (first call) counts as moved
            out[n] = k
            n += 1
    return n


@njit(cache=True)
def _band_cells(lx, ly, ld, start, which, state, z, pitch, roll, clearance, cell, out_key, out_xy, out_ref,
                out_zq, out_dmin, out_start):  # pragma: no cover (compiled)
    """The grid cells hit by the band samples of the vehicles ``which``, each cell once per vehicle.

    For vehicle ``which[j]`` its cells are rows ``out_start[j]:out_start[j + 1]`` of: key (ascending), centre (x, y),
    reference height at the centre (the vehicle's ground plane), query height (reference + clearance), and the
    smallest outline distance of a sample in the cell. Returns the number of rows.
    """
    n = 0
    for j in range(which.shape[0]):
        k = which[j]
        out_start[j] = n
        a, b = start[k], start[k + 1]
        m = b - a
        if m == 0:
            continue
        x0, y0, yaw = state[k, 0], state[k, 1], state[k, 2]
        cy, sy = math.cos(yaw), math.sin(yaw)
        _, _, nx, _, _, ny, _, _, nz = rotation_entries(yaw, pitch[k], roll[k])  # ground normal, R · (0, 0, 1)
        gx, gy = (-nx / nz, -ny / nz) if nz > 1e-6 else (0.0, 0.0)
        keys = np.empty(m, dtype=np.int64)
        for i in range(a, b):
            wx = x0 + cy * lx[i] - sy * ly[i]
            wy = y0 + sy * lx[i] + cy * ly[i]
            ix = int(math.floor(wx / cell))
            iy = int(math.floor(wy / cell))
            keys[i - a] = ((ix + _OFFSET) << _SHIFT) | (iy + _OFFSET)
        order = np.argsort(keys)
        prev = -1
        for t in order:
            key = keys[t]
            if key != prev:
                prev = key
                ix = (key >> _SHIFT) - _OFFSET
                iy = (key & ((1 << _SHIFT) - 1)) - _OFFSET
                cx, ccy = (ix + 0.5) * cell, (iy + 0.5) * cell
                ref = z[k] + gx * (cx - x0) + gy * (ccy - y0)
                out_key[n] = key
                out_xy[n, 0], out_xy[n, 1] = cx, ccy
                out_ref[n] = ref
                out_zq[n] = ref + clearance[k]
                out_dmin[n] = ld[a + t]
                n += 1
            elif ld[a + t] < out_dmin[n - 1]:
                out_dmin[n - 1] = ld[a + t]
    out_start[which.shape[0]] = n
    return n


@njit(cache=True)
def _wall_cells(keys, low, high, ref, dmin, which, threshold, starts, touch, step, out):  # pragma: no cover
    """Step cells (``step``) and the wall cells among them (``out``) of the bands of the vehicles ``which``
    (vehicle ``which[j]`` owns rows ``starts[j]:starts[j + 1]``, keys ascending).

    A cell is a step when its ground up to the chassis top (``low``) is more than the vehicle's ``threshold`` above
    the reference ``ref``, or when it has no ground up to there (NaN) but some above (``high`` not NaN). A step
    cell is a wall cell when one of its 8 neighbours is a band cell of the same vehicle that is no step, or when it
    reaches within ``touch`` of the vehicle's outline (its inner neighbours may then hold no sample). Step cells
    shielded by other step cells are left out: one layer stops a vehicle as well as four, with far fewer Box2D
    contacts.
    """
    one_x = np.int64(1) << _SHIFT
    for j in range(which.shape[0]):
        a, b = starts[j], starts[j + 1]
        thr = threshold[which[j]]
        for i in range(a, b):
            if math.isnan(low[i]):
                step[i] = not math.isnan(high[i])
            else:
                step[i] = low[i] - ref[i] > thr
        seg = keys[a:b]
        for i in range(a, b):
            out[i] = False
            if not step[i]:
                continue
            if dmin[i] < touch:
                out[i] = True
                continue
            for ddx in (-one_x, np.int64(0), one_x):
                for ddy in (-1, 0, 1):
                    if ddx == 0 and ddy == 0:
                        continue
                    q = keys[i] + ddx + ddy
                    p = np.searchsorted(seg, q)
                    if p < seg.shape[0] and seg[p] == q and not step[a + p]:
                        out[i] = True
                        break
                if out[i]:
                    break


@njit(cache=True)
def _poly_distance(px, py, poly, a, b):  # pragma: no cover (compiled)
    """Signed distance (m) of (px, py) to polygon ``poly[a:b]``: positive outside, negative inside (even-odd)."""
    best = 1e300
    inside = False
    j = b - 1
    for i in range(a, b):
        x0, y0, x1, y1 = poly[j, 0], poly[j, 1], poly[i, 0], poly[i, 1]
        ex, ey = x1 - x0, y1 - y0
        ee = ex * ex + ey * ey
        t = 0.0 if ee == 0.0 else min(1.0, max(0.0, ((px - x0) * ex + (py - y0) * ey) / ee))
        dx, dy = px - x0 - t * ex, py - y0 - t * ey
        best = min(best, dx * dx + dy * dy)
        if (y1 > py) != (y0 > py) and px < x0 + (py - y0) * ex / ey:
            inside = not inside
        j = i
    d = math.sqrt(best)
    return -d if inside else d


@njit(cache=True)
def _clear_of_vehicles(xy, state, poly, pstart, discs, dstart, radius, margin, out):  # pragma: no cover (compiled)
    """``out[i]`` = point ``xy[i]`` (world, m) is at least ``margin`` from every vehicle's chassis polygon
    (``poly[pstart[k]:pstart[k + 1]]``, vehicle frame) and wheel discs (``discs[dstart[k]:dstart[k + 1]]``, rows x,
    y, r); ``radius[k]`` bounds vehicle k's outline around its origin."""
    for i in range(xy.shape[0]):
        out[i] = True
        for k in range(state.shape[0]):
            dx, dy = xy[i, 0] - state[k, 0], xy[i, 1] - state[k, 1]
            reach = radius[k] + margin
            if dx * dx + dy * dy >= reach * reach:
                continue
            c, s = math.cos(state[k, 2]), math.sin(state[k, 2])
            lx, ly = c * dx + s * dy, -s * dx + c * dy
            d = 1e300
            if pstart[k + 1] - pstart[k] >= 3:
                d = _poly_distance(lx, ly, poly, pstart[k], pstart[k + 1])
            for w in range(dstart[k], dstart[k + 1]):
                d = min(d, math.hypot(lx - discs[w, 0], ly - discs[w, 1]) - discs[w, 2])
            if d < margin:
                out[i] = False
                break


# ---------------------------------------------------------------------------------------------------------- class
class TerrainObstacles:
    """Steep terrain steps become walls: around each vehicle, ground that rises more than 0.55 wheel diameters above
    the vehicle's wheel contacts gets small static Box2D squares, so vehicles stop at cliffs/steps instead of
    climbing them (upstream §2.1; the differences are listed in the module docstring).

    Attributes:
        body: the static Box2D body (at the world origin, angle 0) holding every square.
        fixtures: cell key -> square fixture (see :func:`cell_key`, :func:`cell_center`).
        refcount: cell key -> number of vehicles whose band holds that step cell.
        near: per vehicle (world order), the keys of the step cells in its band at its last evaluation.
        flat: True when the ground these walls come from is one level; :meth:`update` is then a no-op.
        enabled: set False to make :meth:`update` a no-op (call :meth:`clear` too to drop the squares made so far).
        threshold: (V,) step height of each vehicle, 0.55 x its mean wheel diameter (m).
        clearance: (V,) 1.05 x chassis ``zmax`` (m).
        evaluations: number of band evaluations so far (one per vehicle that moved), for tests and profiling.
    """

    def __init__(self, bodies: Any, terrain: Any, vehicles: Sequence[Any]) -> None:
        """
        Args:
            bodies: the world's :class:`~mvsim_core.dynamics.bodies.Bodies` (its ``b2world`` gets the static body;
                its ``block_bodies`` tell which blocks already collide).
            terrain: the world's :class:`~mvsim_core.dynamics.terrain.Terrain`; a copy without the blocks that have a
                Box2D body is queried.
            vehicles: the vehicles, in the order of the rows of the state arrays passed to :meth:`update`.
        """
        import copy

        self.bodies = bodies
        self.body = bodies.b2world.CreateStaticBody(position=(0.0, 0.0))
        self.body.userData = "terrain_obstacles"
        self.fixtures: dict[int, Any] = {}
        self.refcount: dict[int, int] = {}
        self.evaluations = 0
        self.enabled = True
        # the ground: everything the terrain holds but the blocks that are Box2D bodies (those collide already)
        self.ground = copy.copy(terrain)
        blocks = list(getattr(terrain, "_blocks", []))
        self._ground_blocks = [b for b in blocks if getattr(b, "name", None) not in bodies.block_bodies
                               or getattr(b, "is_drivable", False)]
        self.ground.set_blocks(self._ground_blocks)
        self.flat = self.ground.flat_z is not None
        n = len(vehicles)
        self.near: list[set[int]] = [set() for _ in range(n)]
        self.threshold = np.zeros(n)
        self.clearance = np.zeros(n)
        self._band_radius = np.zeros(n)
        self._active = np.zeros(n, dtype=np.bool_)
        pts, dists, counts = [], [], []
        polys, all_discs = [], []
        outline_radius = np.zeros(n)
        bands: dict[tuple[bytes, tuple[tuple[float, float, float], ...]], tuple[np.ndarray, np.ndarray]] = {}
        for k, v in enumerate(vehicles):
            wheels = list(v.wheels)
            discs = band_discs(wheels)
            fp = np.asarray(v.chassis.footprint, dtype=np.float64).reshape(-1, 2)
            key = (fp.tobytes(), tuple(discs))  # vehicles of one class share their band (1.5 ms each to sample)
            if self.flat:  # (no steps on one level: the bands are never evaluated, and a fleet's would weigh MBs)
                bands.setdefault(key, (np.zeros((0, 2)), np.zeros(0)))
            elif key not in bands:
                bands[key] = band_samples(fp, discs)
            p, d = bands[key]
            pts.append(p)
            dists.append(d)
            counts.append(len(p))
            polys.append(fp)
            all_discs.append(np.asarray(discs, dtype=np.float64).reshape(-1, 3))
            reach = [float(np.hypot(fp[:, 0], fp[:, 1]).max())] if len(fp) else []
            reach += [math.hypot(x, y) + r for x, y, r in discs]
            outline_radius[k] = max(reach, default=0.0)
            if wheels and len(p):
                self._active[k] = True
                self.threshold[k] = STEP_FACTOR * float(np.mean([w.diameter for w in wheels]))
                self.clearance[k] = CLEARANCE_FACTOR * float(v.chassis.zmax)
                self._band_radius[k] = float(np.hypot(p[:, 0], p[:, 1]).max())
        self._poly = np.ascontiguousarray(np.concatenate(polys)) if n else np.zeros((0, 2))
        self._pstart = np.concatenate([[0], np.cumsum([len(q) for q in polys])]).astype(np.int64)
        self._discs = np.ascontiguousarray(np.concatenate(all_discs)) if n else np.zeros((0, 3))
        self._dstart = np.concatenate([[0], np.cumsum([len(q) for q in all_discs])]).astype(np.int64)
        self._outline_radius = outline_radius
        self._lx = np.ascontiguousarray(np.concatenate(pts)[:, 0]) if n else np.zeros(0)
        self._ly = np.ascontiguousarray(np.concatenate(pts)[:, 1]) if n else np.zeros(0)
        self._ld = np.ascontiguousarray(np.concatenate(dists)) if n else np.zeros(0)
        self._start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self._last = np.full((n, 6), np.nan)
        self._which = np.zeros(n, dtype=np.int64)
        size = int(self._start[-1])
        self._key = np.zeros(size, dtype=np.int64)
        self._xy = np.zeros((size, 2))
        self._ref = np.zeros(size)
        self._zq = np.zeros(size)
        self._dmin = np.zeros(size)
        self._wall = np.zeros(size, dtype=np.bool_)
        self._step = np.zeros(size, dtype=np.bool_)
        self._qx, self._qy, self._qz = np.zeros(2 * size), np.zeros(2 * size), np.zeros(2 * size)
        self._out_start = np.zeros(n + 1, dtype=np.int64)
        self._zeros = np.zeros(n)

    @property
    def count(self) -> int:
        """Number of squares in the Box2D world now."""
        return len(self.fixtures)

    def centers(self) -> np.ndarray:
        """(n, 2) world (x, y) of the squares' centres (m)."""
        return np.array([cell_center(k) for k in self.fixtures], dtype=np.float64).reshape(-1, 2)

    def update(self, state: np.ndarray, z: np.ndarray, pitch: np.ndarray | None = None,
               roll: np.ndarray | None = None) -> None:
        """Bring the squares in line with the vehicles' current poses; call once per step before the Box2D step.

        Args:
            state: (V, >=3) rows x, y (m), yaw (rad) of each vehicle's reference point in the world (further
                columns are ignored), e.g. :attr:`Physics.state`.
            z: (V,) height of each reference point (m): the ground under it.
            pitch, roll: (V,) attitude (rad) of the ground plane under each vehicle; None: level (the reference is
                then ``z`` itself, upstream's mean wheel height).
        """
        if self.flat or not self.enabled or not self.near:
            return
        if pitch is None:
            pitch = self._zeros
        if roll is None:
            roll = self._zeros
        nm = _moved(state, z, pitch, roll, self._last, self._band_radius, self._active, MOVE_TOLERANCE, self._which)
        if nm == 0:
            return
        which = self._which[:nm]
        self._evaluate(which, state, z, pitch, roll)
        last = self._last
        last[which, :3] = state[which, :3]
        last[which, 3] = z[which]
        last[which, 4] = pitch[which]
        last[which, 5] = roll[which]

    def ground_moved(self, state: np.ndarray, rects: Sequence[tuple[float, float, float, float]]) -> None:
        """Ground moved under these world rectangles (x_min, x_max, y_min, y_max; m), e.g. an elevator's plane: the
        vehicles whose band reaches one of them are evaluated again at the next :meth:`update`, moved or not.

        Args:
            state: (V, >=2) x, y (m) of each vehicle's reference point.
        """
        if self.flat or not self.enabled or not len(self._last):
            return
        x, y = state[:, 0], state[:, 1]
        reach = self._band_radius + 2.0 * CELL
        for x0, x1, y0, y1 in rects:
            dx = np.maximum(np.maximum(x0 - x, x - x1), 0.0)
            dy = np.maximum(np.maximum(y0 - y, y - y1), 0.0)
            self._last[np.hypot(dx, dy) <= reach] = np.nan

    def clear(self) -> None:
        """Remove every square (e.g. before the vehicles are teleported far away); the next :meth:`update` evaluates
        every band again."""
        for f in self.fixtures.values():
            self.body.DestroyFixture(f)
        self.fixtures.clear()
        self.refcount.clear()
        for s in self.near:
            s.clear()
        self._last[:] = np.nan

    def save_state(self) -> dict[str, Any]:
        """What :meth:`update` carries from one call to the next, for a world snapshot: the cells that have a square
        (in order), their reference counts, each vehicle's wall cells, where each band was last evaluated, and the
        evaluation count."""
        return {"cells": list(self.fixtures), "refcount": dict(self.refcount), "near": [sorted(s) for s in self.near],
                "last": self._last.copy(), "evaluations": self.evaluations}

    def restore_state(self, saved: dict[str, Any]) -> None:
        """Go back to a :meth:`save_state` result: squares are made or destroyed so that the same cells have one."""
        restore_cell_squares(self.body, self.fixtures, saved["cells"], HALF_SIZE, cell_center, OBSTACLE_FRICTION,
                             OBSTACLE_RESTITUTION)
        self.refcount = dict(saved["refcount"])
        self.near = [set(s) for s in saved["near"]]
        np.copyto(self._last, saved["last"])
        self.evaluations = int(saved["evaluations"])

    # ------------------------------------------------------------------ internals
    def _evaluate(self, which: np.ndarray, state: np.ndarray, z: np.ndarray, pitch: np.ndarray,
                  roll: np.ndarray) -> None:
        """Re-evaluate the bands of the vehicles ``which`` and create / destroy squares accordingly."""
        if self._ground_blocks:
            self.ground.set_blocks(self._ground_blocks)  # cheap when none moved
        st = np.ascontiguousarray(state, dtype=np.float64)
        n = _band_cells(self._lx, self._ly, self._ld, self._start, which, st,
                        np.ascontiguousarray(z, dtype=np.float64), np.ascontiguousarray(pitch, dtype=np.float64),
                        np.ascontiguousarray(roll, dtype=np.float64), self.clearance, CELL, self._key, self._xy,
                        self._ref, self._zq, self._dmin, self._out_start)
        self.evaluations += len(which)
        qx, qy, qz = self._qx[:2 * n], self._qy[:2 * n], self._qz[:2 * n]
        qx[:n] = qx[n:] = self._xy[:n, 0]
        qy[:n] = qy[n:] = self._xy[:n, 1]
        qz[:n] = self._zq[:n]
        qz[n:] = np.inf
        h = self.ground.height_at(qx, qy, qz)
        starts = self._out_start
        wall = self._wall[:n]
        _wall_cells(self._key, h[:n], h[n:], self._ref, self._dmin, which, self.threshold, starts, CELL,
                    self._step, wall)
        keys = self._key[:n]
        # the wall cells of each vehicle; new squares only where they keep clear of every vehicle
        wanted: list[tuple[int, set[int]]] = []
        fresh: set[int] = set()
        for j, k in enumerate(which.tolist()):
            a, b = starts[j], starts[j + 1]
            sel = wall[a:b]
            if not self.near[k] and not sel.any():
                continue
            cells = set(keys[a:b][sel].tolist())
            wanted.append((k, cells))
            fresh.update(c for c in cells if c not in self.fixtures)
        if not wanted:
            return
        blocked: set[int] = set()
        if fresh:
            cand = list(fresh)
            xy = np.array([cell_center(c) for c in cand], dtype=np.float64).reshape(-1, 2)
            ok = np.empty(len(cand), dtype=np.bool_)
            _clear_of_vehicles(xy, st, self._poly, self._pstart, self._discs, self._dstart, self._outline_radius,
                               CLEAR_DISTANCE, ok)
            blocked = {c for c, good in zip(cand, ok.tolist(), strict=True) if not good}
        for k, cells in wanted:
            new = cells - blocked if blocked else cells
            self._swap(self.near[k], new)
            self.near[k] = new

    def _swap(self, old: set[int], new: set[int]) -> None:
        """Reference counts and squares for one vehicle whose step cells went from ``old`` to ``new``."""
        swap_cell_squares(self.body, self.fixtures, self.refcount, old, new, HALF_SIZE, cell_center,
                          OBSTACLE_FRICTION, OBSTACLE_RESTITUTION)
