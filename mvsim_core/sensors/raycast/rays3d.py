"""Everything a 3D ray can hit in a world, and one call that casts every ray of every 3D lidar due at a step.

What is in the scene (:class:`RaycastScene3D`), all in the world frame, metres:

* horizontal planes (``<element class="horizontal_plane">``): rectangles at height z, seen from both sides; an
  animated one (an elevator) where it is at each cast;
* the implicit floor: the plane z = 0 everywhere, **only when no element provides ground** — the rule of
  :class:`~mvsim_core.dynamics.terrain.Terrain`, so the lidar sees the floor the vehicles drive on. (Upstream draws no
  floor, only the ``ground_grid`` lines; a rendered lidar there sees nothing below the horizon in such a world.)
* elevation maps: the exact triangle surface, :mod:`.heightfield`;
* solids, :mod:`.solids`: static and intangible blocks (``<walls>`` included; ramps and bumps with their sloped and
  curved tops, other blocks as prisms of their footprint from zmin to zmax), the 3D pieces of vertical planes around
  their doors and windows; and, placed from the physics state at every cast, each vehicle (chassis prism and one
  cylinder per wheel, with the vehicle's z, pitch, roll and the wheels' steering), each dynamic block (x, y, yaw
  from its body, z, pitch, roll as declared; wheels whose ``<visual>`` models load are those models, turned by
  their steering but not spun), each animated block (where its keyframe track has it now) and each
  actor (its person-shaped figure, :meth:`~mvsim_core.objects.actor.Actor.figure`: a body cylinder and a head, as
  tall and wide as its collision size when that is given, else 1.8 m × 0.5 m; where its walk has it now).
  Intangible blocks are drawn by upstream, hence seen by its rendered lidar: they are seen here too — but not
  visual-only ones (``<visual_only>``, the ROS ``runtime_overlays``), which upstream draws in its GUI only;
* occupancy grids: each occupied cell (occupancy > 0.5) is a box from z = 0 to :data:`GRID_WALL_HEIGHT`, as for
  the cameras and ``raytrace_3d`` 2D lidars (:data:`~mvsim_core.elements.occupancy_grid.CELL_HEIGHT`).

Visual models: a block, a vehicle chassis or a wheel whose ``<visual>`` models load is seen as their triangles, not as
its prism, ramp, bump or cylinder — what the cameras draw; bodies without a model that loads keep their analytic
shapes. Actors stay their figures. Static blocks' models go, in the world frame, to one Embree scene
(:mod:`.embree_meshes`, the faster engine), cast for all rays before the kernel, whose hits bound the kernel's
search; models that move (vehicle chassis and wheels, dynamic and animated blocks) go to our trees (:mod:`.bvh`: one
per model set, in the body's frame, shared by bodies with the same models), as do static ones when Embree is not
there or ``MVSIM_MESH_ENGINE=numba``.
Not in the scene: point clouds, ground grids, skyboxes.

Casting (:meth:`RaycastScene3D.cast`): one compiled call traces every ray of every sensor. Per sensor, the solids
within reach (not carried by the sensor's vehicle) are filed by the angular sectors their bounding circle covers,
seen from the sensor in the x-y plane; each ray then tests planes, the solids of its sector and the elevation maps,
keeping the nearest hit, each test bounded by the nearest so far. Occupancy grids follow in a second pass (the 2D
distance-field caster of :mod:`.grid`, started where the ray enters the cells' height band).

Threads: :func:`trace_sensors_parallel` shares each sensor's rays among numba's threads (chunks of :data:`CHUNK`
rays handed out one at a time), for casts of at least :data:`THREADED_RAYS_3D` rays when ``MVSIM_THREADS``
(:mod:`mvsim_core.threads`; default: one per core) allows more than one thread; ``RaycastScene3D.parallel`` forces it
on or off. On the 2-core machine of this project a VLP-16 sweep over the benchmark terrain took 3.7–4.5 ms on 2
threads against 7.1 ms on one when the second core was free, but 8.0 ms when another process kept it busy
(``MVSIM_THREADS=1`` is then the better setting).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core.elements.occupancy_grid import CELL_HEIGHT
from mvsim_core.geometry.rotations import rotation
from mvsim_core.jit import njit, prange
from mvsim_core.objects.actor import STAND_IN_COLOR
from mvsim_core.sensors.raycast.bvh import STACK_SIZE, MeshBVHSet
from mvsim_core.sensors.raycast.embree_meshes import EmbreeMeshes, embree_sensor_rays, use_embree
from mvsim_core.sensors.raycast.grid import GridCaster
from mvsim_core.sensors.raycast.heightfield import HeightfieldPyramid, HeightfieldSet, cast_heightfield
from mvsim_core.sensors.raycast.segments import N_SECTORS, SECTOR_PAD, pseudo_angle
from mvsim_core.sensors.raycast.solids import (
    C_CIRCLE,
    C_INTENSITY,
    C_KIND,
    C_OWNER,
    C_ZHI,
    C_ZLO,
    KIND_MESH,
    NO_OWNER,
    SolidTable,
    hit_mesh_solid,
    hit_solid,
    place_solids,
)
from mvsim_core.threads import threaded, use_threads

if TYPE_CHECKING:
    from mvsim_core.dynamics.physics import Physics
    from mvsim_core.world_model import WorldModel

GRID_WALL_HEIGHT = CELL_HEIGHT
"""m: occupied cells of occupancy grids are boxes from z = 0 to this height (one value for every sensor)."""

DEFAULT_INTENSITY = 1.0
"""Intensity of surfaces without a colour (the implicit floor, occupancy-grid cells)."""

PLANE_COLS = 6  # x_min, x_max, y_min, y_max, z (m), intensity
THREADED_RAYS_3D = 8192
"""Casts of at least this many rays go to :func:`trace_sensors_parallel` by default (see the module docstring)."""

CHUNK = 256
"""Rays per work item of the threaded kernel."""


def luminance(color: Any) -> float:
    """Intensity of a colour (r, g, b[, a]) of 0..255 values: its Rec. 709 luma, 0.2126 R + 0.7152 G + 0.0722 B,
    scaled to [0, 1]. None gives :data:`DEFAULT_INTENSITY`."""
    if color is None:
        return DEFAULT_INTENSITY
    r, g, b = (float(c) for c in tuple(color)[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255.0


# ---------------------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def _file_solids(tab: np.ndarray, ox: float, oy: float, oz: float, reach: float, owner: int,
                 n_sectors: int) -> tuple[np.ndarray, np.ndarray]:
    """The solids a sensor at (ox, oy, oz) can reach, filed by sector: CSR (start (n_sectors + 1,), items).

    A solid whose bounding circle contains the origin's x-y goes to every sector; others to the sectors their
    circle spans, seen from the origin (pseudo-angles, :func:`~.segments.pseudo_angle`, padded by SECTOR_PAD).
    """
    n = tab.shape[0]
    cand = np.empty(n, dtype=np.int64)
    c_s0 = np.empty(n, dtype=np.int64)
    c_ns = np.empty(n, dtype=np.int64)
    nc = 0
    scale = n_sectors * 0.25
    for k in range(n):
        if owner >= 0 and tab[k, C_OWNER] == owner:
            continue
        if tab[k, C_ZLO] > oz + reach or tab[k, C_ZHI] < oz - reach:
            continue
        wx, wy, rad = tab[k, C_CIRCLE] - ox, tab[k, C_CIRCLE + 1] - oy, tab[k, C_CIRCLE + 2]
        dist = math.hypot(wx, wy)
        if not dist - rad < reach:  # (also drops a solid whose pose is not finite)
            continue
        cand[nc] = k
        if dist <= rad * (1.0 + 1e-9):
            c_s0[nc], c_ns[nc] = 0, n_sectors
            nc += 1
            continue
        sa = rad / dist
        ca = math.sqrt(max(0.0, 1.0 - sa * sa))
        pa = pseudo_angle(wx * ca + wy * sa, -wx * sa + wy * ca)  # the tangent at −α
        pb = pseudo_angle(wx * ca - wy * sa, wx * sa + wy * ca)  # the tangent at +α
        span = pb - pa
        if span < 0.0:
            span += 4.0
        lo = pa - SECTOR_PAD
        if lo < 0.0:
            lo += 4.0
        s0 = int(lo * scale)
        s1 = int((lo + span + 2.0 * SECTOR_PAD) * scale)
        c_s0[nc], c_ns[nc] = s0, min(s1 - s0 + 1, n_sectors)
        nc += 1
    start = np.zeros(n_sectors + 1, dtype=np.int64)
    total = 0
    for i in range(nc):
        for q in range(c_ns[i]):
            start[(c_s0[i] + q) % n_sectors + 1] += 1
        total += c_ns[i]
    for q in range(n_sectors):
        start[q + 1] += start[q]
    items = np.empty(total, dtype=np.int64)
    fill = start[:-1].copy()
    for i in range(nc):
        for q in range(c_ns[i]):
            sq = (c_s0[i] + q) % n_sectors
            items[fill[sq]] = cand[i]
            fill[sq] += 1
    return start, items


@njit(cache=True, inline="always", _nrt=False)
def _trace(ox: float, oy: float, oz: float, dx: float, dy: float, dz: float, reach: float, planes: np.ndarray,
           hf_meta: np.ndarray, hf_levels: np.ndarray, hf_heights: np.ndarray, hf_bounds: np.ndarray,
           tab: np.ndarray, verts: np.ndarray, mesh_box: np.ndarray, mesh_ref: np.ndarray, mesh_tri: np.ndarray,
           stack: np.ndarray, sec_start: np.ndarray, sec_items: np.ndarray, n_sectors: int, t0: float,
           i0: float) -> tuple[float, float]:
    """Nearest hit of one unit ray: (distance in m, inf if none before ``reach``; intensity of the surface).
    ``t0``, ``i0``: a hit found before (the static mesh models, :mod:`.embree_meshes`; inf and 0 for none)."""
    if not abs(dx) + abs(dy) + abs(dz) < math.inf:  # a non-finite direction hits nothing (and its NaN
        return math.inf, 0.0                         # pseudo-angle never becomes a sector index)
    best = reach
    inten = 0.0
    if t0 < best:
        best = t0
        inten = i0
    if dz != 0.0:
        for p in range(planes.shape[0]):
            t = (planes[p, 4] - oz) / dz
            if 0.0 <= t < best:
                x, y = ox + t * dx, oy + t * dy
                if planes[p, 0] <= x <= planes[p, 1] and planes[p, 2] <= y <= planes[p, 3]:
                    best = t
                    inten = planes[p, 5]
    sq = min(int(pseudo_angle(dx, dy) * (n_sectors * 0.25)), n_sectors - 1)
    for j in range(sec_start[sq], sec_start[sq + 1]):
        k = sec_items[j]
        if tab[k, C_KIND] == KIND_MESH:
            t = hit_mesh_solid(tab, k, mesh_box, mesh_ref, mesh_tri, stack, ox, oy, oz, dx, dy, dz, best)
        else:
            t = hit_solid(tab, verts, k, ox, oy, oz, dx, dy, dz, best)
        if t < best:
            best = t
            inten = tab[k, C_INTENSITY]
    for m in range(hf_meta.shape[0]):
        t = cast_heightfield(hf_meta, hf_levels, hf_heights, hf_bounds, m, ox, oy, oz, dx, dy, dz, best)
        if t < best:
            best = t
            inten = hf_meta[m, 10]
    if best < reach:
        return best, inten
    return math.inf, 0.0


@njit(cache=True, inline="always", _nrt=False)
def _world_dir(rot: np.ndarray, s: int, dirs: np.ndarray, r: int) -> tuple[float, float, float]:
    """R_s · dirs[r]: a sensor-frame direction in the world frame."""
    a, b, c = dirs[r, 0], dirs[r, 1], dirs[r, 2]
    return (rot[s, 0, 0] * a + rot[s, 0, 1] * b + rot[s, 0, 2] * c,
            rot[s, 1, 0] * a + rot[s, 1, 1] * b + rot[s, 1, 2] * c,
            rot[s, 2, 0] * a + rot[s, 2, 1] * b + rot[s, 2, 2] * c)


@njit(cache=True, _nrt=False)
def _trace_range(ox: float, oy: float, oz: float, rot: np.ndarray, s: int, dirs: np.ndarray, r0: int, r1: int,
                 reach: float, planes: np.ndarray, hf_meta: np.ndarray, hf_levels: np.ndarray, hf_heights: np.ndarray,
                 hf_bounds: np.ndarray, tab: np.ndarray, verts: np.ndarray, mesh_box: np.ndarray,
                 mesh_ref: np.ndarray, mesh_tri: np.ndarray, stack: np.ndarray, sec_start: np.ndarray,
                 sec_items: np.ndarray, n_sectors: int, out_t: np.ndarray, out_i: np.ndarray) -> None:
    """Rays r0 .. r1 − 1 of sensor s (its solids filed in ``sec_start``/``sec_items``; ``stack``: scratch for the
    mesh trees, :data:`~.bvh.STACK_SIZE` int64); no hits at all for a sensor whose pose is not finite."""
    finite = math.isfinite(ox) and math.isfinite(oy) and math.isfinite(oz)
    for i in range(3):
        for j in range(3):
            finite = finite and math.isfinite(rot[s, i, j])
    if not finite:
        for r in range(r0, r1):
            out_t[r] = math.inf
            out_i[r] = 0.0
        return
    for r in range(r0, r1):
        dx, dy, dz = _world_dir(rot, s, dirs, r)
        t, inten = _trace(ox, oy, oz, dx, dy, dz, reach, planes, hf_meta, hf_levels, hf_heights, hf_bounds, tab,
                          verts, mesh_box, mesh_ref, mesh_tri, stack, sec_start, sec_items, n_sectors, out_t[r],
                          out_i[r])
        out_t[r] = t
        out_i[r] = inten


@njit(cache=True)
def trace_sensors(origin: np.ndarray, rot: np.ndarray, dir_start: np.ndarray, dirs: np.ndarray, reach: np.ndarray,
                  owner: np.ndarray, planes: np.ndarray, hf_meta: np.ndarray, hf_levels: np.ndarray,
                  hf_heights: np.ndarray, hf_bounds: np.ndarray, tab: np.ndarray, verts: np.ndarray,
                  mesh_box: np.ndarray, mesh_ref: np.ndarray, mesh_tri: np.ndarray, n_sectors: int,
                  out_t: np.ndarray, out_i: np.ndarray) -> None:
    """Trace the rays of S sensors, one thread.

    Args:
        origin: (S, 3) sensor positions (m, world). rot: (S, 3, 3) sensor-to-world rotations.
        dir_start: (S + 1,) sensor s owns rays ``dir_start[s]:dir_start[s+1]``. dirs: (N, 3) unit ray directions in
            their sensor's frame. reach: (S,) max range (m). owner: (S,) vehicle index of each sensor (−1: none).
        planes: (P, 6) horizontal rectangles (x_min, x_max, y_min, y_max, z, intensity).
        hf_meta, hf_levels, hf_heights, hf_bounds: the elevation maps (:class:`~.heightfield.HeightfieldSet`).
        tab, verts: the solids (:mod:`.solids`). mesh_box, mesh_ref, mesh_tri: the trees of the mesh solids
            (:class:`~.bvh.MeshBVHSet`). n_sectors: angular sectors per sensor.
        out_t: (N,) distance of each ray's hit (m), inf for none. out_i: (N,) intensity of the surface hit (0: none).
            On entry, a hit each ray has already (the static mesh models of :mod:`.embree_meshes`; inf and 0 for
            none): it bounds the search and is kept unless something nearer is met.

    The per-ray functions are compiled without numba's reference counting (``_nrt=False``: they only read arrays
    they are given): with it, every call that passes the scene's arrays on costs a pair of atomic reference-count
    updates per array and per ray (measured: about half of the time of a ray that meets nothing).
    """
    stack = np.empty(STACK_SIZE, dtype=np.int64)
    for s in range(origin.shape[0]):
        ox, oy, oz = origin[s, 0], origin[s, 1], origin[s, 2]
        start, items = _file_solids(tab, ox, oy, oz, reach[s], owner[s], n_sectors)
        _trace_range(ox, oy, oz, rot, s, dirs, dir_start[s], dir_start[s + 1], reach[s], planes, hf_meta, hf_levels,
                     hf_heights, hf_bounds, tab, verts, mesh_box, mesh_ref, mesh_tri, stack, start, items, n_sectors,
                     out_t, out_i)


@njit(cache=True, parallel=True)
def trace_sensors_parallel(origin: np.ndarray, rot: np.ndarray, dir_start: np.ndarray, dirs: np.ndarray,
                           reach: np.ndarray, owner: np.ndarray, planes: np.ndarray, hf_meta: np.ndarray,
                           hf_levels: np.ndarray, hf_heights: np.ndarray, hf_bounds: np.ndarray, tab: np.ndarray,
                           verts: np.ndarray, mesh_box: np.ndarray, mesh_ref: np.ndarray, mesh_tri: np.ndarray,
                           n_sectors: int, out_t: np.ndarray, out_i: np.ndarray) -> None:
    """:func:`trace_sensors` with the rays of each sensor shared among numba's threads, in chunks of
    :data:`CHUNK` rays."""
    for s in range(origin.shape[0]):
        ox, oy, oz = origin[s, 0], origin[s, 1], origin[s, 2]
        start, items = _file_solids(tab, ox, oy, oz, reach[s], owner[s], n_sectors)
        r0, r1 = dir_start[s], dir_start[s + 1]
        n_chunks = (r1 - r0 + CHUNK - 1) // CHUNK
        for c in prange(n_chunks):
            a = r0 + c * CHUNK
            stack = np.empty(STACK_SIZE, dtype=np.int64)
            _trace_range(ox, oy, oz, rot, s, dirs, a, min(a + CHUNK, r1), reach[s], planes, hf_meta, hf_levels,
                         hf_heights, hf_bounds, tab, verts, mesh_box, mesh_ref, mesh_tri, stack, start, items,
                         n_sectors, out_t, out_i)


@njit(cache=True)
def grid_rays(origin: np.ndarray, rot: np.ndarray, dir_start: np.ndarray, dirs: np.ndarray, reach: np.ndarray,
              out_t: np.ndarray, z_lo: float, z_hi: float, gx: np.ndarray, gy: np.ndarray, gdx: np.ndarray,
              gdy: np.ndarray, g_reach: np.ndarray, g_t0: np.ndarray, g_h: np.ndarray) -> None:
    """The 2D rays that find occupancy-grid cells (boxes from z_lo to z_hi, m) for the 3D rays of
    :func:`trace_sensors`: each starts where its 3D ray enters the height band [z_lo, z_hi] and ends where it leaves
    it or at its current hit.

    Outputs per ray: gx, gy (m) 2D origin; gdx, gdy unit 2D direction (0, 0 for a vertical ray); g_reach (m, 2D
    length, −1 when the ray never is in the band before its hit); g_t0 (m along the 3D ray) of the 2D origin; g_h
    horizontal length per metre of 3D ray.
    """
    for s in range(origin.shape[0]):
        ox, oy, oz = origin[s, 0], origin[s, 1], origin[s, 2]
        finite = math.isfinite(ox) and math.isfinite(oy) and math.isfinite(oz) and np.isfinite(rot[s]).all()
        for r in range(dir_start[s], dir_start[s + 1]):
            if not finite:
                g_reach[r], g_t0[r], g_h[r] = -1.0, 0.0, 0.0
                gx[r], gy[r], gdx[r], gdy[r] = 0.0, 0.0, 0.0, 0.0
                continue
            dx, dy, dz = _world_dir(rot, s, dirs, r)
            ta, tb = 0.0, min(out_t[r], reach[s])
            if dz != 0.0:
                t1, t2 = (z_lo - oz) / dz, (z_hi - oz) / dz
                ta, tb = max(ta, min(t1, t2)), min(tb, max(t1, t2))
            elif oz < z_lo or oz > z_hi:
                tb = -1.0
            h = math.hypot(dx, dy)
            g_t0[r], g_h[r] = ta, h
            if tb < ta:
                g_reach[r] = -1.0
                gx[r], gy[r], gdx[r], gdy[r] = ox, oy, 0.0, 0.0
                continue
            gx[r], gy[r] = ox + ta * dx, oy + ta * dy
            if h > 0.0:
                gdx[r], gdy[r] = dx / h, dy / h
            else:
                gdx[r], gdy[r] = 0.0, 0.0
            g_reach[r] = (tb - ta) * h + 1e-9


@njit(cache=True)
def merge_grid_hits(g_in: np.ndarray, g_out: np.ndarray, g_t0: np.ndarray, g_h: np.ndarray, out_t: np.ndarray,
                    out_i: np.ndarray, intensity: float) -> None:
    """Keep the grid hits of :func:`grid_rays` that come before each ray's current hit."""
    for r in range(g_in.shape[0]):
        if g_in[r] > 0.0 and g_out[r] < g_in[r]:
            t = g_t0[r] + (g_out[r] / g_h[r] if g_h[r] > 0.0 else 0.0)
            if t < out_t[r]:
                out_t[r] = t
                out_i[r] = intensity


# ---------------------------------------------------------------------------------------------------- the scene
class RaycastScene3D:
    """The 3D ray-castable geometry of a world (see the module docstring).

    Attributes:
        planes: (P, 6) horizontal rectangles (x_min, x_max, y_min, y_max, z in m; intensity); the implicit floor is
            an unbounded one. heightfields: the elevation maps. grids: one :class:`GridCaster` per occupancy grid.
        tab, verts: the solid table and prism vertices (static rows first, then moving ones).
        n_static: number of static solids. n_vehicles: vehicles in the physics order.
        parallel: True: always :func:`trace_sensors_parallel` (numba's threads) when more than one thread is
            allowed; False: always :func:`trace_sensors`; None (the default): threads for casts of at least
            :data:`THREADED_RAYS_3D` rays (see the module docstring).
    """

    def __init__(self, world: WorldModel, physics: Physics | None = None, grids: list[GridCaster] | None = None,
                 *, n_sectors: int = N_SECTORS, parallel: bool | None = None, embree: bool | None = None) -> None:
        """Prepare the scene of ``world``; ``physics`` gives the live poses (None: the objects' declared poses).
        ``grids``: prepared casters of the world's occupancy grids (e.g. shared with the 2D scene), else built.
        ``embree``: static mesh models through Embree (default: :func:`~.embree_meshes.use_embree`)."""
        from mvsim_core.dynamics.terrain import Terrain
        from mvsim_core.elements.elevation_map import ElevationMap
        from mvsim_core.elements.horizontal_plane import HorizontalPlane
        from mvsim_core.elements.occupancy_grid import OccupancyGrid

        self.world = world
        self.physics = physics
        self.n_sectors = int(n_sectors)
        self.parallel = parallel
        self.ray_tables: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}
        """Sensor-frame ray directions of lists of 3D lidars (by their ids) and their row offsets
        (the ray tables of :mod:`mvsim_core.sensors.lidar3d`, kept here per list of sensors)."""
        rows: list[list[float]] = []
        self._moving_planes: list[tuple[int, HorizontalPlane]] = []  # (row, animated plane: an elevator)
        for el in world.elements:
            if isinstance(el, HorizontalPlane):
                if el.is_animated:
                    self._moving_planes.append((len(rows), el))
                rows.append([*el.rect, el.z, luminance(el.params.color)])
        self.has_implicit_floor = Terrain(world.elements).has_implicit_floor
        if self.has_implicit_floor:
            rows.append([-math.inf, math.inf, -math.inf, math.inf, 0.0, DEFAULT_INTENSITY])
        self.planes = np.array(rows, dtype=np.float64).reshape(-1, PLANE_COLS)
        # one pyramid per distinct height grid: copies of one map share their heights (elsewhere: another corner)
        pyramids: dict[int, HeightfieldPyramid] = {}
        placed: list[HeightfieldPyramid] = []
        for el in world.elements:
            if isinstance(el, ElevationMap) and el.heights.shape[0] >= 2 and el.heights.shape[1] >= 2:
                first = pyramids.get(id(el.heights))
                if first is None:
                    first = pyramids[id(el.heights)] = HeightfieldPyramid(el.heights, 0.0, 0.0, el.resolution)
                placed.append(first.placed(el.corner_min_x, el.corner_min_y, el.resolution,
                                           luminance(el.params.mesh_color)))
        self.heightfields = HeightfieldSet(placed)
        if grids is None:
            grids = [GridCaster.from_grid_map(el.grid) for el in world.elements if isinstance(el, OccupancyGrid)]
        self.grids = list(grids)
        self._static_blocks = [b for b in world.blocks.values()
                               if (b.is_static or b.is_intangible) and not b.is_visual_only]
        if physics is not None:
            self._vehicles = list(physics.vehicles)
            self._dynamic_blocks = [world.blocks[n] for n in physics.dynamic_blocks]
        else:
            self._vehicles = list(world.vehicles.values())
            self._dynamic_blocks = [b for b in world.blocks.values() if not b.is_static and not b.is_intangible]
        self._animated = np.array([b.is_animated for b in self._dynamic_blocks], dtype=np.bool_)
        self._actors = list(world.actors.values())
        self.n_vehicles = len(self._vehicles)
        self.embree = use_embree() if embree is None else bool(embree)
        self.meshes = MeshBVHSet()
        self._build()

    @classmethod
    def from_world(cls, world: WorldModel, physics: Physics | None = None, **kwargs: Any) -> RaycastScene3D:
        """The scene of ``world`` (static parts prepared now; moving ones placed at each :meth:`cast`)."""
        return cls(world, physics, **kwargs)

    # ------------------------------------------------------------------ geometry
    def _static_signature(self) -> list[tuple[float, ...]]:
        return [tuple(b.pose) for b in self._static_blocks]

    def _build(self) -> None:
        """(Re)build the solid table: static solids at their current poses, then the moving ones."""
        from mvsim_core.elements.vertical_plane import VerticalPlane

        st = SolidTable()
        self.static_meshes: list[EmbreeMeshes] = []
        ghost_rows: list[int] = []
        models: dict[bool, tuple[list[tuple[np.ndarray, np.ndarray]], list[float]]] = {False: ([], []),
                                                                                      True: ([], [])}
        for b in self._static_blocks:
            pose = tuple(b.pose)
            model = visual_model(b.visuals) if self.embree else None
            if model is not None:
                x, y, z, yaw, pitch, roll = pose
                world_verts = model[0] @ rotation(yaw, pitch, roll).T + (x, y, z)
                models[bool(b.is_intangible)][0].append((world_verts, model[1]))
                models[bool(b.is_intangible)][1].append(luminance(b.params["color"]))
                continue
            row = _add_block(st, b, pose, self.meshes)
            if b.is_intangible:
                ghost_rows.append(row)
        for ghost in (False, True):
            if models[ghost][0]:
                self.static_meshes.append(EmbreeMeshes(*models[ghost], intangible=ghost))
        for el in self.world.elements:
            if isinstance(el, VerticalPlane):
                inten = luminance(el.params.color)
                for piece in el.segments():
                    st.add_prism(piece.polygon, piece.z_min, piece.z_max, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
                                 intensity=inten)
        self.n_static = len(st)
        # moving solids: row, parent (index into the parent poses: vehicles, dynamic blocks, actors), offset
        parent: list[int] = []
        offset: list[tuple[float, float, float, float]] = []
        wheel_slots: list[int] = []  # slots of the wheels, and the turn about z of each one's frame beyond its yaw
        wheel_turn: list[float] = []
        for k, v in enumerate(self._vehicles):
            pose = tuple(v.pose)
            ch = v.chassis
            mesh = visual_mesh(self.meshes, v.visuals)
            if mesh is not None:
                st.add_mesh(*mesh, pose, owner=k, intensity=luminance(ch.color))
            else:
                st.add_prism(ch.footprint, ch.zmin, ch.zmax, pose, owner=k, intensity=luminance(ch.color))
            parent.append(k)
            offset.append((0.0, 0.0, 0.0, 0.0))
            for w in v.wheels:
                r = 0.5 * w.diameter
                wheel_slots.append(len(parent))
                parent.append(k)
                wheel_mesh = visual_mesh(self.meshes, w.visuals)
                if wheel_mesh is not None:  # its models, in the wheel frame (centre of the wheel, x forward)
                    st.add_mesh(*wheel_mesh, pose, owner=k, intensity=luminance(w.color))
                    offset.append((w.x, w.y, r, w.yaw))
                    wheel_turn.append(0.0)
                    continue
                st.add_cylinder((-0.5 * w.width, 0.5 * w.width, -r, r, 0.0, 2.0 * r), 0.0, r, r, r, pose, owner=k,
                                intensity=luminance(w.color))
                offset.append((w.x, w.y, 0.0, w.yaw + 0.5 * math.pi))
                wheel_turn.append(0.5 * math.pi)
        for j, b in enumerate(self._dynamic_blocks):
            _add_block(st, b, tuple(b.pose), self.meshes)
            parent.append(self.n_vehicles + j)
            offset.append((0.0, 0.0, 0.0, 0.0))
        first_actor = self.n_vehicles + len(self._dynamic_blocks)
        inten = luminance(STAND_IN_COLOR)
        for j, a in enumerate(self._actors):
            for poly, z0, z1 in a.figure():
                st.add_prism(poly, z0, z1, tuple(a.pose), owner=NO_OWNER, intensity=inten)
                parent.append(first_actor + j)
                offset.append((0.0, 0.0, 0.0, 0.0))
        self.tab, self.verts = st.arrays()
        mesh_rows = np.flatnonzero(self.tab[:, C_KIND] == KIND_MESH)
        self.mesh_rows_2d = np.setdiff1d(mesh_rows, np.array(ghost_rows, dtype=np.int64)).astype(np.int64)
        """Rows of the mesh solids that 2D ``raytrace_3d`` rays meet (not intangible blocks)."""
        self._moving_rows = np.arange(self.n_static, len(st), dtype=np.int64)
        self._moving_parent = np.array(parent, dtype=np.int64)
        self._moving_offset = np.array(offset, dtype=np.float64).reshape(-1, 4)
        self._wheel_slots = np.array(wheel_slots, dtype=np.int64)
        self._wheel_turn = np.array(wheel_turn, dtype=np.float64)
        self._static_key = self._static_signature()

    def place_moving(self) -> None:
        """Put vehicles (chassis, wheels with their steering), dynamic and animated blocks and actors at their
        current poses; rebuild the static solids if a static block was moved (``World.set_pose``)."""
        if self._static_blocks and self._static_signature() != self._static_key:
            self._build()
        if len(self._moving_rows) == 0:
            return
        nv = self.n_vehicles
        nb = len(self._dynamic_blocks)
        pp = np.empty((nv + nb + len(self._actors), 6))
        ph = self.physics
        if ph is not None:
            st = ph.state
            pp[:nv, 0], pp[:nv, 1], pp[:nv, 2] = st[:, 0], st[:, 1], ph.z
            pp[:nv, 3], pp[:nv, 4], pp[:nv, 5] = st[:, 2], ph.pitch, ph.roll
            if len(self._wheel_slots):
                self._moving_offset[self._wheel_slots, 3] = ph.wheels.yaw + self._wheel_turn
            if self._dynamic_blocks:
                bs = ph.bodies.read_states(ph.dynamic_blocks)
                for j, b in enumerate(self._dynamic_blocks):
                    if self._animated[j]:  # its track's pose, exact (Box2D keeps float32)
                        pp[nv + j] = b.pose
                        continue
                    _, _, z, _, pitch, roll = b.pose
                    pp[nv + j] = (bs[j, 0], bs[j, 1], z, bs[j, 2], pitch, roll)
        else:
            for k, v in enumerate(self._vehicles):
                pp[k] = v.pose
            for j, b in enumerate(self._dynamic_blocks):
                pp[nv + j] = b.pose
        for j, a in enumerate(self._actors):
            pp[nv + nb + j] = a.pose
        place_solids(self.tab, self._moving_rows, self._moving_parent, pp, self._moving_offset)

    # ------------------------------------------------------------------ casting
    def cast(self, origins: np.ndarray, rotations: np.ndarray, dirs: np.ndarray, dir_start: np.ndarray,
             max_range: np.ndarray, owner: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Nearest hit of every ray of S sensors, all in one call.

        Args:
            origins: (S, 3) sensor positions (m, world). rotations: (S, 3, 3) sensor-to-world rotations.
            dirs: (N, 3) unit ray directions, each in its sensor's frame; sensor s owns rows
                ``dir_start[s]:dir_start[s+1]``. dir_start: (S + 1,) int64.
            max_range: (S,) reach of each sensor (m): farther hits are misses.
            owner: (S,) vehicle index (physics order) carrying each sensor, −1 for none: its bodies are not seen.

        Returns:
            (N,) float64 distances along the rays (m), inf for no hit within reach; (N,) float32 intensity of the
            surface hit (0 for none).
        """
        origins = np.ascontiguousarray(origins, dtype=np.float64).reshape(-1, 3)
        rotations = np.ascontiguousarray(rotations, dtype=np.float64).reshape(-1, 3, 3)
        dirs = np.ascontiguousarray(dirs, dtype=np.float64).reshape(-1, 3)
        dir_start = np.ascontiguousarray(dir_start, dtype=np.int64)
        reach = np.ascontiguousarray(max_range, dtype=np.float64).reshape(-1)
        owner = np.ascontiguousarray(owner, dtype=np.int64).reshape(-1)
        n = len(dirs)
        self.place_moving()
        out_t, out_i = self._cast_static_meshes(origins, rotations, dirs, dir_start, reach)
        for row, plane in self._moving_planes:
            self.planes[row, :4] = plane.rect
            self.planes[row, 4] = plane.z
        hf = self.heightfields
        if self.parallel is None:
            parallel = use_threads(n, THREADED_RAYS_3D)
        else:
            parallel = self.parallel and use_threads(n, 1)
        args = (origins, rotations, dir_start, dirs, reach, owner, self.planes, hf.meta, hf.levels, hf.heights,
                hf.bounds, self.tab, self.verts, self.meshes.node_box, self.meshes.node_ref, self.meshes.tri,
                self.n_sectors, out_t, out_i)
        if parallel:
            import numba  # (the threads are numba's: only scenes that use them import it)

            with threaded(), numba.parallel_chunksize(1):  # hand chunks out one by one: a thread slowed down by
                trace_sensors_parallel(*args)              # another process on the same core holds nobody up
        else:
            trace_sensors(*args)
        if self.grids:
            gx, gy, gdx, gdy = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
            g_reach, g_t0, g_h = np.empty(n), np.empty(n), np.empty(n)
            grid_rays(origins, rotations, dir_start, dirs, reach, out_t, 0.0, GRID_WALL_HEIGHT, gx, gy, gdx, gdy,
                      g_reach, g_t0, g_h)
            g_out = g_reach.copy()
            for g in self.grids:
                g.cast(gx, gy, gdx, gdy, g_out)
            merge_grid_hits(g_reach, g_out, g_t0, g_h, out_t, out_i, DEFAULT_INTENSITY)
        return out_t, out_i


    def _cast_static_meshes(self, origins: np.ndarray, rotations: np.ndarray, dirs: np.ndarray, dir_start: np.ndarray,
                            reach: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rays against the static mesh models in Embree (:attr:`static_meshes`): (N,) distance (m, inf for
        none) and (N,) float32 intensity, the start of :func:`trace_sensors`' search."""
        n = len(dirs)
        out_t = np.full(n, np.inf)
        out_i = np.zeros(n, dtype=np.float32)
        if not self.static_meshes or n == 0:
            return out_t, out_i
        o32 = np.empty((n, 3), dtype=np.float32)
        d32 = np.empty((n, 3), dtype=np.float32)
        far32 = np.empty(n, dtype=np.float32)
        for em in self.static_meshes:
            embree_sensor_rays(origins, rotations, dir_start, dirs, reach, em.origin, o32, d32, far32)
            t, inten = em.cast_prepared(o32, d32, far32)
            nearer = t < out_t
            out_t[nearer] = t[nearer]
            out_i[nearer] = inten[nearer]
        return out_t, out_i


def _loaded_meshes(visuals: list[Any]) -> Iterator[tuple[Any, Any]]:
    """(visual, mesh in the body's frame) of each of ``visuals`` whose model loads with triangles; models that fail to
    load are skipped (the camera scene reports them). Loading is cached, so this costs little."""
    from mvsim_core.errors import AssetError

    for v in visuals:
        if v.path is None:
            continue
        try:
            mesh = v.mesh()
        except (AssetError, ValueError):
            continue
        if mesh is not None and len(mesh.faces) > 0:
            yield v, mesh


def visual_model(visuals: list[Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """The visual models of one body that load, joined: vertices (V, 3) (m, its frame) and triangles (T, 3) (vertex
    indices); None when none loads."""
    verts: list[np.ndarray] = []
    faces: list[np.ndarray] = []
    base = 0
    for _, mesh in _loaded_meshes(visuals):
        verts.append(np.asarray(mesh.vertices, dtype=np.float64))
        faces.append(np.asarray(mesh.faces, dtype=np.int64) + base)
        base += len(verts[-1])
    return (np.concatenate(verts), np.concatenate(faces)) if verts else None


def has_visual_mesh(visuals: list[Any]) -> bool:
    """Whether one of ``visuals`` loads a model with triangles: the body is then a mesh solid
    (:func:`visual_mesh` gives a tree), not an analytic one."""
    return next(_loaded_meshes(visuals), None) is not None


def visual_mesh(meshes: MeshBVHSet, visuals: list[Any]) -> tuple[int, np.ndarray] | None:
    """The triangles of the visual models of one body that load (its frame), as one tree of ``meshes``: (root,
    box), or None when none loads (the body keeps its analytic shape)."""
    parts: list[np.ndarray] = []
    key: list[object] = []
    for v, mesh in _loaded_meshes(visuals):
        parts.append(np.asarray(mesh.vertices, dtype=np.float64)[np.asarray(mesh.faces)])
        key.append((str(v.path), v.transform().tobytes()))
    if not parts:
        return None
    return meshes.add(np.concatenate(parts), key=tuple(key))


def _add_block(st: SolidTable, b: Any, pose: tuple[float, ...], meshes: MeshBVHSet) -> int:
    """Add block ``b`` at ``pose`` as the triangles of its visual models when they load, else as a ramp, a bump
    (elliptic cylinder) or a prism of its footprint."""
    g = b.geometry
    inten = luminance(b.params["color"])
    mesh = visual_mesh(meshes, b.visuals)
    if mesh is not None:
        return st.add_mesh(*mesh, pose, intensity=inten)
    if g is not None and g.type == "ramp":
        d = g.dims
        return st.add_ramp(d["lx"], d["ly"], d["lz"], b.zmin, b.zmax, pose, intensity=inten)
    if g is not None and g.type == "semi_cylinder_bump":
        d = g.dims
        half = 0.5 * d["ly"]
        return st.add_cylinder((0.0, d["lx"], -half, half, max(b.zmin, 0.0), b.zmax), 0.0, 0.0, half, d["lz"], pose,
                               intensity=inten)
    return st.add_prism(b.footprint, b.zmin, b.zmax, pose, owner=NO_OWNER, intensity=inten)
