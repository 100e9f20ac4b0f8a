"""Blocks: obstacles and props (``<block:class>`` definitions and ``<block>`` instances, reference §1.10).

A block is a prism: a 2D footprint polygon (block frame, m, counter-clockwise) extruded from ``zmin`` to ``zmax``
(m above the block's pose). The footprint comes from ``<shape>``, from a ``<geometry>`` primitive, or from the
visual model (``<shape_from_visual/>``). Blocks are dynamic bodies unless ``static``; ``intangible`` ones have no
body at all (nothing collides with them; 2D lidars do not see them, 3D lidars and cameras do, as upstream's rendered
sensors draw them). ``visual_only`` ones (an extension of ours: the ROS ``runtime_overlays`` of upstream v1.4 are
such blocks) are intangible and, besides, seen by no sensor at all, nor ground for vehicles: only the viewer draws
them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core import arguments as arg
from mvsim_core.errors import AssetError, quoted
from mvsim_core.geometry.extent import Extent, posed, prism_corners
from mvsim_core.geometry.polygons import area, make_ccw
from mvsim_core.objects.track import checked_track
from mvsim_core.objects.visual import Visual, parse_visuals
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Kind, Param, ParamValues, parse_value, read_params, table_names
from mvsim_core.xml.simulable import SIMULABLE_TAGS, SimulableSpec, parse_simulable

if TYPE_CHECKING:
    from mvsim_core.dynamics.physics import Physics

BLOCK_PARAMS: tuple[Param, ...] = (
    Param("mass", Kind.FLOAT, 30.0, "kg", positive=True),
    Param("zmin", Kind.FLOAT, math.nan, "m", doc="bottom of the prism; NaN = from the visual, else 0"),
    Param("zmax", Kind.FLOAT, math.nan, "m", doc="top of the prism; NaN = from the visual, else 1"),
    Param("ground_friction", Kind.FLOAT, 0.5, min=0.0),
    Param("lateral_friction", Kind.FLOAT, 0.5, min=0.0),
    Param("restitution", Kind.FLOAT, 0.01, min=0.0),
    Param("color", Kind.COLOR, (0, 0, 255, 255)),
    Param("intangible", Kind.BOOL, False),
    Param("visual_only", Kind.BOOL, False, doc="drawn by the viewer only: intangible and unseen by every sensor"),
    Param("static", Kind.BOOL, False),
    Param("visual_scale", Kind.FLOAT, math.nan, positive=False),
    Param("linear_damping", Kind.FLOAT, 0.1, "1/s", min=0.0),
    Param("angular_damping", Kind.FLOAT, 0.1, "1/s", min=0.0),
)
DRIVABLE_GEOMETRIES = frozenset({"ramp", "semi_cylinder_bump"})
"""``<geometry>`` types whose top vehicles drive on (upstream's documentation, reference §1.9)."""

STRUCTURE_TAGS = frozenset({"shape", "geometry", "shape_from_visual", "visual"})
KNOWN_TAGS = table_names(BLOCK_PARAMS) | STRUCTURE_TAGS | SIMULABLE_TAGS
MAX_POLYGON_VERTICES = 12
MAX_GEOMETRY_VERTICES = 360
"""Most ``vertex_count`` of a cylinder, sphere or bump ``<geometry>`` (one vertex per degree)."""

_PT = Param("pt", Kind.VEC2, None)
_DEFAULT_SQUARE = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]])

STAND_IN_SQUARE = np.array([[-0.05, -0.05], [0.05, -0.05], [0.05, 0.05], [-0.05, 0.05]])
"""m: footprint of a block whose ``<shape_from_visual/>`` has no model to measure (offline, missing file). It is
also made intangible, so that it traps nothing the world places around it; its heights are the written
``zmin``/``zmax`` when given."""


@dataclass
class Geometry:
    """A ``<geometry>`` primitive. ``type`` is cylinder, sphere, box, ramp or semi_cylinder_bump; sizes in m."""

    type: str
    dims: dict[str, float]

    def height(self) -> float:
        """Height of the primitive above its base (m)."""
        if self.type == "cylinder":
            return self.dims["length"]
        if self.type == "sphere":
            return 2.0 * self.dims["radius"]
        return self.dims["lz"]


_GEOMETRY_ATTRS: dict[str, tuple[tuple[str, float | None], ...]] = {
    "cylinder": (("radius", None), ("length", None), ("vertex_count", 10.0)),
    "sphere": (("radius", None), ("vertex_count", 10.0)),
    "box": (("lx", None), ("ly", None), ("lz", None)),
    "ramp": (("lx", None), ("ly", None), ("lz", None)),
    "semi_cylinder_bump": (("lx", None), ("ly", None), ("lz", None), ("vertex_count", 10.0)),
}


def _geometry_footprint(g: Geometry) -> np.ndarray:
    d = g.dims
    if g.type in ("cylinder", "sphere"):
        n = int(d["vertex_count"])
        a = np.arange(n) * (2 * math.pi / n)
        return np.column_stack([d["radius"] * np.cos(a), d["radius"] * np.sin(a)])
    if g.type == "semi_cylinder_bump":
        # the bump's axis runs along x; centred in y
        lx, ly = d["lx"], d["ly"]
        return np.array([[0, -ly / 2], [lx, -ly / 2], [lx, ly / 2], [0, ly / 2]], dtype=float)
    lx, ly = d["lx"], d["ly"]
    return np.array([[0, 0], [lx, 0], [lx, ly], [0, ly]], dtype=float)


def parse_geometry(node: XmlNode, ctx: ParseContext) -> Geometry:
    """Read ``<geometry type="..." .../>``; sizes must be positive."""
    gtype = ctx.require_attr(node, "type")
    if gtype not in _GEOMETRY_ATTRS:
        raise ctx.error(node, f"unknown geometry type {quoted(gtype)}; known: {', '.join(_GEOMETRY_ATTRS)}",
                        attr="type")
    dims: dict[str, float] = {}
    for key, default in _GEOMETRY_ATTRS[gtype]:
        raw = node.attrs.get(key)
        if raw is None:
            if default is None:
                raise ctx.error(node, f"<geometry type=\"{gtype}\"> needs the attribute {key}=\"...\" (m)")
            dims[key] = default
            continue
        kind = Kind.INT if key == "vertex_count" else Kind.FLOAT
        p = Param(key, kind, None, min=3 if key == "vertex_count" else None,
                  max=MAX_GEOMETRY_VERTICES if key == "vertex_count" else None, positive=True)
        dims[key] = float(parse_value(p, raw, node, ctx, attr=key))
    return Geometry(gtype, dims)


def parse_shape(node: XmlNode, ctx: ParseContext, *, extra: dict[str, str] | None = None) -> np.ndarray:
    """Read ``<shape><pt>x y</pt>...</shape>`` as a counter-clockwise polygon (P×2, m)."""
    pts = [parse_value(_PT, c.text, c, ctx, extra=extra) for c in node.children_named("pt")]
    for c in node.children:
        if c.tag != "pt":
            ctx.warn(c, f"unknown tag <{c.tag}> in <shape> is ignored")
    if len(pts) < 3:
        raise ctx.error(node, f"<shape> needs at least 3 <pt>x y</pt> points, got {len(pts)}")
    poly = np.array(pts, dtype=float)
    if area(poly) < 1e-12:
        raise ctx.error(node, "<shape> has zero area (its points are on one line); check the coordinates")
    return make_ccw(poly)


@dataclass
class Block:
    """A block instance.

    Attributes:
        name: unique name (default ``block001``, ``block002``, ...).
        class_name: the block class it came from, or "".
        params: the table above.
        footprint: P×2 polygon in the block frame (m, counter-clockwise).
        zmin, zmax: prism extent above the block pose (m).
        geometry: the primitive, when given by ``<geometry>``.
        sim: pose, velocity, publishing, animation.
        visuals: visual models.
        node: the instance node.
    """

    name: str
    class_name: str
    params: ParamValues
    footprint: np.ndarray
    zmin: float
    zmax: float
    geometry: Geometry | None
    sim: SimulableSpec
    visuals: list[Visual] = field(default_factory=list)
    node: XmlNode | None = None

    state_pose: tuple[float, float, float, float, float, float] | None = None
    _track: tuple[Any, int] | None = field(default=None, repr=False, compare=False)
    collision: bool = False
    had_collision: bool = False

    def attach_track(self, physics: Physics, k: int) -> None:
        """Read the pose from row ``k`` of ``physics.anim_poses`` from now on (the physics drives it along its
        track: :meth:`mvsim_core.dynamics.physics.Physics.animate`); wiring: the physics calls it when it is built.

        Raises:
            ArgumentTypeError: ``physics`` is no Physics, ``k`` no integer.
            ArgumentValueError: ``k`` is no row of ``physics.anim_poses``.
        """
        self._track = checked_track(physics, k, f"block '{self.name}'")

    def detach_track(self) -> None:
        """Stop following a track (the object left the world, or the physics was rebuilt without it)."""
        self._track = None

    @property
    def pose(self) -> tuple[float, float, float, float, float, float]:
        """Current pose (x, y, z, yaw, pitch, roll), world frame, m / rad."""
        if self._track is not None:
            physics, k = self._track
            x, y, z, yaw, pitch, roll = (float(v) for v in physics.anim_poses[k])
            return (x, y, z, yaw, pitch, roll)
        return self.state_pose if self.state_pose is not None else self.sim.pose

    @property
    def is_static(self) -> bool:
        """Declared ``<static>`` and not animated (an animated block moves, whatever it declares)."""
        return bool(self.params["static"]) and not self.sim.keyframes

    @property
    def is_animated(self) -> bool:
        """It has a keyframe ``<animation>``: its pose is forced every step (a kinematic body, when tangible)."""
        return bool(self.sim.keyframes)

    @property
    def is_intangible(self) -> bool:
        """No body: nothing collides with it and 2D lidars do not see it (``<intangible>``, or ``<visual_only>``)."""
        return bool(self.params["intangible"]) or self.is_visual_only

    @property
    def is_visual_only(self) -> bool:
        """Drawn by the viewer and nothing else (``<visual_only>``): intangible, not ground, seen by no sensor
        (neither lidars nor cameras): what upstream calls an overlay (ROS ``runtime_overlays``)."""
        return bool(self.params["visual_only"])

    @property
    def is_drivable(self) -> bool:
        """A ramp or a semi-cylinder bump: vehicles drive onto it (its top is their ground, tangible or not) and
        never collide with its body; other bodies and every sensor still meet it as solid. Never a visual-only
        block (only the viewer knows of it)."""
        return (self.geometry is not None and self.geometry.type in DRIVABLE_GEOMETRIES
                and not self.is_visual_only)

    def extent(self, pose: tuple[float, ...] | None = None) -> Extent:
        """The box (world frame, m) of its prism — the footprint from ``zmin`` to ``zmax`` — at ``pose`` (default: its
        current pose), as the physics and the sensors place it.

        Raises:
            ArgumentTypeError, ArgumentValueError: a ``pose`` that is not 6 finite numbers (x, y, z, yaw, pitch, roll).
        """
        if pose is not None:
            pose = arg.finite_reals("extent", "pose", pose, 6, f"block '{self.name}'")
        return Extent.of_points(posed(prism_corners(self.footprint, self.zmin, self.zmax),
                                      self.pose if pose is None else pose))

    def summary(self, pose: tuple[float, ...] | None = None) -> str:
        """One line for ``mvsim check``: kind, shape, where (``pose``, default: the current one) and its box.

        Raises:
            ArgumentTypeError, ArgumentValueError: a ``pose`` that is not 6 finite numbers (x, y, z, yaw, pitch, roll).
        """
        if pose is not None:
            pose = arg.finite_reals("summary", "pose", pose, 6, f"block '{self.name}'")
        kind = ("visual-only" if self.is_visual_only else "intangible" if self.is_intangible
                else "animated" if self.is_animated else "static" if self.is_static else "dynamic")
        shape = self.geometry.type if self.geometry else f"{len(self.footprint)}-gon"
        pose = self.pose if pose is None else pose
        x, y, z, yaw, _, _ = pose
        return (f"{self.name}{f' [{self.class_name}]' if self.class_name else ''}: {kind} {shape}, "
                f"z {z + self.zmin:g}..{z + self.zmax:g} m, at ({x:.3g}, {y:.3g}, {math.degrees(yaw):.3g}°)")


def build_block(nodes: Sequence[XmlNode], ctx: ParseContext, *, name: str, class_name: str = "") -> Block:
    """Build a block from its instance node followed by its class node(s)."""
    inst = nodes[0]
    for n in nodes:
        for c in n.children:
            if c.tag not in KNOWN_TAGS:
                ctx.warn(c, f"unknown tag <{c.tag}> in <{n.tag}> is ignored")
    params = read_params(BLOCK_PARAMS, nodes, ctx)
    scale = params["visual_scale"]
    visuals: list[Visual] = []
    for n in nodes:
        visuals.extend(parse_visuals(n, ctx, scale_override=scale if math.isfinite(scale) else None))
    geometry = None
    footprint = None
    stand_in = False
    zmin, zmax = params["zmin"], params["zmax"]
    for n in nodes:
        shape = n.child("shape")
        geo = n.child("geometry")
        sfv = n.child("shape_from_visual")
        if geo is not None:
            geometry = parse_geometry(geo, ctx)
            footprint = _geometry_footprint(geometry)
            if math.isnan(zmin):
                zmin = 0.0
            if math.isnan(zmax):
                zmax = geometry.height()
        elif shape is not None:
            footprint = parse_shape(shape, ctx)
        elif sfv is not None:
            footprint, zz = _footprint_from_visuals(visuals, ctx, sfv, name)
            if footprint is None:
                footprint, stand_in = STAND_IN_SQUARE.copy(), True
                ctx.warn(sfv, f"<shape_from_visual/>: block '{name}' has no visual model to measure; it stands in as "
                              f"a {2 * STAND_IN_SQUARE[2, 0]:g} m intangible square (nothing collides with it); "
                              "give it a <shape> or <geometry> to make it solid")
            if zz is not None:
                if math.isnan(zmin):
                    zmin = zz[0]
                if math.isnan(zmax):
                    zmax = zz[1]
        if footprint is not None:
            break
    if footprint is None:
        footprint = _DEFAULT_SQUARE.copy()
    if math.isnan(zmin) or math.isnan(zmax):
        vb = _visual_bounds(visuals)
        if math.isnan(zmin):
            zmin = float(vb[0, 2]) if vb is not None else 0.0
        if math.isnan(zmax):
            zmax = float(vb[1, 2]) if vb is not None else 1.0
    if zmax < zmin:
        where = params.where.get("zmax") or inst
        raise ctx.error(where, f"block '{name}': zmax ({zmax:g} m) is below zmin ({zmin:g} m)")
    sim = parse_simulable(nodes, ctx, what="block", name=name)
    if stand_in:
        params["intangible"] = True
    if not (params["intangible"] or params["visual_only"]):
        from mvsim_core.dynamics.body_check import rigid_body_problem

        problem = rigid_body_problem(footprint, None if params["static"] else float(params["mass"]))
        if problem is not None:
            where = next((c for n in nodes for c in (n.child("shape"), n.child("geometry")) if c is not None), inst)
            raise ctx.error(where, f"block '{name}': {problem}")
    return Block(name=name, class_name=class_name, params=params, footprint=footprint, zmin=float(zmin),
                 zmax=float(zmax), geometry=geometry, sim=sim, visuals=visuals, node=inst)


WALL_MASS = 1e5  # kg: walls are static; mass and ground friction as upstream
WALL_GROUND_FRICTION = 1e5


def wall_block(seg, node: XmlNode) -> Block:
    """A static block for one wall segment (``mvsim_core.elements.walls.WallSegment``)."""
    from mvsim_core.xml.params import ParamValues as _PV

    params = _PV()
    for p in BLOCK_PARAMS:
        params[p.name] = p.default
    params.update(mass=WALL_MASS, ground_friction=WALL_GROUND_FRICTION, static=True, color=seg.color,
                  zmin=seg.zmin, zmax=seg.zmax)
    # the footprint is in the world frame (pose 0): no elevation adjust at that origin, which need not lie in the
    # wall, as upstream, whose walls are built in code and skip the adjust of parsed objects
    return Block(name=seg.name, class_name="", params=params, footprint=np.asarray(seg.polygon, dtype=float),
                 zmin=float(seg.zmin), zmax=float(seg.zmax), geometry=None,
                 sim=SimulableSpec(skip_elevation_adjust=True), node=node)


def _visual_bounds(visuals: Sequence[Visual]) -> np.ndarray | None:
    boxes = [v.bounds for v in visuals if v.bounds is not None]
    if not boxes:
        return None
    b = np.array(boxes)
    return np.array([b[:, 0, :].min(axis=0), b[:, 1, :].max(axis=0)])


def _footprint_from_visuals(visuals: Sequence[Visual], ctx: ParseContext, node: XmlNode,
                            name: str) -> tuple[np.ndarray | None, tuple[float, float] | None]:
    """Convex footprint and z range of the visual models that load; (None, None) when none does (the caller puts
    a stand-in that traps nothing: :data:`STAND_IN_SQUARE`, intangible, for a block; its wheels' outline for a
    vehicle's chassis)."""
    from mvsim_core.io.meshes import convex_footprint, convex_hull_2d, z_range

    hulls = []
    zs = []
    for v in visuals:
        try:
            m = v.mesh() if v.path is not None else None
        except AssetError as e:
            ctx.missing_asset(v.uri, v.node, e.message)
            m = None
        if m is not None and len(m.vertices):
            hulls.append(convex_footprint(m))
            zs.append(z_range(m))
    if hulls:
        pts = np.vstack(hulls)
        hull = convex_hull_2d(pts)
        return hull, (min(z[0] for z in zs), max(z[1] for z in zs))
    return None, None
