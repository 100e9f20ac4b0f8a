"""The world as drawable geometry: triangle meshes, lines and points attached to posed *nodes* (numpy only).

A renderer (the cameras' offscreen :mod:`.renderer`, later the desktop viewer) uploads :meth:`SceneGeometry.pack` once
and, at every frame, only the node poses from :meth:`SceneGeometry.node_transforms`. Nothing here imports OpenGL.
The parts themselves (prisms, cylinders, height fields, lines, points, textures) are built by :mod:`.mesh_primitives`.

Nodes (frames whose pose is read from the simulation at every frame):

* node 0, the **world**: every element but elevation maps — horizontal planes (colour or tiled texture), vertical
  planes (boxes around their doors and windows, colour or texture), occupancy grids (a box from z = 0 to
  :data:`OCCUPANCY_HEIGHT` for each occupied cell, cells merged into rectangles), non-floating ground grids (lines),
  point clouds (points), markers (line strips);
* one node per **elevation map** placement, translated to the map's corner: a smooth-shaded height-field mesh
  (``mesh_color`` or draped texture) in the frame of vertex (0, 0), made once per distinct height grid and look, so
  that copies of one map share it; a copy at a corner already drawn is not drawn again;
* one node per **vehicle** (its pose: x, y, yaw from Box2D, z, pitch, roll from the terrain): the chassis prism
  (footprint × [zmin, zmax], chassis colour) — or, when the vehicle has ``<visual>`` models that load, those models
  instead (drawn in ``model_color``) — and one node per **wheel**: a 16-sided cylinder (diameter × width, wheel
  colour, axle along the vehicle's y) or its visual model, at (x, y, radius) in the vehicle frame, turned by the
  wheel's current yaw (steering) and spin angle;
* one node per **block** (static, dynamic, intangible; ``<walls>`` segments are static blocks): its prism, or its
  geometry primitive (box, cylinder, sphere, ramp rising along local x, semi-cylinder bump across local y), or its
  visual models; a dynamic block where Box2D has it, an animated one where its keyframe track has it now.
  Visual-only blocks (``<visual_only>``: the ROS ``runtime_overlays``) only with ``visual_only=True``: the viewer
  draws them, the cameras' scene (:func:`~.renderer.renderer_for`) leaves them out, as upstream draws overlays in its
  GUI only;
* one node per **actor** (its visuals, or — when it has none that loads, e.g. an animated FBX — the person-shaped
  stand-in of :meth:`~mvsim_core.objects.actor.Actor.figure`, 0.5 × 0.5 × 1.8 m unless its collision size is given),
  at its current pose: where its walk has taken it;
* one node per **floating ground grid** (translated with the vehicle it follows, snapped to the grid interval).

Sensor visual models are not part of the scene (a camera would see its own housing).

Frames and units: world frame, metres, radians. Positions of node-0 geometry are world coordinates; the others are in
their node's frame. Packed vertices are stored relative to an anchor point per node and node translations relative to
:attr:`SceneGeometry.origin`, so that float32 vertex data keeps sub-millimetre precision in large (e.g. UTM) worlds.

Faces: closed solids (prisms, boxes, cylinders, primitives) are wound counter-clockwise seen from outside and marked
``cull="back"`` (a camera inside a chassis or a wall sees out through it); open surfaces (planes, terrain, mesh
models) are double-sided unless their ``cull_face`` says otherwise. Normals point outwards (flat per face, smooth on
terrain). Colours are RGBA 0..255; alpha is kept but renderers may draw everything opaque.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core.elements.occupancy_grid import CELL_HEIGHT, OCCUPIED
from mvsim_core.geometry.rotations import rotations
from mvsim_core.objects.actor import STAND_IN_COLOR
from mvsim_core.sensors.render.mesh_primitives import (  # `X as X`: re-exported, once defined here
    WHEEL_SIDES as WHEEL_SIDES,
)
from mvsim_core.sensors.render.mesh_primitives import (
    WHITE,
    Color,
    MeshPart,
    TextureImage,
    box_triangles,
    bump,
    flat_part,
    height_field,
    horizontal_rect,
    line_part,
    load_texture,
    mesh_part,
    occupied_rectangles,
    point_part,
    prism,
    prism_triangles,
    ramp,
    sphere,
    wheel_cylinder,
)
from mvsim_core.sensors.render.mesh_primitives import circle as circle
from mvsim_core.sensors.render.mesh_primitives import rgba as rgba

if TYPE_CHECKING:
    from mvsim_core.dynamics.physics import Physics
    from mvsim_core.world_model import WorldModel

OCCUPANCY_HEIGHT = CELL_HEIGHT
"""Height (m) of the boxes drawn for occupied occupancy-grid cells (the 3D lidars' height; the 2D lidar treats them
as infinitely tall)."""
OCCUPANCY_THRESHOLD = OCCUPIED
"""Cells with occupancy above this are drawn (the threshold of the physics and the lidars)."""
OCCUPANCY_COLOR: Color = (0x50, 0x50, 0x50, 0xFF)
"""Colour of occupied occupancy-grid cells."""
GRID_LIFT = 1e-3
"""Ground-grid lines are drawn this far (m) above z = 0 so that they do not fight with a floor at z = 0."""
POINTCLOUD_COLOR: Color = (0x00, 0x00, 0xFF, 0xFF)
"""Colour of ``pointcloud`` elements (the element has no colour parameter)."""
ACTOR_COLOR: Color = STAND_IN_COLOR
"""Colour of the person-shaped stand-in of an actor without a visual model that loads."""

PRIMITIVES = ("triangles", "lines", "points")
CULL_MODES = ("none", "back", "front")
NODE_WORLD = 0
"""Index of the world node (identity pose)."""


# ---------------------------------------------------------------------------------------------------- packed data
@dataclass(frozen=True)
class Draw:
    """One draw call of a :class:`PackedScene`: ``count`` indices from ``first`` with the same state."""

    primitive: str
    cull: str
    texture: TextureImage | None
    size: float
    lit: bool
    first: int
    count: int


@dataclass(eq=False)
class PackedScene:
    """Every part in shared arrays, ready for vertex/index buffers.

    Attributes:
        positions: (N, 3) float32 vertices in their node frame minus the node's anchor (m).
        normals: (N, 3) float32. colors: (N, 4) uint8. uv: (N, 2) float32 (zeros where untextured).
        node: (N,) float32 node index of every vertex (exact in float32 below 2²⁴ nodes).
        indices: (M,) uint32, already offset into the shared vertex array.
        draws: the draw calls, grouped by primitive, culling, texture, size and lighting.
        spans: (S, 3) int64, one row per part: (its draw's index in ``draws``, first index, index count); a draw's
            parts are consecutive, so a renderer can skip the parts out of view (frustum culling).
        span_node: (S,) int64 the part's node. span_box: (S, 2, 3) float64 its vertices' box (lo, hi; packed
            coordinates: node frame minus the node's anchor, m); NaN where a vertex is not finite (never culled).
    """

    positions: np.ndarray
    normals: np.ndarray
    colors: np.ndarray
    uv: np.ndarray
    node: np.ndarray
    indices: np.ndarray
    draws: list[Draw] = field(default_factory=list)
    spans: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int64))
    span_node: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    span_box: np.ndarray = field(default_factory=lambda: np.zeros((0, 2, 3)))


# ---------------------------------------------------------------------------------------------------- the scene
def _cull_of(value: Any) -> str:
    v = str(value or "NONE").upper()
    return {"BACK": "back", "FRONT": "front"}.get(v, "none")


class SceneGeometry:
    """The drawable geometry of a world (see the module docstring).

    Args:
        world: the loaded world.
        physics: its physics state (live poses); None: the objects' declared poses.
        ground_grids: include ``ground_grid`` elements (lines).
        visual_only: include visual-only blocks (``Block.is_visual_only``): True for the viewer, False for what
            sensors see.

    Attributes:
        parts: (node index, part) pairs.
        node_names: a label per node (``world``, ``vehicle:r1``, ``wheel:r1/l_wheel``, ``block:b1``, ...).
        origin: (3,) float64 world point (m) that node translations are relative to (see :meth:`_choose_anchors`).
        anchors: (n_nodes, 3) float64 point of each node's frame (m) that its packed vertices are relative to; the
            world node's anchor is the origin.
        warnings: visual models that could not be loaded (their objects fall back to prisms).
    """

    def __init__(self, world: WorldModel, physics: Physics | None = None, *, ground_grids: bool = True,
                 visual_only: bool = True) -> None:
        self.world = world
        self.physics = physics
        self.visual_only = visual_only
        self.parts: list[tuple[int, MeshPart]] = []
        self.node_names: list[str] = ["world"]
        self.warnings: list[str] = []
        self._elevation_nodes: dict[tuple[Any, ...], int] = {}  # (mesh look, corner) -> node
        self._build_elements(ground_grids)
        self._build_vehicles()
        self._build_blocks()
        self._build_actors()
        self.n_nodes = len(self.node_names)
        self._choose_anchors()

    # ------------------------------------------------------------------ building
    def _add(self, node: int, part: MeshPart | None) -> None:
        if part is not None and part.indices.size:
            self.parts.append((node, part))

    def _new_node(self, name: str) -> int:
        self.node_names.append(name)
        return len(self.node_names) - 1

    def _visual_parts(self, visuals: list[Any], what: str) -> list[MeshPart]:
        """Parts of the visual models that load (in the owner's frame); missing ones are noted in warnings."""
        from mvsim_core.errors import AssetError

        out = []
        for v in visuals:
            if v.path is None:
                continue
            try:
                mesh = v.mesh()
            except (AssetError, ValueError) as e:
                self.warnings.append(f"{what}: visual model {v.uri} not drawn ({e})")
                continue
            if mesh is None:
                continue
            written = "model_color" in getattr(v, "written", ())  # else: the model's own material colours
            part = mesh_part(mesh, v.params.get("model_color") if written else None,
                             _cull_of(v.params.get("model_cull_faces")))
            if part is not None:
                out.append(part)
        return out

    def _build_elements(self, ground_grids: bool) -> None:
        from mvsim_core.elements.elevation_map import ElevationMap
        from mvsim_core.elements.ground_grid import GroundGrid
        from mvsim_core.elements.horizontal_plane import HorizontalPlane
        from mvsim_core.elements.occupancy_grid import OccupancyGrid
        from mvsim_core.elements.pointcloud import PointCloud
        from mvsim_core.elements.vertical_plane import VerticalPlane

        self._floating: list[tuple[int, Any, float]] = []  # (node, focus vehicle name or "", interval)
        self._moving_planes: list[tuple[int, Any]] = []  # (node, animated horizontal plane)
        drawn_grids: set[int] = set()  # copies of one map file share their grid: drawn once
        meshes: dict[tuple[Any, ...], MeshPart] = {}  # elevation meshes by what they are made of (not where)
        for el in self.world.elements:
            p = getattr(el, "params", {})
            if isinstance(el, HorizontalPlane):
                tex = load_texture(el.texture_path)
                sx, sy = float(p["texture_size_x"]), float(p["texture_size_y"])
                uv_of = (lambda q, sx=sx, sy=sy: np.column_stack([q[:, 0] / sx, q[:, 1] / sy])) if tex else None
                # an animated plane (an elevator) is drawn in its own frame, on a node that follows its pose
                node = self._new_node(f"plane:{p['name']}") if el.is_animated else NODE_WORLD
                if el.is_animated:
                    self._moving_planes.append((node, el))
                    x0, x1, y0, y1, z = (float(p[k]) for k in ("x_min", "x_max", "y_min", "y_max", "z"))
                else:
                    (x0, x1, y0, y1), z = el.rect, el.z
                self._add(node, horizontal_rect(x0, x1, y0, y1, z, WHITE if tex else p["color"],
                                                cull=_cull_of(p["cull_face"]), uv_of=uv_of, texture=tex))
            elif isinstance(el, VerticalPlane):
                self._add(NODE_WORLD, self._vertical_plane(el))
            elif isinstance(el, ElevationMap):
                self._place_elevation_map(el, meshes)
            elif isinstance(el, OccupancyGrid) and id(el.grid) not in drawn_grids:
                drawn_grids.add(id(el.grid))
                g = el.grid
                rects = occupied_rectangles(g.occupancy > OCCUPANCY_THRESHOLD).astype(np.float64)
                if len(rects):
                    xy = np.column_stack([g.x_min + rects[:, 0] * g.resolution, g.x_min + rects[:, 1] * g.resolution,
                                          g.y_min + rects[:, 2] * g.resolution, g.y_min + rects[:, 3] * g.resolution])
                    self._add(NODE_WORLD, flat_part(box_triangles(xy, 0.0, OCCUPANCY_HEIGHT), OCCUPANCY_COLOR))
            elif isinstance(el, GroundGrid) and ground_grids:
                self._ground_grid(el)
            elif isinstance(el, PointCloud):
                x, y, z, yaw, pitch, roll = p["pose_3d"]
                r = rotations(yaw, pitch, roll)[0]
                pts = np.asarray(el.points, dtype=np.float64) @ r.T + np.array([x, y, z])
                self._add(NODE_WORLD, point_part(pts, POINTCLOUD_COLOR, float(p["points_size"])))
        for m in self.world.markers:
            pts = np.asarray(m.points, dtype=np.float64).reshape(-1, 3)
            if len(pts) >= 2:
                self._add(NODE_WORLD, line_part(np.stack([pts[:-1], pts[1:]], axis=1), m.color))

    def _vertical_plane(self, el: Any) -> MeshPart | None:
        p = el.params
        tex = load_texture(el.texture_path)
        (ax, ay), (bx, by) = el.p0, el.p1
        length = el.length
        ux, uy = (bx - ax) / length, (by - ay) / length
        base, sx, sy = float(p["z"]), float(p["texture_size_x"]), float(p["texture_size_y"])

        def uv_of(q: np.ndarray) -> np.ndarray:
            return np.column_stack([((q[:, 0] - ax) * ux + (q[:, 1] - ay) * uy) / sx, (q[:, 2] - base) / sy])

        tris = [prism_triangles(piece.polygon, piece.z_min, piece.z_max) for piece in el.segments()]
        if not tris:
            return None
        return flat_part(np.concatenate(tris), WHITE if tex else p["color"], cull="back",
                         uv_of=uv_of if tex else None, texture=tex)

    def _place_elevation_map(self, el: Any, meshes: dict[tuple[Any, ...], MeshPart]) -> None:
        """Draw an elevation map: its mesh is made once per distinct height grid and look (copies of one map share
        their heights), in the frame of the grid's vertex (0, 0); each distinct corner gets one node translated
        there, and a copy at a corner already drawn adds nothing."""
        p = el.params
        look = (id(el.heights), el.resolution, tuple(p["mesh_color"]), str(el.texture_path),
                float(p["texture_extension_x"]), float(p["texture_extension_y"]), float(p["texture_image_rotate"]))
        corner = (float(el.corner_min_x), float(el.corner_min_y))
        if (look, corner) in self._elevation_nodes:
            return
        part = meshes.get(look)
        if part is None:
            part = meshes[look] = self._elevation_map(el)
        node = self._new_node(f"elevation_map:{len(self._elevation_nodes)}")
        self._elevation_nodes[(look, corner)] = node
        self._add(node, part)

    def _elevation_map(self, el: Any) -> MeshPart:
        """The mesh of an elevation map in the frame of its vertex (0, 0) (m; texture coordinates from there)."""
        p = el.params
        tex = load_texture(el.texture_path)
        uv_of = None
        if tex is not None:
            rows, cols = el.heights.shape
            ex = float(p["texture_extension_x"]) or (rows - 1) * el.resolution
            ey = float(p["texture_extension_y"]) or (cols - 1) * el.resolution
            ang = math.radians(float(p["texture_image_rotate"]))
            c, s = math.cos(ang), math.sin(ang)

            def uv_of(q: np.ndarray) -> np.ndarray:
                u, v = q[:, 0] / ex - 0.5, q[:, 1] / ey - 0.5
                return np.column_stack([c * u - s * v + 0.5, s * u + c * v + 0.5])

        return height_field(el.heights, 0.0, 0.0, el.resolution, WHITE if tex else p["mesh_color"], uv_of=uv_of,
                            texture=tex)

    def _ground_grid(self, el: Any) -> None:
        p = el.params
        step = float(p["interval"])
        xs = np.arange(math.ceil(p["x_min"] / step), math.floor(p["x_max"] / step) + 1) * step
        ys = np.arange(math.ceil(p["y_min"] / step), math.floor(p["y_max"] / step) + 1) * step
        segs = [((x, p["y_min"], GRID_LIFT), (x, p["y_max"], GRID_LIFT)) for x in xs]
        segs += [((p["x_min"], y, GRID_LIFT), (p["x_max"], y, GRID_LIFT)) for y in ys]
        if not segs:
            return
        part = line_part(np.array(segs, dtype=np.float64), p["color"], float(p["line_width"]))
        focus = str(p["floating_focus"]) or (next(iter(self.world.vehicles), "") if p["floating"] else "")
        if p["floating"] and focus in self.world.vehicles:
            node = self._new_node(f"ground_grid:{focus}")
            self._floating.append((node, focus, step))
            self._add(node, part)
        else:
            self._add(NODE_WORLD, part)

    def _build_vehicles(self) -> None:
        vehicles = list(self.physics.vehicles) if self.physics is not None else list(self.world.vehicles.values())
        self._vehicles = vehicles
        self._vehicle_nodes = np.array([self._new_node(f"vehicle:{v.name}") for v in vehicles], dtype=np.int64)
        for v, node in zip(vehicles, self._vehicle_nodes, strict=True):
            parts = self._visual_parts(v.visuals, f"vehicle '{v.name}'")
            if not parts:
                ch = v.chassis
                parts = [prism(np.asarray(ch.footprint, dtype=np.float64), float(ch.zmin), float(ch.zmax), ch.color)]
            for part in parts:
                self._add(int(node), part)
        wheel_nodes, veh_of, mount = [], [], []
        for k, v in enumerate(vehicles):
            for w in v.wheels:
                node = self._new_node(f"wheel:{v.name}/{w.name}")
                wheel_nodes.append(node)
                veh_of.append(k)
                mount.append((w.x, w.y, 0.5 * w.diameter, w.yaw))
                parts = self._visual_parts(w.visuals, f"wheel '{v.name}/{w.name}'")
                if not parts:
                    parts = [wheel_cylinder(w.diameter, w.width, w.color)]
                for part in parts:
                    self._add(node, part)
        self._wheel_nodes = np.array(wheel_nodes, dtype=np.int64)
        self._wheel_vehicle = np.array(veh_of, dtype=np.int64)
        self._wheel_mount = np.array(mount, dtype=np.float64).reshape(-1, 4)

    def _build_blocks(self) -> None:
        blocks = [b for b in self.world.blocks.values() if self.visual_only or not b.is_visual_only]
        self._blocks = blocks
        self._block_nodes = np.array([self._new_node(f"block:{b.name}") for b in blocks], dtype=np.int64)
        # bodies pushed around: poses from Box2D; animated blocks read their track's pose (exact, 3D) like the rest
        dyn = ([n for n in self.physics.dynamic_blocks if not self.world.blocks[n].is_animated]
               if self.physics is not None else [])
        row = {name: i for i, name in enumerate(dyn)}
        self._dynamic_names = dyn
        self._dynamic_rows = np.array([i for i, b in enumerate(blocks) if b.name in row], dtype=np.int64)
        for b, node in zip(blocks, self._block_nodes, strict=True):
            parts = self._visual_parts(b.visuals, f"block '{b.name}'")
            if not parts:
                parts = [self._block_shape(b)]
            for part in parts:
                self._add(int(node), part)

    @staticmethod
    def _block_shape(b: Any) -> MeshPart:
        color = b.params["color"]
        g = b.geometry
        if g is not None:
            d = g.dims
            if g.type == "sphere":
                r = float(d["radius"])
                return sphere(r, (0.0, 0.0, 0.5 * (b.zmin + b.zmax)), color)
            if g.type == "ramp":
                return ramp(d["lx"], d["ly"], b.zmax - b.zmin, b.zmin, color)
            if g.type == "semi_cylinder_bump":
                return bump(d["lx"], d["ly"], b.zmax - b.zmin, b.zmin, color, int(d.get("vertex_count", 10)))
        return prism(np.asarray(b.footprint, dtype=np.float64), float(b.zmin), float(b.zmax), color)

    def _build_actors(self) -> None:
        actors = list(self.world.actors.values())
        self._actors = actors
        self._actor_nodes = np.array([self._new_node(f"actor:{a.name}") for a in actors], dtype=np.int64)
        for a, node in zip(actors, self._actor_nodes, strict=True):
            parts = self._visual_parts(a.visuals, f"actor '{a.name}'")
            if not parts:  # no model, or one that cannot be loaded (an animated FBX): the person-shaped stand-in
                parts = [prism(poly, z0, z1, ACTOR_COLOR) for poly, z0, z1 in a.figure()]
            for part in parts:
                self._add(int(node), part)

    def _choose_anchors(self) -> None:
        """Node anchors (the centre of each node's local geometry, rounded to 1 m) and the scene origin (the centre of
        everything in the world frame, rounded): packed vertices are stored relative to their node's anchor and node
        translations relative to the origin, so float32 keeps sub-millimetre precision even for geometry written in
        large world coordinates (UTM maps, ``<walls>`` blocks whose footprint is in world coordinates)."""
        self.anchors = np.zeros((self.n_nodes, 3))
        self.origin = np.zeros(3)
        lo = np.full((self.n_nodes, 3), np.inf)
        hi = np.full((self.n_nodes, 3), -np.inf)
        for node, p in self.parts:
            q = np.asarray(p.positions, dtype=np.float64)
            if len(q):
                lo[node] = np.minimum(lo[node], q.min(axis=0))
                hi[node] = np.maximum(hi[node], q.max(axis=0))
        has = np.isfinite(lo[:, 0])
        self.anchors[has] = np.round(0.5 * (lo[has] + hi[has]))
        self.anchors[NODE_WORLD] = 0.0
        tf = self.node_transforms()  # with the origin at 0: the anchors' world positions
        others = has.copy()
        others[NODE_WORLD] = False
        pts = [tf[others, :, 3]]
        if has[NODE_WORLD]:
            pts += [lo[NODE_WORLD][None], hi[NODE_WORLD][None]]
        allp = np.concatenate(pts)
        if len(allp) == 0:
            return
        c = np.round(0.5 * (allp.min(axis=0) + allp.max(axis=0)))
        self.origin = c
        self.anchors[NODE_WORLD] = c

    # ------------------------------------------------------------------ packing
    def pack(self) -> PackedScene:
        """Every part in shared arrays, grouped into draw calls (see :class:`PackedScene`)."""
        def key(item: tuple[int, MeshPart]) -> tuple:
            _, p = item
            return (PRIMITIVES.index(p.primitive), CULL_MODES.index(p.cull), id(p.texture) if p.texture else 0,
                    p.size, p.lit)

        items = sorted(self.parts, key=key)
        pos, nrm, col, uv, node, idx = [], [], [], [], [], []
        draws: list[Draw] = []
        spans: list[tuple[int, int, int]] = []
        span_node: list[int] = []
        span_box: list[np.ndarray] = []
        base = 0
        first = 0
        for node_i, p in items:
            q = np.asarray(p.positions, dtype=np.float64) - self.anchors[node_i]
            pos.append(q.astype(np.float32))
            nrm.append(np.asarray(p.normals, dtype=np.float32))
            col.append(np.asarray(p.colors, dtype=np.uint8))
            uv.append(np.asarray(p.uv, dtype=np.float32) if p.uv is not None else np.zeros((len(q), 2), np.float32))
            node.append(np.full(len(q), node_i, dtype=np.float32))
            idx.append(np.asarray(p.indices, dtype=np.uint32) + np.uint32(base))
            count = int(p.indices.size)
            last = draws[-1] if draws else None
            if (last is not None and last.primitive == p.primitive and last.cull == p.cull
                    and last.texture is p.texture and last.size == p.size and last.lit == p.lit):
                draws[-1] = Draw(last.primitive, last.cull, last.texture, last.size, last.lit, last.first,
                                 last.count + count)
            else:
                draws.append(Draw(p.primitive, p.cull, p.texture, p.size, p.lit, first, count))
            if count:
                used = q[np.asarray(p.indices, dtype=np.int64)]
                box = np.array([used.min(axis=0), used.max(axis=0)])
                spans.append((len(draws) - 1, first, count))
                span_node.append(node_i)
                span_box.append(box if np.isfinite(box).all() else np.full((2, 3), np.nan))
            base += len(q)
            first += count

        def cat(chunks: list[np.ndarray], shape: tuple[int, ...], dtype: Any) -> np.ndarray:
            return np.ascontiguousarray(np.concatenate(chunks)) if chunks else np.zeros(shape, dtype)

        return PackedScene(cat(pos, (0, 3), np.float32), cat(nrm, (0, 3), np.float32), cat(col, (0, 4), np.uint8),
                           cat(uv, (0, 2), np.float32), cat(node, (0,), np.float32), cat(idx, (0,), np.uint32),
                           draws, np.array(spans, dtype=np.int64).reshape(-1, 3),
                           np.array(span_node, dtype=np.int64), np.array(span_box, dtype=np.float64).reshape(-1, 2, 3))

    # ------------------------------------------------------------------ poses
    def node_transforms(self) -> np.ndarray:
        """(n_nodes, 3, 4) float64 ``[R | R·anchor + t − origin]`` of every node now, what a renderer uploads: it maps
        packed vertices (node frame minus the node's anchor) to the world frame minus the origin."""
        out = self.node_poses()
        out[:, :, 3] += np.einsum("nij,nj->ni", out[:, :, :3], self.anchors) - self.origin
        return out

    def node_poses(self) -> np.ndarray:
        """(n_nodes, 3, 4) float64 ``[R | t]``: the pose of every node's frame in the world now (m; from the physics
        when there is one, else from the objects' declared poses)."""
        out = np.zeros((self.n_nodes, 3, 4))
        out[:, :, :3] = np.eye(3)
        ph = self.physics
        nv = len(self._vehicles)
        if nv:
            if ph is not None:
                st = ph.state
                vx, vy, vyaw = st[:, 0], st[:, 1], st[:, 2]
                vz, vp, vr = ph.z, ph.pitch, ph.roll
            else:
                poses = np.array([v.pose for v in self._vehicles], dtype=np.float64).reshape(-1, 6)
                vx, vy, vz, vyaw, vp, vr = poses.T
            rv = rotations(vyaw, vp, vr)
            tv = np.column_stack([vx, vy, vz])
            out[self._vehicle_nodes, :, :3] = rv
            out[self._vehicle_nodes, :, 3] = tv
            if len(self._wheel_nodes):
                m = self._wheel_mount
                if ph is not None:
                    wyaw, wphi = ph.wheels.yaw, ph.wheels.phi
                else:
                    wyaw, wphi = m[:, 3], np.zeros(len(m))
                rl = rotations(wyaw, wphi, np.zeros(len(m)))
                k = self._wheel_vehicle
                out[self._wheel_nodes, :, :3] = rv[k] @ rl
                out[self._wheel_nodes, :, 3] = tv[k] + np.einsum("nij,nj->ni", rv[k], m[:, :3])
        if self._blocks:
            poses = np.array([b.pose for b in self._blocks], dtype=np.float64).reshape(-1, 6)
            if ph is not None and len(self._dynamic_rows):
                st = ph.bodies.read_states(self._dynamic_names)
                poses[self._dynamic_rows, 0] = st[:, 0]
                poses[self._dynamic_rows, 1] = st[:, 1]
                poses[self._dynamic_rows, 3] = st[:, 2]
            out[self._block_nodes, :, :3] = rotations(poses[:, 3], poses[:, 4], poses[:, 5])
            out[self._block_nodes, :, 3] = poses[:, :3]
        if self._actors:
            poses = np.array([a.pose for a in self._actors], dtype=np.float64).reshape(-1, 6)
            out[self._actor_nodes, :, :3] = rotations(poses[:, 3], poses[:, 4], poses[:, 5])
            out[self._actor_nodes, :, 3] = poses[:, :3]
        for node, plane in self._moving_planes:
            out[node, :, 3] = plane.pose[:3]
        for (_, (cx, cy)), node in self._elevation_nodes.items():
            out[node, :, 3] = (cx, cy, 0.0)
        for node, focus, step in self._floating:
            x, y = self.world.vehicles[focus].pose[:2]
            out[node, :, 3] = (math.floor(x / step) * step, math.floor(y / step) * step, 0.0)
        return out

    def summary(self) -> str:
        n_tri = sum(p.indices.size // 3 for _, p in self.parts if p.primitive == "triangles")
        return f"{self.n_nodes} nodes, {len(self.parts)} parts, {n_tri} triangles"
