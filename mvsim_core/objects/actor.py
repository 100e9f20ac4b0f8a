"""Human actors (``<actor:class>`` / ``<actor>``): kinematic walkers following waypoints (reference §1.15).

An actor walks from its initial pose (``<init_pose>``, else its first waypoint) to each ``<waypoint>`` in turn, in
a straight line at ``walking_speed`` (``running_speed`` towards a waypoint with ``animation="run"``), facing where
it goes (it turns within the first 0.3 s of a leg), and waits ``pause`` s at each. With ``<path loop="true">`` (the
default) it then walks back to the first waypoint and goes round again; otherwise it stays at the last one.
:meth:`Actor.walk` gives that as a keyframe track, which the physics plays on a kinematic circular body of radius
``collision_radius`` (:mod:`mvsim_core.dynamics.keyframes`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core import arguments as arg
from mvsim_core.geometry.extent import Extent, posed, prism_corners
from mvsim_core.objects.track import checked_track
from mvsim_core.objects.visual import Visual, parse_visuals
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Kind, Param, ParamValues, parse_value, read_params, table_names
from mvsim_core.xml.simulable import SIMULABLE_TAGS, Keyframe, SimulableSpec, parse_simulable

if TYPE_CHECKING:
    from mvsim_core.dynamics.physics import Physics

ACTOR_PARAMS: tuple[Param, ...] = (
    Param("walking_speed", Kind.FLOAT, 1.4, "m/s", positive=True),
    Param("running_speed", Kind.FLOAT, 3.5, "m/s", positive=True),
    Param("height", Kind.FLOAT, 1.75, "m", positive=True),
    Param("collision_radius", Kind.FLOAT, 0.3, "m", positive=True),
    Param("collision_height", Kind.FLOAT, 1.7, "m", positive=True),
    Param("animation_idle", Kind.STRING, ""),
    Param("animation_walk", Kind.STRING, ""),
    Param("animation_run", Kind.STRING, ""),
)
KNOWN_TAGS = table_names(ACTOR_PARAMS) | SIMULABLE_TAGS | {"path", "visual"}
_WP = Param("waypoint", Kind.FLOATS, ())
_PAUSE = Param("pause", Kind.FLOAT, 0.0, "s", min=0.0)
TURN_TIME = 0.3
"""s: an actor turns to its new heading within the first TURN_TIME of a leg (or half of it, if shorter)."""
FOOTPRINT_SIDES = 16
"""Sides of the polygon that stands for an actor's collision circle in the 2D lidar's scene."""
STAND_IN_WIDTH = 0.5
"""m: width (x and y) of the person-shaped stand-in of an actor whose size is not given (no collision dims)."""
STAND_IN_HEIGHT = 1.8
"""m: height of that stand-in."""
STAND_IN_HEAD = (0.13, 0.36)
"""Head of the stand-in: its height and width as fractions of the figure's height and width (0.234 m × 0.18 m for
the 1.8 m × 0.5 m figure); the body below it is a cylinder of the full width."""
STAND_IN_COLOR = (0xC0, 0x90, 0x70, 0xFF)
"""RGBA (0..255) of the stand-in (drawn; its luma is the 3D lidar's intensity of any actor)."""
STAND_IN_SIDES = 12
"""Sides of the stand-in's polygons (a multiple of 4: the figure spans its full width along x and y)."""


@dataclass
class Waypoint:
    pose: tuple[float, float, float, float, float, float]  # x y z yaw pitch roll (m, rad)
    pause: float = 0.0  # s
    animation: str = "walk"


@dataclass
class Actor:
    name: str
    class_name: str
    params: ParamValues
    sim: SimulableSpec
    path: list[Waypoint] = field(default_factory=list)
    loop: bool = True
    visuals: list[Visual] = field(default_factory=list)
    node: XmlNode | None = None
    state_pose: tuple[float, float, float, float, float, float] | None = None
    has_init_pose: bool = False
    _track: tuple[Any, int] | None = field(default=None, repr=False, compare=False)

    def attach_track(self, physics: Physics, k: int) -> None:
        """Read the pose from row ``k`` of ``physics.anim_poses`` from now on (the physics drives it along its
        track: :meth:`mvsim_core.dynamics.physics.Physics.animate`); wiring: the physics calls it when it is built.

        Raises:
            ArgumentTypeError: ``physics`` is no Physics, ``k`` no integer.
            ArgumentValueError: ``k`` is no row of ``physics.anim_poses``.
        """
        self._track = checked_track(physics, k, f"actor '{self.name}'")

    def detach_track(self) -> None:
        """Stop following a track (the object left the world, or the physics was rebuilt without it)."""
        self._track = None

    @property
    def pose(self) -> tuple[float, float, float, float, float, float]:
        """Current pose (x, y, z, yaw, pitch, roll), world frame, m / rad: where its walk has taken it (or where
        it was put last, :meth:`World.set_pose <mvsim_core.world.World.set_pose>`), else its initial pose."""
        if self._track is not None:
            physics, k = self._track
            x, y, z, yaw, pitch, roll = (float(v) for v in physics.anim_poses[k])
            return (x, y, z, yaw, pitch, roll)
        return self.state_pose if self.state_pose is not None else self.sim.pose

    @property
    def start_pose(self) -> tuple[float, float, float, float, float, float]:
        """Where it starts: its ``<init_pose>``, else its first waypoint, else the origin (world frame, m / rad)."""
        if self.has_init_pose or not self.path:
            return self.sim.pose
        return self.path[0].pose

    @property
    def radius(self) -> float:
        """Collision radius (m)."""
        return float(self.params["collision_radius"])

    @property
    def footprint(self) -> np.ndarray:
        """(FOOTPRINT_SIDES, 2) polygon around its collision circle, actor frame (m, counter-clockwise); with
        :attr:`zmin` 0 and :attr:`zmax` its collision height, what sensors see of it."""
        a = np.arange(FOOTPRINT_SIDES) * (2.0 * math.pi / FOOTPRINT_SIDES)
        r = self.radius / math.cos(math.pi / FOOTPRINT_SIDES)  # the circle inscribed
        return np.column_stack([r * np.cos(a), r * np.sin(a)])

    @property
    def zmin(self) -> float:
        return 0.0

    @property
    def zmax(self) -> float:
        return float(self.params["collision_height"])

    @property
    def body_size(self) -> tuple[float, float]:
        """(width, height) of the person-shaped figure that stands for the actor (m): 2 × ``collision_radius`` and
        ``collision_height`` when either is written in its XML, else the stand-in's :data:`STAND_IN_WIDTH` ×
        :data:`STAND_IN_HEIGHT`."""
        where = self.params.where
        if "collision_radius" in where or "collision_height" in where:
            return 2.0 * self.radius, self.zmax
        return STAND_IN_WIDTH, STAND_IN_HEIGHT

    def extent(self, pose: tuple[float, ...] | None = None) -> Extent:
        """The box (world frame, m) of its figure (:meth:`figure`, what the sensors see) at ``pose`` (default: where
        it is now).

        Raises:
            ArgumentTypeError, ArgumentValueError: a ``pose`` that is not 6 finite numbers (x, y, z, yaw, pitch, roll).
        """
        if pose is not None:
            pose = arg.finite_reals("extent", "pose", pose, 6, f"actor '{self.name}'")
        corners = np.concatenate([prism_corners(poly, z0, z1) for poly, z0, z1 in self.figure()])
        return Extent.of_points(posed(corners, self.pose if pose is None else pose))

    def figure(self) -> list[tuple[np.ndarray, float, float]]:
        """The person-shaped figure (see :attr:`body_size`): a body cylinder of the full width from the ground to
        the neck and a narrower head on top, as prisms ``(polygon (P, 2) counter-clockwise, z0, z1)`` in the actor
        frame (m, x forward, z up from its pose). What cameras and the viewer draw when its visual model is missing
        or cannot be loaded (an FBX, say), and what 3D lidars always see (they see solids, not meshes)."""
        width, height = self.body_size
        head_h, head_w = STAND_IN_HEAD[0] * height, STAND_IN_HEAD[1] * width
        a = np.arange(STAND_IN_SIDES) * (2.0 * math.pi / STAND_IN_SIDES)
        ring = np.column_stack([np.cos(a), np.sin(a)])
        neck = height - head_h
        return [(0.5 * width * ring, 0.0, neck), (0.5 * head_w * ring, neck, height)]

    def walk(self) -> tuple[list[Keyframe], float]:
        """The walk as a keyframe track of world poses, and where its periodic part starts (s): the time it first
        reaches its first waypoint when it loops, its last keyframe time when it stops at the end (see the module
        docstring)."""
        x, y, z, yaw, _, _ = self.start_pose
        frames = [Keyframe(0.0, (x, y, z, yaw, 0.0, 0.0))]
        if not self.path:
            return frames, 0.0
        t = 0.0
        here = (x, y, z, yaw)
        loop_from = None

        def leg(to: Waypoint) -> None:
            nonlocal t, here
            hx, hy, hz, hyaw = here
            tx, ty, tz = to.pose[0], to.pose[1], to.pose[2]
            d = math.dist((hx, hy, hz), (tx, ty, tz))
            speed = float(self.params["running_speed" if to.animation == "run" else "walking_speed"])
            if d > 1e-9:
                heading = math.atan2(ty - hy, tx - hx) if math.hypot(tx - hx, ty - hy) > 1e-9 else hyaw
                dur = d / speed
                turn = min(TURN_TIME, 0.5 * dur)
                f = turn / dur
                frames.append(Keyframe(t + turn, (hx + f * (tx - hx), hy + f * (ty - hy), hz + f * (tz - hz),
                                                  heading, 0.0, 0.0)))
                t += dur
                frames.append(Keyframe(t, (tx, ty, tz, heading, 0.0, 0.0)))
                here = (tx, ty, tz, heading)
            if to.pause > 0.0:
                t += to.pause
                frames.append(Keyframe(t, (*here[:3], here[3], 0.0, 0.0)))

        for i, wp in enumerate(self.path):
            leg(wp)
            if i == 0:
                loop_from = t
        if self.loop and len(self.path) > 1:
            leg(self.path[0])
            return frames, float(loop_from if loop_from is not None else 0.0)
        return frames, t


def build_actor(nodes: Sequence[XmlNode], ctx: ParseContext, *, name: str, class_name: str = "") -> Actor:
    for n in nodes:
        for c in n.children:
            if c.tag not in KNOWN_TAGS:
                ctx.warn(c, f"unknown tag <{c.tag}> in <{n.tag}> is ignored")
    params = read_params(ACTOR_PARAMS, nodes, ctx)
    sim = parse_simulable(nodes, ctx, what="actor", name=name, pose_required=False)
    path: list[Waypoint] = []
    loop = True
    for n in nodes:
        pnode = n.child("path")
        if pnode is None:
            continue
        loop = (ctx.attr(pnode, "loop", "true") or "true").lower() in ("true", "1")
        for w in pnode.children_named("waypoint"):
            v = parse_value(_WP, w.text, w, ctx)
            if len(v) == 3:
                pose = (v[0], v[1], 0.0, math.radians(v[2]), 0.0, 0.0)
            elif len(v) == 6:
                pose = (v[0], v[1], v[2], math.radians(v[3]), math.radians(v[4]), math.radians(v[5]))
            else:
                raise ctx.error(w, f"<waypoint> needs 'x y yaw' or 'x y z yaw pitch roll', got {len(v)} numbers")
            pause = parse_value(_PAUSE, w.attrs["pause"], w, ctx, attr="pause") if "pause" in w.attrs else 0.0
            path.append(Waypoint(pose, pause, ctx.attr(w, "animation", "walk") or "walk"))
        break
    visuals = [v for n in nodes for v in parse_visuals(n, ctx)]
    has_init = any(n.child("init_pose") is not None or n.child("init_pose3d") is not None for n in nodes)
    return Actor(name, class_name, params, sim, path, loop, visuals, nodes[0], has_init_pose=has_init)
