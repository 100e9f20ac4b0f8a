"""``load_world``: read a world file into a :class:`~mvsim_core.world.World`.

Every child of ``<mvsim_world>`` is dispatched by its tag (flow-control tags are expanded by
:class:`~mvsim_core.xml.flow.Walker`); any other tag is tried as a root world parameter, and otherwise warned about
and skipped. Class definitions (``vehicle:class``, ``block:class``, ``actor:class``) are kept as nodes and read
for each instance, so values such as ``$f{rand()}`` are drawn per instance.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mvsim_core.errors import WorldFileError
from mvsim_core.rng import WorldRandom
from mvsim_core.world import SimObject, World
from mvsim_core.world_options import (
    GEOREFERENCE_PARAMS,
    GUI_PARAMS,
    LIGHTS_PARAMS,
    MIN_TIMESTEP,
    RAWLOG_NOTE,
    WORLD_PARAMS,
)
from mvsim_core.xml.context import CURRENT_DIR_VAR, ParseContext
from mvsim_core.xml.flow import Walker, expanded
from mvsim_core.xml.limits import Charge, LoadLimits
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.overrides import Overrides, OverrideValue
from mvsim_core.xml.params import parse_value, read_params, warn_unknown_children
from mvsim_core.xml.parser import parse_text, read_text_file

if TYPE_CHECKING:
    from mvsim_core.sensors.base import Sensor

STANDALONE_SENSOR_HOST = "__standaloneSensorHost"
_VERSION = re.compile(r"\s*\d+\.\d+\s*$")
_WORLD_PARAM = {p.name: p for p in WORLD_PARAMS}


def load_world(path: str | os.PathLike[str], *, seed: int = 0, allow_shell: bool = False,
               env: Mapping[str, str] | None = None, limits: LoadLimits | None = None,
               variables: Mapping[str, OverrideValue] | None = None,
               include_params: Mapping[str, Mapping[str, OverrideValue]] | None = None) -> World:
    """Load a world file.

    Args:
        path: the ``.world.xml`` file.
        seed: seed of the world's random generator (``$f{rand()}``, odometry and sensor noise).
        allow_shell: allow ``$(cmd)`` substitutions to run shell commands.
        env: environment for ``$env{}`` and included-file fallbacks (default: ``os.environ``).
        limits: expansion limits (memory, objects, loop iterations, value length, includes, nesting;
            :mod:`mvsim_core.xml.limits`); default: the built-in ones, each overridable by its ``MVSIM_MAX_*``
            variable in ``env``.
        variables: world variables set from outside, name -> value: they win over the file's ``<variable>`` of the
            same name (:mod:`mvsim_core.xml.overrides`), e.g. ``{"mu": 0.3}``.
        include_params: ``<include>`` parameters set from outside, file pattern -> {parameter -> value}, e.g.
            ``{"lidar2d.sensor.xml": {"noise": 0.05}}``.

    Raises:
        WorldFileError: with the file and line of the first problem;
            :class:`~mvsim_core.xml.overrides.OverrideError` (a WorldFileError) for a variable or include parameter
            that the world never uses.
    """
    import mvsim_core.elements  # noqa: F401  (registers element classes)
    import mvsim_core.objects.vehicles  # noqa: F401  (registers dynamics classes)
    import mvsim_core.sensors  # noqa: F401  (registers sensor classes)

    p = Path(path)
    shown = str(path)
    environ = dict(os.environ if env is None else env)
    limits = limits or LoadLimits.from_env(environ)
    text = read_text_file(p, shown_as=shown, max_bytes=limits.included_bytes)
    overrides = Overrides.of(variables, include_params)
    ctx = ParseContext(env=environ, rng=WorldRandom(seed), allow_shell=allow_shell, limits=limits,
                       overrides=overrides)
    ctx.variables.update(overrides.variables)
    if not text.strip():
        raise WorldFileError(shown, 1, "empty file; a world file holds one <mvsim_world> element")
    roots = parse_text(text, shown, warn=ctx.warn_at, max_depth=ctx.limits.nesting_depth)
    if not roots:
        raise WorldFileError(shown, 1, "no XML element found; a world file holds one <mvsim_world> element")
    root = roots[0]
    if root.tag != "mvsim_world":
        raise WorldFileError(shown, root.line, f"root element is <{root.tag}>; a world file starts with "
                                               f"<mvsim_world version=\"1.0\">")
    if len(roots) > 1:
        raise WorldFileError(shown, roots[1].line, f"<{roots[1].tag}> after </mvsim_world>; a world file has a "
                                                   f"single root element — move it inside <mvsim_world>")
    version = root.attrs.get("version")
    if version is not None and not _VERSION.match(version):
        raise ctx.error(root, f"bad version=\"{version}\"; write it as major.minor, e.g. version=\"1.0\"",
                        attr="version")
    ctx.variables[CURRENT_DIR_VAR] = str(p.resolve().parent)
    world = _Loader(ctx, p).load(root)
    overrides.check_used(shown)
    return world


SPAWN_SOURCE = "<spawn request>"
"""File name given to XML text spawned without a source (:func:`parse_object`), placed next to the world file."""


def parse_object(world: World, xml: str, *, name: str | None = None, pose: tuple[float, float, float] | None = None,
                 default_pose: tuple[float, float, float] | None = None,
                 source: str | os.PathLike[str] | None = None, allow_shell: bool = False,
                 env: Mapping[str, str] | None = None, limits: LoadLimits | None = None) -> SimObject:
    """Build the one vehicle, block or actor that ``xml`` describes, for ``world`` (:meth:`World.spawn`; not added).

    The text is read as if written in a world file: one ``<vehicle>``, ``<block>`` or ``<actor>`` element (also
    inside ``<mvsim_world>``), with the world's class definitions in force; ``<vehicle:class>``,
    ``<block:class>``, ``<actor:class>`` written in the text come first (shadowing the world's of the same name,
    for this object only); ``<include>``, ``<variable>``, ``<for>``, ``<if>`` work. Random values come from the
    world's generator.

    Args:
        world: the world the object is for (classes, random generator, file location).
        xml: the XML text.
        name: the object's name (overrides the element's ``name``; default: that, else the first free ``veh<N>``,
            ``block<NNN>``, ``actor<N>``).
        pose: (x, y, yaw) in m, m, rad (world frame) instead of the element's ``<init_pose>``; z, pitch and roll 0
            (vehicles and blocks are then placed on the ground).
        default_pose: the same, used only when neither the element nor its class has an ``<init_pose>`` /
            ``<init_pose3d>``.
        source: where the text comes from: relative paths resolve from its directory and messages name it
            (default: ``<spawn request>`` next to the world file).
        allow_shell: let ``$(cmd)`` run a shell.
        env: environment for ``$env{}`` (default: ``os.environ``).
        limits: expansion limits of this request (default: as :func:`load_world`); every request has its own
            budget.

    Raises:
        WorldFileError: bad XML, or not exactly one object in it (file and line in the text).
    """
    import mvsim_core.elements  # noqa: F401  (registers element classes)
    import mvsim_core.objects.vehicles  # noqa: F401  (registers dynamics classes)
    import mvsim_core.sensors  # noqa: F401  (registers sensor classes)

    src = Path(source) if source is not None else world.path.resolve().parent / SPAWN_SOURCE
    shown = str(src)
    environ = dict(os.environ if env is None else env)
    ctx = ParseContext(env=environ, rng=world.rng, allow_shell=allow_shell,
                       limits=limits or LoadLimits.from_env(environ))
    ctx.variables[CURRENT_DIR_VAR] = str(src.resolve().parent)
    roots = parse_text(xml, shown, warn=ctx.warn_at, max_depth=ctx.limits.nesting_depth)
    if len(roots) == 1 and roots[0].tag == "mvsim_world":
        roots = roots[0].children
    if not roots:
        raise WorldFileError(shown, 1, "no XML element; write one <vehicle>, <block> or <actor> element")
    loader = _SpawnLoader(ctx, src, world, name, pose, default_pose)
    loader.walker.walk(roots)
    obj = loader.result(shown)
    _check_grid_reach(world.elements, [obj])
    world.warnings.extend(w for w in ctx.warnings if w not in world.warnings)
    world.missing_assets.update(ctx.missing_assets)
    return obj


def object_charges(obj: Any, node: XmlNode, kind: str | None = None) -> list[Charge]:
    """What ``obj`` (built from ``node``) costs the load budget (:mod:`mvsim_core.memory_budget`): one
    :class:`~mvsim_core.xml.limits.Charge` per object — a vehicle, then each of its sensors (charged at its own
    ``<sensor>`` tag, with its per-ray or per-pixel arrays); a block (``kind``: ``"wall segment"``) with its
    vertices; an actor, a world element, a standalone sensor, a marker or a joint."""
    from mvsim_core import memory_budget as mb
    from mvsim_core.elements.base import WorldElement
    from mvsim_core.objects.actor import Actor
    from mvsim_core.objects.block import Block
    from mvsim_core.objects.marker import Marker
    from mvsim_core.objects.vehicles.base import Vehicle
    from mvsim_core.sensors.base import Sensor

    def named(noun: str) -> str:
        cls = getattr(obj, "class_name", "")
        return f"{cls} {noun}" if cls else noun

    def charge(what: str, nbytes: int) -> Charge:
        return Charge(what, nbytes, node.file, node.line)

    if isinstance(obj, Vehicle):
        return [charge(named("vehicle"), mb.vehicle_bytes(len(obj.wheels))),
                *(c for s in obj.sensors.values() for c in object_charges(s, s.node))]
    if isinstance(obj, Sensor):
        return [charge(f"{obj.xml_class} sensor", mb.sensor_bytes(sensor_array_bytes(obj)))]
    if isinstance(obj, Block):
        return [charge(kind or named("block"), mb.block_bytes(len(obj.footprint)))]
    if isinstance(obj, Actor):
        return [charge(named("actor"), mb.ACTOR_BYTES)]
    if isinstance(obj, Marker):
        return [charge("marker", mb.marker_bytes(len(obj.points)))]
    if isinstance(obj, WorldElement):
        return [charge("world element", mb.ELEMENT_BYTES)]
    return [charge("joint", mb.JOINT_BYTES)]


def sensor_array_bytes(sensor: Sensor) -> int:
    """Bytes of the per-ray or per-pixel arrays ``sensor`` allocates once started: its rays times its class's
    ``RAY_BYTES`` (2D and 3D lidars), its pixels times :data:`~mvsim_core.sensors.camera.PIXEL_BYTES` (a camera;
    both images of an RGB-D camera that senses both), else 0."""
    from mvsim_core.sensors.camera import PIXEL_BYTES, Camera
    from mvsim_core.sensors.lidar2d import Lidar2D
    from mvsim_core.sensors.lidar3d import Lidar3D
    from mvsim_core.sensors.rgbd_camera import RgbdCamera

    if isinstance(sensor, Lidar2D):
        return sensor.nrays * sensor.RAY_BYTES
    if isinstance(sensor, Lidar3D):
        return sensor.vert_nrays * sensor.horz_nrays * sensor.RAY_BYTES
    p = sensor.params
    if isinstance(sensor, Camera):
        return int(p["ncols"]) * int(p["nrows"]) * PIXEL_BYTES
    if isinstance(sensor, RgbdCamera):
        return sum(int(p[f"{k}_ncols"]) * int(p[f"{k}_nrows"]) * PIXEL_BYTES
                   for k in ("depth", "rgb") if p[f"sense_{k}"])
    return 0


def _check_grid_reach(elements: list[Any], objects: list[SimObject]) -> None:
    """Refuse a moving object (vehicle, dynamic block) whose collision neighbourhood on an occupancy grid would
    take more memory than the budget (:func:`~mvsim_core.dynamics.grid_obstacles.stencil_bytes`): a huge body, or a
    grid of tiny cells. The error is at the object."""
    from mvsim_core.dynamics.fixtures import body_radius
    from mvsim_core.dynamics.grid_obstacles import stencil_bytes
    from mvsim_core.elements.occupancy_grid import OccupancyGrid
    from mvsim_core.memory_budget import budget_message, over_budget
    from mvsim_core.objects.block import Block
    from mvsim_core.objects.vehicles.base import Vehicle

    grids = [e for e in elements if isinstance(e, OccupancyGrid)]
    if not grids:
        return
    for obj in objects:
        if isinstance(obj, Vehicle):
            what, radius = "vehicle", body_radius(obj.chassis.footprint, obj.wheels)
        elif isinstance(obj, Block) and not obj.is_static and not obj.is_intangible:
            what, radius = "block", body_radius(obj.footprint)
        else:
            continue
        for g in grids:
            need = stencil_bytes(radius, g.grid.resolution)
            if over_budget(need, 1) and obj.node is not None:
                raise WorldFileError(obj.node.file, obj.node.line, budget_message(
                    f"{what} '{obj.name}' (reaching {radius:.3g} m from its reference point) on the occupancy grid "
                    f"at {g.node.where()} ({g.grid.resolution:g} m cells): searching the cells around it for "
                    f"collisions", need, 1, "use a coarser grid resolution or a smaller object"))


class _BudgetWalker(Walker):
    """A :class:`~mvsim_core.xml.flow.Walker` that lets the load budget project each ``<for>`` from its first
    iteration (:meth:`~mvsim_core.xml.limits.LoadBudget.project`): a loop that would build far more than the limits
    allow stops at its ``<for>`` after one iteration, not after minutes of building."""

    def _for(self, node: XmlNode) -> Iterator[XmlNode]:
        budget = self.ctx.budget
        inner = super()._for(node)
        try:
            child = next(inner, None)  # reads the bounds and charges the loop
            if child is None:
                return
            loop = budget.enter_loop(node.file, node.line)
            try:
                prev = None
                while child is not None:
                    loop.first = child is not prev  # the body is expanded element-major: first visit of `child`
                    before = budget.snapshot()
                    yield child  # the walker builds what it expands into before asking for the next one
                    if before is not None:
                        budget.project(before)
                    prev, child = child, next(inner, None)
            finally:
                budget.exit_loop()
        finally:
            close = getattr(inner, "close", None)  # a generator: let its own cleanup run now
            if close is not None:
                close()


class _Loader:
    def __init__(self, ctx: ParseContext, path: Path) -> None:
        self.ctx = ctx
        self.world = World(path=path, params=read_params(WORLD_PARAMS, [], ctx), gui=read_params(GUI_PARAMS, [], ctx),
                           lights=read_params(LIGHTS_PARAMS, [], ctx), georeference=None, rng=ctx.rng,
                           object_parser=parse_object)
        self.walker = _BudgetWalker(ctx, {
            "vehicle:class": self.vehicle_class,
            "vehicle": self.vehicle,
            "block:class": self.block_class,
            "block": self.block,
            "actor:class": self.actor_class,
            "actor": self.actor,
            "element": self.element,
            "sensor": self.sensor,
            "gui": self.gui,
            "lights": self.lights,
            "georeference": self.georeference,
            "walls": self.walls,
            "marker": self.marker,
            "joint": self.joint,
        }, on_unknown=self.world_param)
        self.walker.start_file(path)

    def load(self, root: XmlNode) -> World:
        self.walker.walk(root.children)
        w = self.world
        w.warnings = self.ctx.warnings
        w.missing_assets = self.ctx.missing_assets
        dt = float(w.params["simul_timestep"])
        _check_grid_reach(w.elements, [*w.vehicles.values(), *w.blocks.values()])
        periods = [s.period for v in w.vehicles.values() for s in v.sensors.values()]
        if dt > 0 and periods and dt > min(periods) + 1e-12:
            self.ctx.warn(w.params.where.get("simul_timestep"),
                          f"simul_timestep {dt:g} s is longer than the shortest sensor period {min(periods):g} s; "
                          f"sensors will fire late")
        self._warn_costly_periods()
        return w

    def _warn_costly_periods(self) -> None:
        """Warn about a timestep or sensor period that makes a simulated second cost minutes
        (:mod:`mvsim_core.costly_periods`), with the estimated cost."""
        from mvsim_core.costly_periods import costly_parts

        w = self.world
        sensors = [(f"{v.name}/{s.name}", s) for v in w.vehicles.values() for s in v.sensors.values()]
        sensors += [(s.name, s) for s in w.sensors.values()]
        for part in costly_parts(w.timestep, w.params.where.get("simul_timestep"), len(w.vehicles), sensors,
                                 sensor_array_bytes):
            self.ctx.warn(part.node, part.message())

    # ------------------------------------------------------------------ helpers
    def _name(self, node: XmlNode, prefix: str, fmt: str = "{}{}") -> str:
        name = self.ctx.attr(node, "name")
        if name:
            return name
        return fmt.format(prefix, self.ctx.next_index(prefix))

    def _charge(self, node: XmlNode, what: str, charges: list[Charge]) -> None:
        """Charge what ``node`` built to the load's budget: objects (``MVSIM_MAX_OBJECTS``) and estimated memory
        (``MVSIM_MAX_LOAD_MEMORY``; :func:`object_charges`)."""
        self.ctx.budget.charge(what, charges, node.file, node.line)

    def _unique(self, node: XmlNode, name: str) -> None:
        w = self.world
        if name in w.vehicles or name in w.blocks or name in w.actors:
            raise self.ctx.error(node, f"duplicate name '{name}': another vehicle, block or actor already has it; "
                                       f"names must be unique", attr="name")

    def _register_class(self, node: XmlNode, table: dict[str, XmlNode], what: str) -> None:
        name = self.ctx.require_attr(node, "name")
        if name in table:
            first = table[name]
            raise self.ctx.error(node, f"duplicate {what} class '{name}' (first defined at {first.file}:"
                                       f"{first.line})", attr="name")
        table[name] = node

    def _class_of(self, node: XmlNode, table: dict[str, XmlNode], what: str, name: str) -> XmlNode | None:
        cname = self.ctx.attr(node, "class")
        if not cname:
            return None
        if cname not in table:
            known = ", ".join(table) or "none defined"
            raise self.ctx.error(node, f"{what} '{name}' uses undefined class '{cname}'; defined {what} classes: "
                                       f"{known} (include the file that defines it before this {what})",
                                 attr="class")
        return table[cname]

    # ------------------------------------------------------------------ tag handlers
    def vehicle_class(self, node: XmlNode) -> None:
        if "urdf" in node.attrs:  # a class generated from the user's URDF (mvsim_core.objects.vehicles.urdf_import)
            from mvsim_core.objects.vehicles.urdf_import import urdf_class_node

            node = urdf_class_node(node, self.ctx)
        self._register_class(node, self.world.vehicle_classes, "vehicle")

    def vehicle(self, node: XmlNode) -> None:
        from mvsim_core.objects.vehicles.base import build_vehicle
        from mvsim_core.sensors.base import sensor_from_xml

        name = self._name(node, "veh")
        self._unique(node, name)
        cls_node = self._class_of(node, self.world.vehicle_classes, "vehicle", name)
        cname = cls_node.attrs.get("name", "") if cls_node is not None else ""
        description = None
        if cls_node is not None and "urdf" in cls_node.attrs:
            from mvsim_core.objects.vehicles.urdf_import import description_of, urdf_vehicle_node

            description = description_of(cls_node)
            if description is not None:  # its own sensors named as URDF links sit on those links
                node = urdf_vehicle_node(node, description)
        v = build_vehicle(node, cls_node, self.ctx, name=name, class_name=cname, sensor_factory=sensor_from_xml)
        if description is not None:
            v.description = description
        n = len(v.sensors)
        self._charge(node, f"vehicle '{name}'" + (f" and its {n} sensor{'s' if n > 1 else ''}" if n else ""),
                     object_charges(v, node))
        self.world.vehicles[name] = v

    def block_class(self, node: XmlNode) -> None:
        self._register_class(node, self.world.block_classes, "block")

    def block(self, node: XmlNode) -> None:
        from mvsim_core.objects.block import build_block

        name = self._name(node, "block", "{}{:03d}")
        self._unique(node, name)
        cls_node = self._class_of(node, self.world.block_classes, "block", name)
        nodes = [node] + ([cls_node] if cls_node is not None else [])
        nodes = [expanded(n, self.ctx) for n in nodes]
        cname = cls_node.attrs.get("name", "") if cls_node is not None else ""
        b = build_block(nodes, self.ctx, name=name, class_name=cname)
        self._charge(node, f"block '{name}'", object_charges(b, node))
        self.world.blocks[name] = b

    def actor_class(self, node: XmlNode) -> None:
        self._register_class(node, self.world.actor_classes, "actor")

    def actor(self, node: XmlNode) -> None:
        from mvsim_core.objects.actor import build_actor

        name = self._name(node, "actor")
        self._unique(node, name)
        cls_node = self._class_of(node, self.world.actor_classes, "actor", name)
        nodes = [expanded(n, self.ctx) for n in [node] + ([cls_node] if cls_node is not None else [])]
        cname = cls_node.attrs.get("name", "") if cls_node is not None else ""
        a = build_actor(nodes, self.ctx, name=name, class_name=cname)
        self._charge(node, f"actor '{name}'", object_charges(a, node))
        self.world.actors[name] = a

    def element(self, node: XmlNode) -> None:
        from mvsim_core.elements.base import element_from_xml

        e = element_from_xml(node, self.ctx)
        self._charge(node, "a world element", object_charges(e, node))
        self.world.elements.append(e)

    def sensor(self, node: XmlNode) -> None:
        from mvsim_core.sensors.base import sensor_from_xml

        s = sensor_from_xml(node, self.ctx, STANDALONE_SENSOR_HOST)
        if s.name in self.world.sensors:
            raise self.ctx.error(node, f"duplicate standalone sensor name '{s.name}'")
        self._charge(node, f"standalone sensor '{s.name}'", object_charges(s, node))
        self.world.sensors[s.name] = s

    def gui(self, node: XmlNode) -> None:
        warn_unknown_children(node, {n for p in GUI_PARAMS for n in p.names}, self.ctx)
        self.world.gui = read_params(GUI_PARAMS, [node], self.ctx)

    def lights(self, node: XmlNode) -> None:
        warn_unknown_children(node, {n for p in LIGHTS_PARAMS for n in p.names}, self.ctx)
        self.world.lights = read_params(LIGHTS_PARAMS, [node], self.ctx)

    def georeference(self, node: XmlNode) -> None:
        warn_unknown_children(node, {n for p in GEOREFERENCE_PARAMS for n in p.names}, self.ctx)
        g = read_params(GEOREFERENCE_PARAMS, [node], self.ctx)
        if g.latitude > 90 or g.longitude > 180:
            raise self.ctx.error(node, "georeference latitude must be within ±90° and longitude within ±180°")
        if g.world_is_utm and g.world_to_enu_rotation_deg != 0.0:
            raise self.ctx.error(g.where.get("world_is_utm", node),
                                 "world_is_utm cannot be combined with a non-zero world_to_enu_rotation_deg")
        if g.world_is_utm and g.latitude == 0.0 and g.longitude == 0.0:
            raise self.ctx.error(g.where.get("world_is_utm", node),
                                 "world_is_utm needs <latitude> and <longitude> of the reference point")
        if g.world_is_utm and not -80.0 <= g.latitude <= 84.0:
            raise self.ctx.error(g.where.get("latitude", node),
                                 f"world_is_utm needs a <latitude> within [-80, 84] degrees, where UTM is defined "
                                 f"(got {g.latitude:g}); use world coordinates in the local ENU plane instead "
                                 f"(world_is_utm false)")
        self.world.georeference = g

    def walls(self, node: XmlNode) -> None:
        from mvsim_core.elements.walls import parse_walls
        from mvsim_core.objects.block import wall_block

        segments = parse_walls(node, self.ctx)
        blocks = [wall_block(seg, node) for seg in segments]
        self._charge(node, f"{len(segments)} wall segments",
                     [c for b in blocks for c in object_charges(b, node, "wall segment")])
        for seg, b in zip(segments, blocks, strict=True):
            self._unique(node, seg.name)
            self.world.blocks[seg.name] = b

    def marker(self, node: XmlNode) -> None:
        from mvsim_core.objects.marker import parse_marker

        m = parse_marker(node, self.ctx)
        self._charge(node, "a marker", object_charges(m, node))
        self.world.markers.append(m)

    def joint(self, node: XmlNode) -> None:
        from mvsim_core.objects.joint import parse_joint

        bodies = set(self.world.vehicles) | set(self.world.blocks)
        j = parse_joint(node, self.ctx, bodies)
        self._charge(node, "a joint", object_charges(j, node))
        self.world.joints.append(j)

    def world_param(self, node: XmlNode) -> None:
        p = _WORLD_PARAM.get(node.tag)
        if p is None:
            self.ctx.warn(node, f"unknown tag <{node.tag}> is ignored")
            return
        value = parse_value(p, node.text, node, self.ctx)
        if p.name == "simul_timestep" and 0 < value < MIN_TIMESTEP:
            raise self.ctx.error(node, f"<simul_timestep> must be 0 (automatic) or at least {MIN_TIMESTEP:g} s "
                                       f"(got {value:g})")
        self.world.params[p.name] = value
        self.world.params.where[p.name] = node
        if p.name == "save_to_rawlog" and str(value).strip():
            self.ctx.warn(node, RAWLOG_NOTE)


class _SpawnLoader(_Loader):
    """Reads the text of one spawn request (:func:`parse_object`) into a scratch world that shares the target
    world's classes (a copy: classes the text defines stay local) and random generator."""

    SPAWNABLE = ("vehicle", "block", "actor")

    POSE_TAGS = ("init_pose", "init_pose3d")

    def __init__(self, ctx: ParseContext, path: Path, target: World, name: str | None,
                 pose: tuple[float, float, float] | None, default_pose: tuple[float, float, float] | None) -> None:
        super().__init__(ctx, path)
        self.target = target
        self.name_override = name or None
        self.pose = pose
        self.default_pose = default_pose
        w = self.world
        w.vehicle_classes = dict(target.vehicle_classes)
        w.block_classes = dict(target.block_classes)
        w.actor_classes = dict(target.actor_classes)
        self.instances: list[XmlNode] = []
        handlers = {tag: self.walker.handlers[tag] for tag in ("vehicle:class", "block:class", "actor:class")}
        for tag in self.SPAWNABLE:
            handlers[tag] = self._instance(tag, self.walker.handlers[tag])
        self.walker.handlers = handlers
        self.walker.on_unknown = self._not_spawnable

    def _instance(self, tag: str, build: Any) -> Any:
        classes = {"vehicle": self.world.vehicle_classes, "block": self.world.block_classes,
                   "actor": self.world.actor_classes}[tag]

        def handle(node: XmlNode) -> None:
            self.instances.append(node)
            if len(self.instances) > 1:
                raise self.ctx.error(node, f"a second object (<{tag}>) in one spawn request; spawn one at a time")
            if self.pose is None and self.default_pose is not None:
                cls_node = classes.get(node.attrs.get("class", ""))
                if not any(n is not None and any(n.child(t) is not None for t in self.POSE_TAGS)
                           for n in (node, cls_node)):
                    self.pose = self.default_pose
            if self.pose is not None:
                x, y, yaw = self.pose
                pose_node = XmlNode("init_pose", text=f"{x!r} {y!r} {math.degrees(yaw)!r}", file=node.file,
                                    line=node.line)
                node = replace(node, children=[c for c in node.children if c.tag not in self.POSE_TAGS]
                               + [pose_node])
            build(node)
        return handle

    def _not_spawnable(self, node: XmlNode) -> None:
        raise self.ctx.error(node, f"<{node.tag}> cannot be spawned; a spawn request holds one <vehicle>, <block> or "
                                   f"<actor> element (and class definitions, <include>, <variable>)")

    def _register_class(self, node: XmlNode, table: dict[str, XmlNode], what: str) -> None:
        table[self.ctx.require_attr(node, "name")] = node  # the text's own definition wins, for this object

    def _name(self, node: XmlNode, prefix: str, fmt: str = "{}{}") -> str:
        if self.name_override:
            return self.name_override
        name = self.ctx.attr(node, "name")
        if name:
            return name
        taken = set(self.target.object_names())
        while True:
            name = fmt.format(prefix, self.ctx.next_index(prefix))
            if name not in taken:
                return name

    def result(self, shown: str) -> SimObject:
        w = self.world
        objs: list[SimObject] = [*w.vehicles.values(), *w.blocks.values(), *w.actors.values()]
        if not objs:
            raise WorldFileError(shown, 1, "no <vehicle>, <block> or <actor> element to spawn")
        obj = objs[0]
        if self.pose is not None:
            x, y, yaw = self.pose
            obj.sim.pose = (float(x), float(y), 0.0, float(yaw), 0.0, 0.0)
            obj.sim.pose_is_3d = False
        return obj
