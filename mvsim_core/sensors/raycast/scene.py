"""Everything a horizontal ray can hit in a world, and one call that casts any number of rays against it.

What is in the scene (the solids of upstream's 2D lidar: occupancy grids + Box2D fixtures):

* occupancy grids (``<element class="occupancy_grid">``): distance-field marching, :mod:`.grid`;
* static geometry, prepared once: static blocks (``<walls>`` segments included) and vertical planes,
  :class:`~.segments.StaticSegments`. A vertical plane is seen by 2D rays as its collision outline (open at doors only,
  whatever the height: windows do not open it), by ``raytrace_3d`` rays as its 3D pieces around every door and
  window. If a static block is
  teleported (``World.set_pose``), the static set is rebuilt at the next cast;
* moving bodies, placed from the physics state at every cast: each vehicle (chassis outline + one box per wheel, with
  the wheel's current steering yaw), each dynamic or animated block, and each actor (a 16-gon around its collision
  circle, 0 .. collision_height above its pose), :class:`~.segments.MovingSegments`.

Not in the scene: intangible blocks (no body), horizontal planes and elevation maps (a horizontal ray never meets
them in 2D), the grid-obstacle fixtures the physics places near moving bodies (the grid itself is cast).

Heights (m, world): blocks span pose z + [zmin, zmax]; a vehicle's chassis spans its z + [chassis zmin, zmax] and each
wheel its z + [0, diameter]; vertical planes [z, z + height]; occupied grid cells [0,
:data:`~mvsim_core.elements.occupancy_grid.CELL_HEIGHT`], as the 3D lidars and cameras see them. They matter only to
rays cast with ``raytrace_3d``; 2D rays see every solid as infinitely tall.

Visual models and ``raytrace_3d``: a block or a vehicle chassis whose ``<visual>`` models load is seen by
``raytrace_3d`` rays as their triangles — the mesh solids of the world's
:class:`~mvsim_core.sensors.raycast.rays3d.RaycastScene3D` (:attr:`RaycastScene.scene_3d`, set by the caller or built
on first need), each ray a horizontal 3D ray at its height — and not as its outline (whose segments are then
:data:`~.segments.SEEN_2D` only). Other rays (2D mode) keep seeing the outline, as upstream's Box2D ray cast does.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core.elements.occupancy_grid import CELL_HEIGHT
from mvsim_core.jit import njit
from mvsim_core.sensors.raycast.bvh import STACK_SIZE
from mvsim_core.sensors.raycast.grid import GridCaster
from mvsim_core.sensors.raycast.rays3d import has_visual_mesh
from mvsim_core.sensors.raycast.segments import (
    NO_OWNER,
    SEEN_2D,
    SEEN_3D,
    SEEN_BOTH,
    SEG_COLS,
    MovingSegments,
    StaticSegments,
    cast_sets,
    polygon_edges,
    transform_polygon,
)
from mvsim_core.sensors.raycast.solids import C_OWNER, hit_mesh_solid

if TYPE_CHECKING:
    from mvsim_core.dynamics.physics import Physics
    from mvsim_core.sensors.raycast.rays3d import RaycastScene3D
    from mvsim_core.world_model import WorldModel


@njit(cache=True)
def unit_vectors(angles: np.ndarray, dx: np.ndarray, dy: np.ndarray) -> None:
    """dx, dy = cos, sin of (R,) angles (rad) — one pass (numpy's two ufuncs are slower here)."""
    for i in range(angles.shape[0]):
        dx[i] = math.cos(angles[i])
        dy[i] = math.sin(angles[i])


@njit(cache=True)
def cast_mesh_rows(tab: np.ndarray, rows: np.ndarray, node_box: np.ndarray, node_ref: np.ndarray, tri: np.ndarray,
                   ox: np.ndarray, oy: np.ndarray, height: np.ndarray, dx: np.ndarray, dy: np.ndarray,
                   use_z: np.ndarray, visible: np.ndarray, exclude: np.ndarray, out: np.ndarray) -> None:
    """Horizontal rays against the mesh solids ``rows`` of a 3D solid table (:mod:`.solids`, trees of a
    :class:`~.bvh.MeshBVHSet`): ray i, from (ox, oy, height) (m, world) along the unit (dx, dy, 0), keeps in
    ``out[i]`` (m; reach in, nearest hit out) the nearer of its hit so far and the triangles'. Only rays with
    ``use_z`` and ``visible`` are cast; a solid whose owner is ``exclude[i]`` is skipped."""
    stack = np.empty(STACK_SIZE, dtype=np.int64)
    for i in range(ox.shape[0]):
        if not (use_z[i] and visible[i]):
            continue
        for j in range(rows.shape[0]):
            k = rows[j]
            if exclude[i] >= 0 and tab[k, C_OWNER] == exclude[i]:
                continue
            t = hit_mesh_solid(tab, k, node_box, node_ref, tri, stack, ox[i], oy[i], height[i], dx[i], dy[i], 0.0,
                               out[i])
            if t < out[i]:
                out[i] = t


class RaycastScene:
    """The ray-castable geometry of a world (see the module docstring).

    Attributes:
        grids: one :class:`GridCaster` per occupancy grid.
        static: the static segments. moving: the moving objects (vehicles first, in physics order, then dynamic
            and animated blocks, then actors). n_vehicles: number of vehicles (object k < n_vehicles is vehicle k
            of the physics arrays).
        has_meshes: whether some body is seen as a visual model by ``raytrace_3d`` rays.
        scene_3d: the 3D scene whose mesh solids those rays meet (None until needed; the sensors share theirs).
    """

    def __init__(self, world: WorldModel, physics: Physics | None = None) -> None:
        """Prepare the scene of ``world``; ``physics`` gives the live poses (None: the objects' declared poses)."""
        from mvsim_core.elements.occupancy_grid import OccupancyGrid

        self.world = world
        self.physics = physics
        self.has_meshes = False
        # one caster per distinct grid: copies of one map file share their grid (and would hit the same cells)
        shared = {id(el.grid): el.grid for el in world.elements if isinstance(el, OccupancyGrid)}
        self.grids: list[GridCaster] = [GridCaster.from_grid_map(g) for g in shared.values()]
        self._static_blocks = [b for b in world.blocks.values() if b.is_static and not b.is_intangible]
        self.scene_3d: RaycastScene3D | None = None
        self._static_key: list[tuple[float, ...]] = []
        self.static = self._build_static()
        # moving objects: vehicles, then dynamic blocks
        if physics is not None:
            self._vehicles = list(physics.vehicles)
            self._dynamic_blocks = [world.blocks[n] for n in physics.dynamic_blocks]
        else:
            self._vehicles = list(world.vehicles.values())
            self._dynamic_blocks = [b for b in world.blocks.values() if not b.is_static and not b.is_intangible]
        self.n_vehicles = len(self._vehicles)
        m = MovingSegments()
        for k, v in enumerate(self._vehicles):
            ch = v.chassis
            boxes = np.array([[w.x, w.y, 0.5 * w.diameter, 0.5 * w.width, 0.0, w.diameter,
                               self._outline_modes(w.visuals)] for w in v.wheels], dtype=np.float64).reshape(-1, 7)
            m.add_object(np.asarray(ch.footprint, dtype=np.float64), float(ch.zmin), float(ch.zmax), owner=k,
                         boxes=boxes, modes=self._outline_modes(v.visuals))
        for b in self._dynamic_blocks:
            m.add_object(np.asarray(b.footprint, dtype=np.float64), float(b.zmin), float(b.zmax), owner=NO_OWNER,
                         modes=self._outline_modes(b.visuals))
        self._animated_rows = [j for j, b in enumerate(self._dynamic_blocks) if b.is_animated]
        self._actors = list(world.actors.values())
        for a in self._actors:
            m.add_object(a.footprint, a.zmin, a.zmax, owner=NO_OWNER)
        m.finish()
        self.moving = m
        self._wheel_yaw0 = np.array([w.yaw for v in self._vehicles for w in v.wheels], dtype=np.float64)

    @classmethod
    def from_world(cls, world: WorldModel, physics: Physics | None = None) -> RaycastScene:
        """The scene of ``world`` (static parts prepared now; moving ones placed at each :meth:`cast`)."""
        return cls(world, physics)

    # ------------------------------------------------------------------ visual models
    def _outline_modes(self, visuals: list[Any]) -> int:
        """Which rays see the outline of a body with ``visuals``: 2D rays only when a model loads (``raytrace_3d``
        rays meet its triangles instead), else both; notes :attr:`has_meshes`."""
        if has_visual_mesh(visuals):
            self.has_meshes = True
            return SEEN_2D
        return SEEN_BOTH

    def _cast_meshes(self, ox: np.ndarray, oy: np.ndarray, h: np.ndarray, dx: np.ndarray, dy: np.ndarray,
                     use_z: np.ndarray, vis: np.ndarray, excl: np.ndarray, out: np.ndarray) -> None:
        """The ``raytrace_3d`` rays against the mesh solids of :attr:`scene_3d` (built here if the caller set none):
        those of vehicles and of the blocks this scene holds (not intangible ones)."""
        if self.scene_3d is None:
            from mvsim_core.sensors.raycast.rays3d import RaycastScene3D

            self.scene_3d = RaycastScene3D(self.world, self.physics, grids=self.grids)
        s3 = self.scene_3d
        s3.place_moving()
        seen = use_z & vis
        tangible = [em for em in s3.static_meshes if not em.intangible]
        if tangible and seen.any():  # static models in Embree: horizontal rays at the scan heights
            k = np.flatnonzero(seen)
            o = np.column_stack([ox[k], oy[k], h[k]])
            d = np.column_stack([dx[k], dy[k], np.zeros(len(k))])
            for em in tangible:
                t, _ = em.cast(o, d, out[k])
                out[k] = np.minimum(out[k], t)
        rows = s3.mesh_rows_2d
        if len(rows) == 0:
            return
        me = s3.meshes
        cast_mesh_rows(s3.tab, rows, me.node_box, me.node_ref, me.tri, ox, oy, h, dx, dy, use_z, vis, excl, out)

    # ------------------------------------------------------------------ static part
    def _static_signature(self) -> list[tuple[float, ...]]:
        return [tuple(b.pose) for b in self._static_blocks]

    def _build_static(self) -> StaticSegments:
        from mvsim_core.elements.vertical_plane import VerticalPlane

        rows = [np.zeros((0, SEG_COLS))]
        for b in self._static_blocks:
            x, y, z, yaw, _, _ = b.pose
            rows.append(polygon_edges(transform_polygon(b.footprint, x, y, yaw), z + b.zmin, z + b.zmax,
                                      self._outline_modes(b.visuals)))
        for el in self.world.elements:
            if isinstance(el, VerticalPlane):
                if not el.openings:  # one full piece, the same for both kinds of rays
                    for piece in el.collision_pieces():
                        rows.append(polygon_edges(piece.polygon, piece.z_min, piece.z_max, SEEN_BOTH))
                    continue
                for piece in el.collision_pieces():  # 2D: gaps at doors only
                    rows.append(polygon_edges(piece.polygon, piece.z_min, piece.z_max, SEEN_2D))
                for piece in el.segments():  # 3D: around every door and window
                    rows.append(polygon_edges(piece.polygon, piece.z_min, piece.z_max, SEEN_3D))
        self._static_key = self._static_signature()
        return StaticSegments(np.vstack(rows))

    # ------------------------------------------------------------------ moving part
    def place_moving(self) -> None:
        """Put vehicles and dynamic blocks at their current poses (and rebuild the static set if a static block
        moved)."""
        if self._static_blocks and self._static_signature() != self._static_key:
            self.static = self._build_static()
        m = self.moving
        if m.n_objects == 0:
            return
        nv = self.n_vehicles
        pose = np.empty((m.n_objects, 3))
        z = np.empty(m.n_objects)
        ph = self.physics
        if ph is not None:
            pose[:nv] = ph.state[:, :3]
            z[:nv] = ph.z
            wheel_yaw: Any = ph.wheels.yaw
            if self._dynamic_blocks:
                pose[nv:nv + len(self._dynamic_blocks)] = ph.bodies.read_states(ph.dynamic_blocks)[:, :3]
                for j in self._animated_rows:  # its track's pose (its body may sleep far from everything)
                    x, y, _, yaw, _, _ = self._dynamic_blocks[j].pose
                    pose[nv + j] = (x, y, yaw)
        else:
            for k, v in enumerate(self._vehicles):
                x, y, zz, yaw, _, _ = v.pose
                pose[k] = (x, y, yaw)
                z[k] = zz
            wheel_yaw = self._wheel_yaw0
            for j, b in enumerate(self._dynamic_blocks):
                x, y, _, yaw, _, _ = b.pose
                pose[nv + j] = (x, y, yaw)
        for j, b in enumerate(self._dynamic_blocks):
            z[nv + j] = b.pose[2]
        na = nv + len(self._dynamic_blocks)
        for j, a in enumerate(self._actors):
            x, y, zz, yaw, _, _ = a.pose
            pose[na + j] = (x, y, yaw)
            z[na + j] = zz
        m.place(pose, z, wheel_yaw)

    # ------------------------------------------------------------------ casting
    def cast(self, origins: np.ndarray, angles: np.ndarray | None, heights: np.ndarray, max_range: np.ndarray,
             exclude_owner: np.ndarray, bodies_visible: np.ndarray,
             raytrace_3d: np.ndarray | None = None,
             directions: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """Distance to the first solid along each of R horizontal rays (all lidars of a step in one call).

        Args:
            origins: (R, 2) ray origins x, y (m, world).
            angles: (R,) ray directions (rad, world frame, CCW from +x).
            heights: (R,) ray heights z (m, world); used only where ``raytrace_3d``.
            max_range: (R,) reach of each ray (m); farther hits are misses.
            exclude_owner: (R,) vehicle index (physics order) whose own bodies the ray ignores, −1 for none.
            bodies_visible: (R,) bool; False: the ray sees occupancy grids only (no blocks, walls, vertical planes or
                vehicles), as upstream's ``bodies_visible=false`` hides every Box2D fixture.
            raytrace_3d: (R,) bool or None (all False); True: a solid is hit only if the ray height lies in its
                [zmin, zmax], and bodies with visual models are met as their triangles.
            directions: optional (dx, dy), (R,) float64 unit vectors of ``angles`` when the caller has them
                already (saves the cosines and sines); ``angles`` is then not read.

        Returns:
            (R,) float64 distances (m) in [0, max_range), ``inf`` where the ray hits nothing within ``max_range``.
        """
        origins = np.asarray(origins, dtype=np.float64).reshape(-1, 2)
        n = len(origins)
        ox = np.ascontiguousarray(origins[:, 0])
        oy = np.ascontiguousarray(origins[:, 1])
        if directions is None:
            dx, dy = np.empty(n), np.empty(n)
            unit_vectors(np.ascontiguousarray(angles, dtype=np.float64).reshape(n), dx, dy)
        else:
            dx = np.require(directions[0], np.float64, ("C",)).reshape(n)
            dy = np.require(directions[1], np.float64, ("C",)).reshape(n)
        h = _per_ray(heights, n, np.float64)
        reach = _per_ray(max_range, n, np.float64)
        excl = _per_ray(exclude_owner, n, np.int64)
        vis = _per_ray(bodies_visible, n, np.bool_)
        use_z = _per_ray(False if raytrace_3d is None else raytrace_3d, n, np.bool_)
        out = reach.copy()
        self.cast_rays(ox, oy, dx, dy, h, excl, vis, use_z, bool(vis.any()), out)
        return np.where(out < reach, out, np.inf)

    def _cast_grids(self, ox: np.ndarray, oy: np.ndarray, dx: np.ndarray, dy: np.ndarray, h: np.ndarray,
                    raytrace_3d: np.ndarray, out: np.ndarray) -> None:
        """The rays against the occupancy grids: every 2D ray, and the ``raytrace_3d`` rays whose height lies in the
        cells' band, z 0 .. :data:`~mvsim_core.elements.occupancy_grid.CELL_HEIGHT` (the cells' boxes for the 3D
        lidars and cameras); a ``raytrace_3d`` ray above or below it passes."""
        if raytrace_3d.any():
            off = raytrace_3d & ((h < 0.0) | (h > CELL_HEIGHT))
            if off.any():
                k = np.flatnonzero(~off)
                sub = out[k]
                for g in self.grids:
                    g.cast(ox[k], oy[k], dx[k], dy[k], sub)
                out[k] = sub
                return
        for g in self.grids:
            g.cast(ox, oy, dx, dy, out)

    def cast_rays(self, ox: np.ndarray, oy: np.ndarray, dx: np.ndarray, dy: np.ndarray, h: np.ndarray,
                  exclude_owner: np.ndarray, bodies_visible: np.ndarray, raytrace_3d: np.ndarray, any_visible: bool,
                  out: np.ndarray) -> None:
        """:meth:`cast` on arrays already in the kernels' form (what a sensor that casts every step keeps ready):
        (R,) contiguous float64 ``ox, oy, dx, dy, h``, int64 ``exclude_owner``, bool ``bodies_visible`` and
        ``raytrace_3d``; ``any_visible`` = ``bodies_visible.any()``. ``out``: (R,) float64, each ray's reach in (m),
        its nearest hit out, the reach where it hits nothing."""
        if self.grids:
            self._cast_grids(ox, oy, dx, dy, h, raytrace_3d, out)
        if any_visible:
            self.place_moving()
            cast_sets(self.static, self.moving, ox, oy, dx, dy, h, raytrace_3d, bodies_visible, exclude_owner, out)
            if self.has_meshes and (raytrace_3d & bodies_visible).any():
                self._cast_meshes(ox, oy, h, dx, dy, raytrace_3d, bodies_visible, exclude_owner, out)


def _per_ray(value: Any, n: int, dtype: Any) -> np.ndarray:
    """``value`` (scalar or (n,)) as a writable, contiguous (n,) array of ``dtype`` (what the kernels take)."""
    a = np.asarray(value, dtype=dtype)
    if a.shape != (n,):
        return np.full(n, a.reshape(-1)[0] if a.size == 1 else a, dtype=dtype)
    return np.require(a, requirements=("C", "W"))
