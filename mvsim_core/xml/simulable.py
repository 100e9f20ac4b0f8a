"""Tags shared by every simulated object (vehicles, blocks, actors): initial pose and velocity, ``<publish>``,
keyframe ``<animation>`` (reference §1.13).

Frames: ``init_pose`` is in the world frame (x, y in m, yaw in rad after parsing); ``init_vel`` is in the object's
own (body) frame: vx, vy in m/s and ω in rad/s (written in deg/s).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from mvsim_core.errors import quoted
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Kind, Param, parse_value, read_params

POSE2D = Param("init_pose", Kind.POSE2D, None)
POSE3D = Param("init_pose3d", Kind.POSE3D, None)
INIT_VEL = Param("init_vel", Kind.VEC3, (0.0, 0.0, 0.0))
PUBLISH_PARAMS: tuple[Param, ...] = (
    Param("publish_topic", Kind.STRING, ""),
    Param("publish_pose_period", Kind.FLOAT, 0.1, "s", positive=True),
    Param("publish_relative_pose_topic", Kind.STRING, ""),
    Param("publish_relative_pose_objects", Kind.STRING, ""),
)
MAX_INIT_SPEED = 100.0
"""Fastest ``<init_vel>`` (m/s), well below the physics' runaway limit (1000 m/s)."""
MAX_INIT_TURN_RATE = 100.0
"""Fastest initial turn rate of ``<init_vel>`` (rad/s; about 5730 deg/s)."""
SIMULABLE_TAGS = frozenset({"init_pose", "init_pose3d", "init_vel", "publish", "animation", "skip_elevation_adjust"})


@dataclass
class Keyframe:
    """One ``<time_pose>`` / ``<time_pose3d>``: time (s) and pose (x, y, z, yaw, pitch, roll; m, rad)."""

    t: float
    pose: tuple[float, float, float, float, float, float]


@dataclass
class SimulableSpec:
    """What every simulated object declares.

    Attributes:
        pose: initial (x, y, z, yaw, pitch, roll), world frame, m / rad.
        pose_is_3d: the pose came from ``init_pose3d``.
        skip_elevation_adjust: keep z as written instead of placing the object on the terrain.
        init_vel: initial (vx, vy, ω) in the body frame, m/s and rad/s.
        publish_topic: ZMQ topic for the pose, or "" when not published.
        publish_period: s between pose publications.
        publish_relative_pose_topic / publish_relative_pose_objects: relative-pose publishing.
        keyframes: keyframe animation, empty when none.
        placed: the pose the initial elevation adjust gave (:mod:`mvsim_core.dynamics.placement`), None before it;
            not read from the file.
    """

    pose: tuple[float, float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    pose_is_3d: bool = False
    skip_elevation_adjust: bool = False
    init_vel: tuple[float, float, float] = (0.0, 0.0, 0.0)
    publish_topic: str = ""
    publish_period: float = 0.1
    publish_relative_pose_topic: str = ""
    publish_relative_pose_objects: tuple[str, ...] = ()
    keyframes: list[Keyframe] = field(default_factory=list)
    placed: tuple[float, float, float, float, float, float] | None = None


def _first(nodes: Sequence[XmlNode], tag: str) -> XmlNode | None:
    for n in nodes:
        c = n.child(tag)
        if c is not None:
            return c
    return None


def parse_simulable(nodes: Sequence[XmlNode], ctx: ParseContext, *, what: str, name: str,
                    pose_required: bool = True, extra: dict[str, str] | None = None) -> SimulableSpec:
    """Read the common tags from ``nodes`` (instance first, then class).

    Args:
        nodes: where to look.
        ctx: parse context.
        what: "vehicle", "block", ... for messages.
        name: the object's name, for messages and ``${NAME}`` in publish topics.
        pose_required: whether a missing ``init_pose``/``init_pose3d`` is an error.
        extra: extra variables for substitution.
    """
    spec = SimulableSpec()
    p3 = _first(nodes, "init_pose3d")
    p2 = _first(nodes, "init_pose")
    if p3 is not None:
        x, y, z, yaw, pitch, roll = parse_value(POSE3D, p3.text, p3, ctx, extra=extra)
        spec.pose = (x, y, z, yaw, pitch, roll)
        spec.pose_is_3d = True
    elif p2 is not None:
        x, y, yaw = parse_value(POSE2D, p2.text, p2, ctx, extra=extra)
        spec.pose = (x, y, 0.0, yaw, 0.0, 0.0)
    elif pose_required:
        raise ctx.error(nodes[0], f"{what} '{name}' has no <init_pose>; add <init_pose>x y yaw_deg</init_pose>")
    spec.skip_elevation_adjust = _first(nodes, "skip_elevation_adjust") is not None
    v = _first(nodes, "init_vel")
    if v is not None:
        vx, vy, w_deg = parse_value(INIT_VEL, v.text, v, ctx, extra=extra)
        if not (math.hypot(vx, vy) <= MAX_INIT_SPEED and abs(math.radians(w_deg)) <= MAX_INIT_TURN_RATE):
            raise ctx.error(v, f"<init_vel> {vx:g} {vy:g} {w_deg:g} is beyond {MAX_INIT_SPEED:g} m/s or "
                               f"{math.degrees(MAX_INIT_TURN_RATE):.0f} deg/s; the simulation stops a body that fast "
                               f"as a blow-up")
        spec.init_vel = (vx, vy, math.radians(w_deg))
    pub = _first(nodes, "publish")
    if pub is not None:
        vars_ = {"NAME": name, **(extra or {})}
        enabled = ctx.attr(pub, "enabled", "true", extra=vars_) or ""
        if enabled.lower() not in ("true", "false", "1", "0"):
            raise ctx.error(pub, f"bad bool {quoted(enabled)} for enabled=\"...\" of <publish>; expected true, false, "
                                 f"1 or 0", attr="enabled")
        if enabled.lower() in ("true", "1"):
            pv = read_params(PUBLISH_PARAMS, [pub], ctx, extra=vars_)
            spec.publish_topic = pv.publish_topic
            spec.publish_period = pv.publish_pose_period
            spec.publish_relative_pose_topic = pv.publish_relative_pose_topic
            spec.publish_relative_pose_objects = tuple(pv.publish_relative_pose_objects.split())
    anim = _first(nodes, "animation")
    if anim is not None:
        spec.keyframes = _parse_animation(anim, ctx, extra)
    return spec


_TP = Param("time_pose", Kind.FLOATS, ())


def _parse_animation(anim: XmlNode, ctx: ParseContext, extra: dict[str, str] | None) -> list[Keyframe]:
    kind = ctx.attr(anim, "type", "keyframes")
    if kind != "keyframes":
        raise ctx.error(anim, f"unknown <animation type=\"{kind}\">; the only type is keyframes", attr="type")
    frames: list[Keyframe] = []
    for c in anim.children:
        if c.tag not in ("time_pose", "time_pose3d"):
            ctx.warn(c, f"unknown tag <{c.tag}> in <animation> is ignored")
            continue
        vals = parse_value(_TP, c.text, c, ctx, extra=extra)
        need = 4 if c.tag == "time_pose" else 7
        if len(vals) != need:
            raise ctx.error(c, f"<{c.tag}> needs {need} numbers (t x y {'yaw' if need == 4 else 'z yaw pitch roll'}"
                               f"), got {len(vals)}")
        if need == 4:
            t, x, y, yaw = vals
            pose = (x, y, 0.0, math.radians(yaw), 0.0, 0.0)
        else:
            t, x, y, z, yaw, pitch, roll = vals
            pose = (x, y, z, math.radians(yaw), math.radians(pitch), math.radians(roll))
        if frames and t <= frames[-1].t:
            raise ctx.error(c, f"keyframe times must increase (t={t:g} after t={frames[-1].t:g})")
        frames.append(Keyframe(t, pose))
    return frames
