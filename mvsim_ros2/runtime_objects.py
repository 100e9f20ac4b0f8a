"""Objects at run time from ROS: the node's ``runtime_objects`` and ``runtime_overlays`` subscriptions
(``visualization_msgs/msg/MarkerArray``, upstream MVSim v1.4, reference §9), and the ``objects_ground_truth`` topic.

Each marker is one block of the world, named ``<topic>/<ns>/<id>`` (``<topic>/<id>`` when ``ns`` is empty), e.g.
``runtime_objects/cubes/3``: the name is what ``get_pose`` (ZMQ), ``get_entity_state`` (simulation_interfaces) and
``objects_ground_truth`` call it.

* ``runtime_objects``: solid blocks (static: they block vehicles, lidars and cameras see them).
* ``runtime_overlays``: visual-only blocks (``<visual_only>``, see :mod:`mvsim_core.objects.block`): drawn in the
  viewer and nowhere else, as upstream's GUI-only overlays: no collision, not ground, seen by no sensor (2D and 3D
  lidars, RGB and depth cameras).

Actions (``action``): ADD / MODIFY (0) creates the block, or replaces the one of the same ``ns`` and ``id`` made
through the same topic; DELETE (2) removes it (nothing happens when there is none); DELETEALL (3) removes every
block made through that topic. Other actions are skipped with a warning.

Types (``type``), sizes ``scale`` in m (full sizes, as RViz draws them), pose ``pose`` in ``header.frame_id``:

* CUBE (1): a ``scale.x`` × ``scale.y`` box, from ``z - scale.z/2`` to ``z + scale.z/2`` above the ground;
* CYLINDER (3): an upright elliptic cylinder of diameters ``scale.x``, ``scale.y`` and height ``scale.z``
  (centred on the pose, as RViz draws it), its footprint a 32-gon;
* SPHERE (2): a block with the sphere's footprint (an ellipse, 32-gon) over its height (the lidars see a cylinder);
* TRIANGLE_LIST (11): a block whose footprint is the 2D convex hull of ``points`` (in the marker frame, multiplied
  by ``scale``, then placed by ``pose``) and whose z range is that of the points.

``scale.z`` = 0 makes a flat decal 2 mm thick (:data:`FLAT_THICKNESS`, as upstream suggests for ground marks). The
pose's yaw is used (blocks are upright prisms: pitch and roll are ignored); an all-zero quaternion counts as the
identity, as RViz does. The colour is ``color`` (per-point ``colors`` are ignored), ``lifetime`` is ignored (blocks
stay until deleted, as upstream), and so is ``frame_locked``.

Refused, with a warning naming the marker and the reason (once per marker and reason): ``header.frame_id`` other
than the world frame (``world_frame_id``, default ``map``; empty means it too); any NaN or infinite number in the
pose, scale, colour or points; a size <= 0 (``scale.z`` < 0); a TRIANGLE_LIST with fewer than 3 points or a hull of
no area; a name used by an object the topic did not create. A type other than the four is skipped with a warning
once per type (LINE_STRIP, LINE_LIST, ARROW, TEXT..., which upstream draws as GUI-only decorations).

One MarkerArray is applied at once, between two steps, with one rebuild of the physics
(:meth:`World.batch <mvsim_core.world.World.batch>`); objects added appear in the next sensor samples.

``objects_ground_truth`` (``tf2_msgs/msg/TFMessage``, upstream v1.4): with the parameter
``objects_ground_truth_rate`` > 0 (Hz of simulated time; default 0: not published), one transform per vehicle, block
(walls and run-time objects included) and actor — walking actors where they are now — from ``world_frame_id`` to the
object's name, stamped with simulated time. Its own topic, not ``/tf``, so as not to mix with the vehicles' tf trees.

Frames and units: world frame, metres, radians.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

import numpy as np
from geometry_msgs.msg import TransformStamped
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from mvsim_core.errors import MvsimError, one_line
from mvsim_ros2 import conversions as cv
from mvsim_ros2 import naming

if TYPE_CHECKING:
    from mvsim_core.objects.actor import Actor
    from mvsim_core.objects.block import Block
    from mvsim_core.objects.vehicles.base import Vehicle
    from mvsim_core.world import World

TOPICS: dict[str, bool] = {"runtime_objects": False, "runtime_overlays": True}
"""Subscription topic (relative: under the node's namespace) → whether its blocks are overlays (visual-only)."""
SUPPORTED = {Marker.CUBE: "CUBE", Marker.SPHERE: "SPHERE", Marker.CYLINDER: "CYLINDER",
             Marker.TRIANGLE_LIST: "TRIANGLE_LIST"}
TYPE_NAMES = {Marker.ARROW: "ARROW", Marker.LINE_STRIP: "LINE_STRIP", Marker.LINE_LIST: "LINE_LIST",
              Marker.CUBE_LIST: "CUBE_LIST", Marker.SPHERE_LIST: "SPHERE_LIST", Marker.POINTS: "POINTS",
              Marker.TEXT_VIEW_FACING: "TEXT_VIEW_FACING", Marker.MESH_RESOURCE: "MESH_RESOURCE", **SUPPORTED}
ROUND_VERTICES = 32
"""Vertices of the footprint of a cylinder or sphere (its flats within 0.5 % of the radius)."""
FLAT_THICKNESS = 0.002  # m: the height of a block made from a marker with scale.z = 0


class MarkerRefused(ValueError):
    """A marker that makes no block; the message says why."""


def object_name(topic: str, ns: str, marker_id: int) -> str:
    """The block name of marker (``ns``, ``marker_id``) received on ``topic`` (see the module docstring)."""
    return f"{topic}/{ns}/{marker_id}" if ns else f"{topic}/{marker_id}"


def _check_finite(fields: Iterable[tuple[str, float]]) -> None:
    for label, v in fields:
        if not math.isfinite(v):
            raise MarkerRefused(f"{label} is {v}; every number of a marker must be finite")


def _yaw(q: Any) -> float:
    """Yaw (rad) of a quaternion, normalised first; all zeros = the identity (as RViz)."""
    n = math.sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w)
    if n < 1e-12:
        return 0.0
    x, y, z, w = q.x / n, q.y / n, q.z / n, q.w / n
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def _rotation(q: Any) -> np.ndarray:
    """3×3 rotation of a quaternion, normalised first; all zeros = the identity."""
    n = math.sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w)
    if n < 1e-12:
        return np.eye(3)
    x, y, z, w = q.x / n, q.y / n, q.z / n, q.w / n
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def convex_hull(points: np.ndarray) -> np.ndarray:
    """The convex hull of 2D ``points`` (N×2), counter-clockwise, without collinear vertices (monotone chain)."""
    pts = sorted(set(map(tuple, np.round(points, 9).tolist())))
    if len(pts) < 3:
        return np.array(pts, dtype=float).reshape(-1, 2)

    def cross(o: Sequence[float], a: Sequence[float], b: Sequence[float]) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list[tuple[float, ...]] = []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    upper: list[tuple[float, ...]] = []
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return np.array(lower[:-1] + upper[:-1], dtype=float)


def _ellipse(rx: float, ry: float) -> np.ndarray:
    a = np.arange(ROUND_VERTICES) * (2 * math.pi / ROUND_VERTICES)
    return np.column_stack([rx * np.cos(a), ry * np.sin(a)])


def _z_range(zc: float, height: float) -> tuple[float, float]:
    h = height if height > 0 else FLAT_THICKNESS
    return zc - h / 2, zc + h / 2


def block_from_marker(m: Any, *, overlay: bool) -> tuple[str, tuple[float, float, float]]:
    """The ``<block>`` XML text and the pose (x, y, yaw; m, m, rad, world frame) of an ADD marker (frame already
    checked).

    Raises:
        MarkerRefused: a type that is not supported, a non-finite number, a size out of range, a degenerate
            TRIANGLE_LIST (the message says which).
    """
    kind = SUPPORTED.get(m.type)
    if kind is None:
        raise MarkerRefused(f"type {TYPE_NAMES.get(m.type, '?')} ({m.type}) is not supported")
    p, q, s, c = m.pose.position, m.pose.orientation, m.scale, m.color
    _check_finite([("pose.position.x", p.x), ("pose.position.y", p.y), ("pose.position.z", p.z),
                   ("pose.orientation.x", q.x), ("pose.orientation.y", q.y), ("pose.orientation.z", q.z),
                   ("pose.orientation.w", q.w), ("scale.x", s.x), ("scale.y", s.y), ("scale.z", s.z),
                   ("color.r", c.r), ("color.g", c.g), ("color.b", c.b), ("color.a", c.a)])
    if kind == "TRIANGLE_LIST":
        footprint, zmin, zmax, pose = _hull_block(m)
    else:
        for label, v in (("scale.x", s.x), ("scale.y", s.y)):
            if v <= 0:
                raise MarkerRefused(f"{label} is {v:g}; a {kind} needs sizes > 0 m")
        if s.z < 0:
            raise MarkerRefused(f"scale.z is {s.z:g}; a {kind} needs a height >= 0 m (0: a flat decal)")
        footprint = (np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * [s.x / 2, s.y / 2] if kind == "CUBE"
                     else _ellipse(s.x / 2, s.y / 2))
        zmin, zmax = _z_range(p.z, s.z)
        pose = (float(p.x), float(p.y), _yaw(q))
    rgba = "".join(f"{round(min(1.0, max(0.0, v)) * 255):02x}" for v in (c.r, c.g, c.b, c.a))
    pts = "".join(f"<pt>{x:.9g} {y:.9g}</pt>" for x, y in footprint)
    what = "<visual_only>true</visual_only>" if overlay else "<static>true</static>"
    xml = (f"<block>{what}<color>#{rgba}</color><zmin>{zmin:.9g}</zmin><zmax>{zmax:.9g}</zmax>"
           f"<shape>{pts}</shape></block>")
    return xml, pose


def _hull_block(m: Any) -> tuple[np.ndarray, float, float, tuple[float, float, float]]:
    """Footprint (relative to the marker's position, yaw 0), z range and pose of a TRIANGLE_LIST marker."""
    s = m.scale
    if len(m.points) < 3:
        raise MarkerRefused(f"a TRIANGLE_LIST needs at least 3 points, got {len(m.points)}")
    for label, v in (("scale.x", s.x), ("scale.y", s.y), ("scale.z", s.z)):
        if v <= 0:
            raise MarkerRefused(f"{label} is {v:g}; a TRIANGLE_LIST's points are multiplied by scale, which must "
                                f"be > 0 (1 1 1 keeps them as they are)")
    local = np.array([(pt.x, pt.y, pt.z) for pt in m.points], dtype=float)
    bad = np.argwhere(~np.isfinite(local))
    if len(bad):
        k, axis = bad[0]
        raise MarkerRefused(f"points[{k}].{'xyz'[axis]} is {local[k, axis]}; every number of a marker must be finite")
    p = m.pose.position
    world = local * [s.x, s.y, s.z] @ _rotation(m.pose.orientation).T
    hull = convex_hull(world[:, :2])
    if len(hull) < 3 or abs(_area(hull)) < 1e-8:
        raise MarkerRefused("the TRIANGLE_LIST's points have no area seen from above (their 2D convex hull is a "
                            "point or a segment)")
    z0, z1 = float(world[:, 2].min()) + p.z, float(world[:, 2].max()) + p.z
    zmin, zmax = (z0, z1) if z1 - z0 >= FLAT_THICKNESS else _z_range((z0 + z1) / 2, 0.0)
    return hull, zmin, zmax, (float(p.x), float(p.y), 0.0)


def _area(poly: np.ndarray) -> float:
    x, y = poly[:, 0], poly[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y))


class RuntimeObjects:
    """One subscription (``runtime_objects`` or ``runtime_overlays``) and the blocks made through it.

    Args:
        node: the :class:`mvsim_ros2.node.MvsimNode` (its ``world``, ``opts.world_frame_id`` and logger are used).
        topic: the topic, relative to the node's namespace (a key of :data:`TOPICS`).
        overlay: visual-only blocks (True) or solid static ones.
    """

    def __init__(self, node: Any, topic: str, overlay: bool) -> None:
        self.node = node
        self.topic = topic
        self.overlay = overlay
        self.objects: dict[str, Any] = {}
        """Name → block made through this topic (and perhaps since removed by a reset or by others)."""
        self._said: set[tuple[str, str]] = set()
        self.subscription = node.create_subscription(MarkerArray, topic, self.on_markers,
                                                     naming.qos_runtime_objects())

    def _warn_once(self, key: tuple[str, str], text: str) -> None:
        if key not in self._said:
            self._said.add(key)
            self.node.get_logger().warning(text)

    def on_markers(self, msg: MarkerArray) -> None:
        """Apply one MarkerArray, in order, between two steps, with one rebuild of the physics. Never raises."""
        world = self.node.world
        added = removed = 0
        with world.step_guard or nullcontext(), world.batch():
            for m in msg.markers:
                try:
                    if m.action == Marker.ADD:
                        added += self._add(m)
                    elif m.action == Marker.DELETE:
                        removed += self._remove([object_name(self.topic, m.ns, m.id)])
                    elif m.action == Marker.DELETEALL:
                        removed += self._remove(list(self.objects))
                    else:
                        self._warn_once(("action", str(m.action)),
                                        f"{self.topic}: marker action {m.action} is not one of ADD/MODIFY (0), "
                                        f"DELETE (2), DELETEALL (3); skipped")
                except Exception as e:  # noqa: BLE001 - a bad marker must never take the node down
                    self._warn_once(("error", one_line(str(e))), f"{self.topic}: marker (ns '{m.ns}', id {m.id}) "
                                    f"failed: {type(e).__name__}: {one_line(str(e))}; skipped")
        if added or removed:
            self.node.get_logger().info(f"{self.topic}: {added} added, {removed} removed")

    def _add(self, m: Any) -> int:
        name = object_name(self.topic, m.ns, m.id)
        world = self.node.world
        if m.type not in SUPPORTED:
            self._warn_once(("type", str(m.type)), f"{self.topic}: markers of type {TYPE_NAMES.get(m.type, '?')} "
                            f"({m.type}) are not supported (CUBE, SPHERE, CYLINDER and TRIANGLE_LIST are); "
                            f"skipped (said once)")
            return 0
        frame = m.header.frame_id.lstrip("/")
        world_frame = self.node.opts.world_frame_id
        try:
            if frame not in ("", world_frame):
                raise MarkerRefused(f"header.frame_id '{one_line(frame)}' is not the world frame '{world_frame}'")
            xml, pose = block_from_marker(m, overlay=self.overlay)
        except MarkerRefused as e:
            self._warn_once((name, str(e)), f"{self.topic}: marker '{name}': {e}; skipped")
            return 0
        present = world.vehicles.get(name) or world.blocks.get(name) or world.actors.get(name)
        if present is not None:
            if self.objects.get(name) is not present:
                self._warn_once((name, "taken"), f"{self.topic}: marker '{name}': an object of that name exists "
                                f"that this topic did not create; skipped")
                return 0
            world.remove(name)
        try:
            self.objects[name] = world.spawn(xml, name=name, pose=pose)
        except MvsimError as e:
            self.objects.pop(name, None)
            self._warn_once((name, str(e)), f"{self.topic}: marker '{name}': {one_line(str(e))}; skipped")
            return 0
        return 1

    def _remove(self, names: list[str]) -> int:
        world = self.node.world
        n = 0
        for name in names:
            obj = self.objects.pop(name, None)
            if obj is not None and world.blocks.get(name) is obj:
                world.remove(name)
                n += 1
        return n


def start(node: Any) -> list[RuntimeObjects]:
    """Both subscriptions on ``node``."""
    return [RuntimeObjects(node, topic, overlay) for topic, overlay in TOPICS.items()]


def ground_truth_msg(world: World, frame: str, t: float, msg: TFMessage | None = None) -> TFMessage:
    """``objects_ground_truth``: one transform from ``frame`` to each vehicle, block and actor (its name), stamped
    ``t`` (s); ``msg`` is refilled when its objects are the same, else a new message is made."""
    objs: list[Vehicle | Block | Actor] = [*world.vehicles.values(), *world.blocks.values(), *world.actors.values()]
    if msg is None or len(msg.transforms) != len(objs) or any(
            tf.child_frame_id != o.name for tf, o in zip(msg.transforms, objs, strict=True)):
        msg = TFMessage(transforms=[TransformStamped() for _ in objs])
        for tf, o in zip(msg.transforms, objs, strict=True):
            tf.header.frame_id = frame
            tf.child_frame_id = o.name
    for tf, o in zip(msg.transforms, objs, strict=True):
        cv.set_transform(tf, o.pose, t)
    return msg
