"""The ground under the wheels: terrain height queries and the per-step vehicle attitude fit (reference §2.1 step 1,
§2.2, §1.9, §1.10, §1.13).

Frames and units: world frame x, y horizontal and z up, metres. Poses are (x, y, z, yaw, pitch, roll) with the
rotation of MRPT's ``CPose3D``: ``R = Rz(yaw) · Ry(pitch) · Rx(roll)``, angles in radians. With this convention a
**positive pitch turns the vehicle's +x axis downwards** (nose down): ``R · (1, 0, 0)`` has z component
``-sin(pitch)``. A vehicle climbing a ramp that rises along its heading therefore has a *negative* pitch. A
positive roll raises the vehicle's +y (left) side: ``R · (0, 1, 0)`` has z component ``cos(pitch) · sin(roll)``.

What is ground (:class:`Terrain`):

* world elements that provide heights: ``elevation_map`` (piecewise linear on 2 triangles per cell, the same
  triangulation as :meth:`ElevationMap.elevations_at`, evaluated here by a compiled kernel), ``horizontal_plane``
  (axis-aligned rectangle at ``z``, borders included; an animated one where it is now, after
  :meth:`Terrain.refresh_planes`), and any other element class that overrides ``elevation_at`` (asked point by
  point);
* the tops of blocks: ``pose.z + zmax`` inside the footprint for prisms (``<shape>``, default square, box, cylinder,
  sphere, walls); ``pose.z + lz · x_local / lx`` for ramps; ``pose.z + lz · sqrt(1 - (2 · y_local / ly)²)`` for
  semi-cylinder bumps (block-frame coordinates from the block's full 3D pose, as upstream). Intangible blocks are
  ground too, as upstream (they have no Box2D body, but MVSim's elevation query visits every block); pass
  ``include_intangible=False`` to leave them out;
* an implicit floor at z = 0 everywhere, **only when no world element provides ground** (a world made of an
  occupancy grid and blocks keeps its floor). Once an element provides ground, points outside every element have no
  ground (NaN) unless a block is there.

Differences from upstream, on purpose: upstream answers 0 where no height lies under the query point; here such points
are NaN and the fit skips those wheels. With only 1–2 wheels on the ground the vehicle takes their mean height with
zero pitch/roll (upstream leaves the pose untouched when a vehicle has fewer than 3 wheels). The yaw stays the one
given (the 2D physics owns it): the fitted rotation's z axis (the ground normal) is kept exactly and expressed as the
pitch/roll that go with that yaw.

Speed: the inner loops are numba kernels (compiled on first use, ~7 s, then cached on disk). Typical costs:
``height_at`` for 8 points ~5 µs on a plane-only world and ~6 µs with an elevation map and 20 blocks;
:meth:`Terrain.fit_vehicle` ~35 µs; :meth:`Terrain.fit_vehicles` ~160 µs for 25 four-wheel vehicles (timing test).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core.elements.base import WorldElement
from mvsim_core.elements.elevation_map import ElevationMap
from mvsim_core.elements.horizontal_plane import HorizontalPlane
from mvsim_core.geometry.rotation_kernels import rotation_entries
from mvsim_core.geometry.rotations import rotations
from mvsim_core.jit import njit

if TYPE_CHECKING:
    from mvsim_core.objects.vehicles.base import Vehicle
    from mvsim_core.world_model import WorldModel

EQUAL_HEIGHTS_TOL = 1e-4
"""m: wheel heights within this of the first wheel's count as flat ground (upstream's shortcut: no fit)."""

FIT_ITERATIONS = 2
"""Upstream re-projects the wheels and re-fits twice per step."""

DEFAULT_QUERY_OFFSET = 1.5
"""m above the written z where :func:`initial_z` looks for ground for objects without a ``zmax`` (actors)."""

KIND_PRISM, KIND_RAMP, KIND_BUMP = 0, 1, 2
"""Block surface kinds: flat top at ``zmax``; ramp rising along local x; semi-cylinder bump across local y."""


def slope_direction(pitch: float, roll: float, yaw: float = 0.0) -> np.ndarray:
    """Direction of gravity in the vehicle frame, ``R^T · (0, 0, -1)`` (unit vector, R as in the module docstring).

    Its x, y components times a weight (N) give the slope force that pulls the vehicle downhill (§2.2); on flat ground
    it is (0, 0, -1). It does not depend on ``yaw`` (the third row of R is yaw-free); the argument is accepted so
    callers can pass a whole pose.
    """
    del yaw
    cp = math.cos(pitch)
    return np.array([math.sin(pitch), -cp * math.sin(roll), -cp * math.cos(roll)])


def rigid_fit(local: np.ndarray, world: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Least-squares rigid transform (unit scale) with ``world ≈ R · local + t`` (Horn's problem, solved by SVD).

    :meth:`Terrain.fit_vehicles` runs a compiled equivalent; this one is for tests and tools.

    Args:
        local: (n, 3) points in the body frame, n >= 3.
        world: (n, 3) matching points in the world frame.

    Returns:
        (R 3×3, t 3), or None when the local points are (nearly) collinear and the rotation about their line is
        undetermined.
    """
    pc, qc = local.mean(axis=0), world.mean(axis=0)
    u, s, vt = np.linalg.svd((local - pc).T @ (world - qc))
    if s[1] <= 1e-9 * s[0]:
        return None
    rot = vt.T @ u.T
    if np.linalg.det(rot) < 0.0:
        vt[2] = -vt[2]
        rot = vt.T @ u.T
    return rot, qc - rot @ pc


def _contributes_ground(element: Any) -> bool:
    fn = getattr(type(element), "elevation_at", None)
    return fn is not None and fn is not WorldElement.elevation_at


# ---------------------------------------------------------------------------------------------------------- terrain
class Terrain:
    """Ground height of a world: elevation maps, horizontal planes, and the tops of blocks (boxes, cylinders, ramps,
    bumps), so vehicles can drive on ramps.

    Build it once per world; call :meth:`set_blocks` whenever blocks may have moved (cheap when the block list is
    unchanged), then :meth:`fit_vehicles` (all vehicles at once) or :meth:`fit_vehicle` each step.

    Attributes:
        has_implicit_floor: True when no element provides ground, so the floor is z = 0 everywhere.
        include_intangible: whether intangible blocks are ground.
        other_elements: ground elements without a vectorised form (asked point by point).
    """

    slope_direction = staticmethod(slope_direction)

    def __init__(self, elements: Sequence[Any], blocks: Iterable[Any] = (), *, include_intangible: bool = True) -> None:
        """
        Args:
            elements: the world's elements (any order; those that provide no height are ignored).
            blocks: the blocks to drive on (``mvsim_core.objects.block.Block``, or anything with ``footprint``,
                ``zmax``, ``geometry``, ``pose`` and ``is_intangible``).
            include_intangible: whether intangible blocks are ground (upstream: yes).
        """
        self.include_intangible = include_intangible
        self._grids: list[tuple[np.ndarray, float, float, float]] = []  # (heights, corner x, corner y, 1/resolution)
        planes: list[HorizontalPlane] = []
        self.other_elements: list[Any] = []
        for e in elements:
            if not _contributes_ground(e):
                continue
            if isinstance(e, ElevationMap):
                self._grids.append((np.ascontiguousarray(e.heights, dtype=np.float64), float(e.corner_min_x),
                                    float(e.corner_min_y), 1.0 / float(e.resolution)))
            elif isinstance(e, HorizontalPlane):
                planes.append(e)
            else:
                self.other_elements.append(e)
        self.has_implicit_floor = not (self._grids or planes or self.other_elements)
        self._plane_objs = planes
        self._moving_planes = [k for k, p in enumerate(planes) if p.is_animated]
        self._planes = np.zeros((len(planes), 5))
        self.refresh_planes(everything=True)
        self._block_ids: tuple[int, ...] | None = None
        self._below: tuple[Any, ...] | None = None  # blocks_up_to's last (pose array, z_lim, result)
        self._blocks: list[Any] = []
        self._poses: list[Any] | None = None
        self.set_blocks(blocks)

    def refresh_planes(self, *, everything: bool = False) -> None:
        """Read the current rectangles and heights of the animated horizontal planes (all planes with
        ``everything``) into the table the queries use; in place, so copies of this terrain see them too."""
        for k in range(len(self._plane_objs)) if everything else self._moving_planes:
            p = self._plane_objs[k]
            self._planes[k, :4] = p.rect
            self._planes[k, 4] = p.z

    @property
    def flat_z(self) -> float | None:
        """The ground height when the whole terrain is one level (planes at a single z, or the implicit floor, and
        no elevation map, other ground element or block to climb); None otherwise. Vehicles on such a terrain
        need no per-step fit: z is this value and pitch = roll = 0."""
        if self._grids or self.other_elements or self._blocks or self._moving_planes:
            return None
        zs = set(self._planes[:, 4].tolist())
        if self.has_implicit_floor:
            zs.add(0.0)
        return zs.pop() if len(zs) == 1 else None

    def ground_without_blocks(self) -> tuple[float, np.ndarray | None] | None:
        """The ground but the blocks, when it is one level: (z (m), rects) with rects (P, 4) the x_min, x_max,
        y_min, y_max (m, world frame) of the planes that hold it, or None for the implicit floor (everywhere);
        None when it is not one level (elevation maps, other ground elements, moving planes, planes at several
        heights)."""
        if self._grids or self.other_elements or self._moving_planes:
            return None
        if self.has_implicit_floor:
            return 0.0, None
        zs = set(self._planes[:, 4].tolist())
        if len(zs) != 1:
            return None
        return zs.pop(), self._planes[:, :4].copy()

    def block_boxes(self) -> tuple[np.ndarray, np.ndarray]:
        """(poses (B, 9), boxes (B, 4)), read only: each block's pose as the queries use it now (x, y, z in m, then
        the first two columns of its rotation) and the bounding box of its footprint in its own frame (x_min, x_max,
        y_min, y_max, m). A query point meets a block only inside its footprint (in the block frame, reached from the
        world by that rotation), so only inside that box."""
        return self._pose_tf, self._box

    def blocks_up_to(self, z_lim: float) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`block_boxes` of the blocks that may give ground at or below ``z_lim`` (m): all but the untilted
        prisms whose top (pose z + zmax) is above it — a query that looks no higher than ``z_lim`` never finds them
        (a wall, a tall column). Kept until a block moves (read only)."""
        tf = self._pose_tf
        cached = self._below
        if cached is not None and cached[0] is tf and cached[1] == z_lim:
            return cached[2], cached[3]
        keep = ((self._kind != KIND_PRISM) | (tf[:, 2] + self._top <= z_lim) | (tf[:, 5] != 0.0)
                | (tf[:, 8] != 0.0))
        if keep.all():
            out = (tf, self._box)
        else:
            out = (np.ascontiguousarray(tf[keep]), np.ascontiguousarray(self._box[keep]))
        self._below = (tf, z_lim, *out)
        return out

    @classmethod
    def from_world(cls, world: WorldModel, **kwargs: Any) -> Terrain:
        """The terrain of a loaded :class:`~mvsim_core.world.World`: its elements and all its blocks (walls too)."""
        return cls(world.elements, world.blocks.values(), **kwargs)

    # ------------------------------------------------------------------ blocks
    def set_blocks(self, blocks: Iterable[Any]) -> None:
        """Set the blocks that are ground, or refresh their poses.

        Passing the same block objects again (the usual case, every step) only re-reads their poses, and does nothing
        more when none moved: no geometry is rebuilt.
        """
        blocks = [b for b in blocks if self.include_intangible or not b.is_intangible]
        ids = tuple(map(id, blocks))
        if ids != self._block_ids:
            self._block_ids = ids
            self._blocks = blocks
            self._poses = None
            self._build_block_geometry()
        poses = [b.pose for b in blocks]
        if poses != self._poses:
            self._poses = poses
            self._set_block_poses(poses)

    def _build_block_geometry(self) -> None:
        blocks = self._blocks
        nb = len(blocks)
        pmax = max((len(b.footprint) for b in blocks), default=1)
        self._poly = np.zeros((nb, pmax, 2))  # footprints in the block frame, padded by repeating the last vertex
        self._nvert = np.zeros(nb, dtype=np.int64)
        self._kind = np.zeros(nb, dtype=np.int64)
        self._top = np.zeros(nb)  # prism: zmax; ramp / bump: lz
        self._size = np.ones((nb, 2))  # (lx, ly) of ramps and bumps
        radius = np.zeros(nb)
        for k, b in enumerate(blocks):
            fp = np.asarray(b.footprint, dtype=np.float64).reshape(-1, 2)
            self._poly[k, :len(fp)] = fp
            self._poly[k, len(fp):] = fp[-1]
            self._nvert[k] = len(fp)
            radius[k] = float(np.sqrt((fp ** 2).sum(axis=1)).max())
            g = b.geometry
            if g is not None and g.type in ("ramp", "semi_cylinder_bump"):
                self._kind[k] = KIND_RAMP if g.type == "ramp" else KIND_BUMP
                self._top[k], self._size[k] = g.dims["lz"], (g.dims["lx"], g.dims["ly"])
            else:
                self._top[k] = b.zmax
        self._radius2 = (radius * (1.0 + 1e-9) + 1e-9) ** 2
        self._box = np.zeros((nb, 4))
        for k in range(nb):
            fp = self._poly[k, :self._nvert[k]]
            self._box[k] = (fp[:, 0].min(), fp[:, 0].max(), fp[:, 1].min(), fp[:, 1].max())
        self._pose_tf = np.zeros((nb, 9))

    def _set_block_poses(self, poses: list[Any]) -> None:
        nb = len(poses)
        if nb == 0:
            return
        pose = np.array(poses, dtype=np.float64).reshape(nb, 6)
        rot = rotations(pose[:, 3], pose[:, 4], pose[:, 5])
        # per block: x, y, z, then columns 0 and 1 of R (block-frame x, y of p = (X, Y, 0) are R[:, k] · (p - t))
        self._pose_tf = np.ascontiguousarray(np.column_stack([pose[:, :3], rot[:, :, 0], rot[:, :, 1]]))

    # ------------------------------------------------------------------ queries
    def height_at(self, x: np.ndarray, y: np.ndarray, z_max: np.ndarray) -> np.ndarray:
        """Highest ground height (m) at world ``(x, y)`` that is not above ``z_max`` (m); NaN where there is none.

        Upstream asks at "the wheel contact point + 0.5 · diameter" (the wheel axis), so a wheel climbs onto a step
        lower than its radius and ignores a ceiling above its axis. Arguments are float arrays of one shape (other
        shapes are broadcast together); the result has that shape.
        """
        x, y, zq = (np.asarray(a, dtype=np.float64) for a in (x, y, z_max))
        if not (x.shape == y.shape == zq.shape):
            x, y, zq = np.broadcast_arrays(x, y, zq)
        shape = x.shape
        x, y, zq = (np.ascontiguousarray(a).reshape(-1) for a in (x, y, zq))
        best = np.where(zq >= 0.0, 0.0, -np.inf) if self.has_implicit_floor else np.full(x.shape, -np.inf)
        if len(self._planes):
            _planes_kernel(x, y, zq, self._planes, best)
        for heights, x0, y0, inv_res in self._grids:
            _grid_kernel(x, y, zq, heights, x0, y0, inv_res, best)
        for e in self.other_elements:
            for i in range(x.size):
                h = e.elevation_at(float(x[i]), float(y[i]))
                if h is not None and h <= zq[i] and h > best[i]:
                    best[i] = h
        if len(self._blocks):
            _blocks_kernel(x, y, zq, self._pose_tf, self._radius2, self._poly, self._nvert, self._kind, self._top,
                           self._size, best)
        best[best == -np.inf] = np.nan
        return best.reshape(shape)

    # ------------------------------------------------------------------ vehicles
    def fit_vehicles(self, x: np.ndarray, y: np.ndarray, yaw: np.ndarray, z: np.ndarray, pitch: np.ndarray,
                     roll: np.ndarray, wheel_xy: np.ndarray, wheel_diam: np.ndarray,
                     owner: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """New (z, pitch, roll) of every vehicle resting its wheels on the terrain (upstream's terrain step), with one
        :meth:`height_at` call per iteration for all wheels of all vehicles.

        Two iterations of: each wheel's contact point = world position of (wheel.x, wheel.y, 0) under the current
        pose (x, y, z, yaw, pitch, roll); its ground = :meth:`height_at` with ``z_max`` = contact z + diameter/2
        (NaN heights are skipped). Then, per vehicle:

        * all found heights within 1e-4 m of the first one: z = the first, pitch = roll = 0;
        * otherwise >= 3 heights, not all on one line: least-squares rigid fit (unit scale, Horn's problem solved by
          SVD) of the local contacts (wheel.x, wheel.y, 0) onto the world points (x_i, y_i, h_i); z = the fit's
          translation z; pitch and roll give the fitted z axis (the ground normal) together with the unchanged
          ``yaw``;
        * otherwise (1–2 heights, or collinear wheels): z = mean height, pitch = roll = 0;
        * no height at all: z, pitch, roll kept.

        Args:
            x, y, yaw: (V,) vehicle poses in the world (m, rad), from the 2D physics.
            z, pitch, roll: (V,) current z (m), pitch and roll (rad).
            wheel_xy: (W, 2) wheel positions in their vehicle's frame (m).
            wheel_diam: (W,) wheel diameters (m).
            owner: (W,) index in 0..V-1 of each wheel's vehicle.

        Returns:
            New (z, pitch, roll), each (V,) float64, m and rad.
        """
        x, y, yaw = (np.ascontiguousarray(a, dtype=np.float64).reshape(-1) for a in (x, y, yaw))
        z, pitch, roll = (np.array(a, dtype=np.float64).reshape(-1) for a in (z, pitch, roll))  # updated in place
        owner = np.ascontiguousarray(owner, dtype=np.int64).reshape(-1)
        local = np.ascontiguousarray(wheel_xy, dtype=np.float64).reshape(-1, 2)
        half_d = 0.5 * np.asarray(wheel_diam, dtype=np.float64).reshape(-1)
        if len(x) == 0 or len(owner) == 0:
            return z, pitch, roll
        if owner.min() < 0 or owner.max() >= len(x) or len(local) != len(owner) or len(half_d) != len(owner):
            raise ValueError("fit_vehicles: wheel_xy, wheel_diam and owner need one row per wheel, and owner values "
                             "in 0..V-1")
        pts = np.empty((len(owner), 3))
        for _ in range(FIT_ITERATIONS):
            _contact_points(x, y, yaw, z, pitch, roll, local, half_d, owner, pts)
            h = self.height_at(pts[:, 0], pts[:, 1], pts[:, 2])
            _fit_update(yaw, z, pitch, roll, local, owner, pts, h, EQUAL_HEIGHTS_TOL)
        return z, pitch, roll

    def fit_vehicle(self, x: float, y: float, yaw: float, wheel_xy: np.ndarray, wheel_diam: np.ndarray,
                    z_prev: float, pitch_prev: float, roll_prev: float) -> tuple[float, float, float]:
        """(z, pitch, roll) of one vehicle (m, rad): :meth:`fit_vehicles` for a single vehicle.

        Args:
            x, y, yaw: vehicle pose in the world (m, rad).
            wheel_xy: (n, 2) wheel positions in the vehicle frame (m); wheel_diam: (n,) diameters (m).
            z_prev, pitch_prev, roll_prev: current z (m), pitch and roll (rad).
        """
        wheel_xy = np.asarray(wheel_xy, dtype=np.float64).reshape(-1, 2)
        z, p, r = self.fit_vehicles(np.array([x]), np.array([y]), np.array([yaw]), np.array([z_prev]),
                                    np.array([pitch_prev]), np.array([roll_prev]), wheel_xy, wheel_diam,
                                    np.zeros(len(wheel_xy), dtype=np.int64))
        return float(z[0]), float(p[0]), float(r[0])


def wheel_arrays(vehicle: Vehicle) -> tuple[np.ndarray, np.ndarray]:
    """(n, 2) wheel positions (m, vehicle frame) and (n,) diameters (m), for :meth:`Terrain.fit_vehicle`."""
    wheels = vehicle.wheels
    xy = np.array([(w.x, w.y) for w in wheels], dtype=np.float64).reshape(-1, 2)
    diam = np.array([w.diameter for w in wheels], dtype=np.float64)
    return xy, diam


def initial_z(terrain: Terrain, x: float, y: float, z: float, zmax: float | None = None) -> float:
    """Initial z (m) of an object placed at world (x, y) with written height ``z`` (§1.13; not called when the object
    has ``<skip_elevation_adjust/>``).

    The result is the highest ground at (x, y) not above ``z + 0.5 · zmax`` (``zmax``: the block's ``zmax`` or the
    vehicle chassis ``zmax``, m), or not above ``z + 1.5`` m when ``zmax`` is None (other objects, as upstream). Where
    no ground lies under that point the written ``z`` is kept (upstream would use 0).
    """
    q = z + (DEFAULT_QUERY_OFFSET if zmax is None else 0.5 * zmax)
    h = float(terrain.height_at(np.array([x]), np.array([y]), np.array([q]))[0])
    return h if math.isfinite(h) else float(z)


# ---------------------------------------------------------------------------------------------------------- kernels
# Compiled with numba (cache=True: once per installation). They only read their inputs and write ``best`` / the
# pose arrays they are given.

@njit(cache=True)
def _planes_kernel(x, y, zq, rect, best):  # pragma: no cover (compiled)
    """Raise ``best`` to the planes (rows x_min, x_max, y_min, y_max, z) over each point, not above ``zq``."""
    for k in range(rect.shape[0]):
        x0, x1, y0, y1, z = rect[k, 0], rect[k, 1], rect[k, 2], rect[k, 3], rect[k, 4]
        for i in range(x.shape[0]):
            if z <= zq[i] and z > best[i] and x0 <= x[i] <= x1 and y0 <= y[i] <= y1:
                best[i] = z


@njit(cache=True)
def _grid_kernel(x, y, zq, heights, x0, y0, inv_res, best):  # pragma: no cover (compiled)
    """Raise ``best`` to an elevation grid's height (rows along +X, columns along +Y), as ``ElevationMap``."""
    rows, cols = heights.shape
    for i in range(x.shape[0]):
        u = (x[i] - x0) * inv_res
        v = (y[i] - y0) * inv_res
        if not (0.0 <= u <= rows - 1 and 0.0 <= v <= cols - 1):
            continue
        a = min(int(math.floor(u)), rows - 2)
        b = min(int(math.floor(v)), cols - 2)
        fx, fy = u - a, v - b
        z00 = heights[a, b]
        z11 = heights[a + 1, b + 1]
        if fy >= fx:
            z01 = heights[a, b + 1]
            h = z00 + fy * (z01 - z00) + fx * (z11 - z01)
        else:
            z10 = heights[a + 1, b]
            h = z00 + fx * (z10 - z00) + fy * (z11 - z10)
        if h <= zq[i] and h > best[i]:
            best[i] = h


@njit(cache=True)
def _blocks_kernel(x, y, zq, tf, radius2, poly, nvert, kind, top, size, best):  # pragma: no cover (compiled)
    """Raise ``best`` to the block surfaces under each point (even-odd point-in-polygon in the block frame)."""
    for k in range(tf.shape[0]):
        bx, by, bz = tf[k, 0], tf[k, 1], tf[k, 2]
        for i in range(x.shape[0]):
            dx, dy = x[i] - bx, y[i] - by
            if dx * dx + dy * dy > radius2[k]:
                continue
            lx = tf[k, 3] * dx + tf[k, 4] * dy - tf[k, 5] * bz
            ly = tf[k, 6] * dx + tf[k, 7] * dy - tf[k, 8] * bz
            n = nvert[k]
            inside = False
            j = n - 1
            for m in range(n):
                yi, yj = poly[k, m, 1], poly[k, j, 1]
                if (yi > ly) != (yj > ly):
                    xi, xj = poly[k, m, 0], poly[k, j, 0]
                    if lx < xi + (ly - yi) * (xj - xi) / (yj - yi):
                        inside = not inside
                j = m
            if not inside:
                continue
            if kind[k] == KIND_RAMP:
                h = bz + top[k] * lx / size[k, 0]
            elif kind[k] == KIND_BUMP:
                q = 2.0 * ly / size[k, 1]
                h = bz + top[k] * math.sqrt(max(0.0, 1.0 - q * q))
            else:
                h = bz + top[k]
            if h <= zq[i] and h > best[i]:
                best[i] = h


@njit(cache=True)
def _contact_points(x, y, yaw, z, pitch, roll, local, half_d, owner, out):  # pragma: no cover (compiled)
    """World (x, y) of each wheel's contact point (wheel.x, wheel.y, 0), and its query height z + diameter/2."""
    for w in range(owner.shape[0]):
        v = owner[w]
        r00, r01, _, r10, r11, _, r20, r21, _ = rotation_entries(yaw[v], pitch[v], roll[v])
        lx, ly = local[w, 0], local[w, 1]
        out[w, 0] = x[v] + r00 * lx + r01 * ly
        out[w, 1] = y[v] + r10 * lx + r11 * ly
        out[w, 2] = z[v] + r20 * lx + r21 * ly + half_d[w]


@njit(cache=True)
def _fit_update(yaw, z, pitch, roll, local, owner, pts, h, tol):  # pragma: no cover (compiled)
    """One fit of :meth:`Terrain.fit_vehicles` from the wheel heights ``h``: updates z, pitch, roll in place."""
    nv = z.shape[0]
    count = np.zeros(nv, dtype=np.int64)
    first = np.zeros(nv)
    flat = np.ones(nv, dtype=np.bool_)
    acc = np.zeros((nv, 5))  # sums of local x, y and of world x, y, z
    for w in range(owner.shape[0]):
        if math.isnan(h[w]):
            continue
        v = owner[w]
        if count[v] == 0:
            first[v] = h[w]
        elif abs(h[w] - first[v]) > tol:
            flat[v] = False
        count[v] += 1
        acc[v, 0] += local[w, 0]
        acc[v, 1] += local[w, 1]
        acc[v, 2] += pts[w, 0]
        acc[v, 3] += pts[w, 1]
        acc[v, 4] += h[w]
    cov = np.zeros((nv, 3, 3))  # sum (local - centroid)(world - centroid)^T; local z = 0, so row 2 stays 0
    for w in range(owner.shape[0]):
        v = owner[w]
        if math.isnan(h[w]) or flat[v] or count[v] < 3:
            continue
        n = count[v]
        lx, ly = local[w, 0] - acc[v, 0] / n, local[w, 1] - acc[v, 1] / n
        gx, gy, gz = pts[w, 0] - acc[v, 2] / n, pts[w, 1] - acc[v, 3] / n, h[w] - acc[v, 4] / n
        cov[v, 0, 0] += lx * gx
        cov[v, 0, 1] += lx * gy
        cov[v, 0, 2] += lx * gz
        cov[v, 1, 0] += ly * gx
        cov[v, 1, 1] += ly * gy
        cov[v, 1, 2] += ly * gz
    for v in range(nv):
        n = count[v]
        if n == 0:
            continue  # no ground under any wheel: keep the pose
        if flat[v]:
            z[v], pitch[v], roll[v] = first[v], 0.0, 0.0
            continue
        mean_z = acc[v, 4] / n
        if n >= 3:
            u, s, vt = np.linalg.svd(cov[v])
            if s[1] > 1e-9 * s[0]:
                rot = vt.T @ u.T
                if np.linalg.det(rot) < 0.0:
                    vt[2, :] = -vt[2, :]
                    rot = vt.T @ u.T
                # translation z = world centroid z - (R · local centroid)_z, the local centroid having z = 0
                z[v] = mean_z - (rot[2, 0] * acc[v, 0] + rot[2, 1] * acc[v, 1]) / n
                # the fitted z axis (ground normal), seen from the yawed frame: (sin p cos r, -sin r, cos p cos r)
                c, sn = math.cos(yaw[v]), math.sin(yaw[v])
                mx = c * rot[0, 2] + sn * rot[1, 2]
                my = -sn * rot[0, 2] + c * rot[1, 2]
                mz = rot[2, 2]
                pitch[v] = math.atan2(mx, mz)
                roll[v] = math.atan2(-my, math.hypot(mx, mz))
                continue
        z[v], pitch[v], roll[v] = mean_z, 0.0, 0.0
