"""Human actors (``<actor:class>`` / ``<actor>``): kinematic walkers following waypoints (reference §1.15)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from mvsim_core.objects.simulable import SIMULABLE_TAGS, SimulableSpec, parse_simulable
from mvsim_core.objects.visual import Visual, parse_visuals
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Kind, Param, ParamValues, parse_value, read_params, table_names

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

    @property
    def pose(self) -> tuple[float, float, float, float, float, float]:
        """Current pose (x, y, z, yaw, pitch, roll), world frame, m / rad: where it was put last
        (:meth:`World.set_pose <mvsim_core.world.World.set_pose>`), else its initial pose."""
        return self.state_pose if self.state_pose is not None else self.sim.pose


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
    return Actor(name, class_name, params, sim, path, loop, visuals, nodes[0])
