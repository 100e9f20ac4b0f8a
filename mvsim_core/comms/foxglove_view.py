"""A live view of a running simulation in Foxglove or Lichtblick, without ROS: a Foxglove WebSocket server
(``foxglove-sdk``) that publishes the world as it steps, and takes twist commands from the client.

``mvsim launch WORLD --foxglove [PORT]`` starts it (port 8765 by default, loopback only unless ``--foxglove-host``
says otherwise); in Foxglove, "Open connection" → Foxglove WebSocket → ``ws://localhost:8765``.

Channels (Foxglove's own schemas, protobuf-encoded; topic names are the ROS node's with a leading ``/``,
:mod:`mvsim_core.io.ros_names`), one per sensor output of a kind the view shows (:data:`CHANNELS`; an IMU sample
has no channel here), each output's latest observation:

* a scan, ``/<sensor>`` (``foxglove.LaserScan``): in the sensor's frame; ranges as the simulator measured them
  (``max_range`` where nothing was hit), angles from ``angle_min`` to ``angle_max``;
* a point cloud, ``/<sensor>_points`` (``foxglove.PointCloud``): x, y, z, intensity as float32;
* an image, ``/<camera>/image_raw``, and an RGB-D pair's colour image, ``/<rgbd>_rgb/image_raw``
  (``foxglove.RawImage``, rgb8);
* a fix, ``/<gnss>`` (``foxglove.LocationFix``);
* ``/tf`` (``foxglove.FrameTransforms``): every vehicle's ground-truth pose (its odometry output in the world frame,
  :func:`~mvsim_core.outputs.vehicle_roles`), ``map`` → ``<V>/base_link`` (frames
  prefixed with the vehicle's name when there are several vehicles, as a shared ROS tf tree names them), and
  ``<V>/base_link`` → each sensor's frame, at :data:`TF_RATE` Hz of simulated time;
* ``/scene`` (``foxglove.SceneUpdate``): the blocks (walls included) as prisms of their footprints in ``map``, and the
  vehicles' chassis prisms locked to their ``base_link``; at :data:`SCENE_RATE` Hz (the static part once per
  client, when it subscribes).

Teleop: a client that advertises a channel ``/cmd_vel`` (a lone vehicle) or ``/<V>/cmd_vel`` with JSON encoding and
sends ``{"linear": {"x": …, "y": …}, "angular": {"z": …}}`` (``geometry_msgs/msg/Twist`` as JSON, what Foxglove's
Teleop panel sends) commands that vehicle's twist (m/s, rad/s; clamped by the vehicle's command limits). Malformed,
non-finite or unknown-vehicle messages are dropped and said once in the log; the server goes on.

The server runs on its own threads; everything it sends is built in the step listener (simulation thread), and
commands are queued to be applied there, before the next step. A sensor is wanted (reader :data:`READER`) while its
channel has a subscriber: where the world samples on demand it costs nothing otherwise
(:mod:`mvsim_core.sensors.demand`).
"""

from __future__ import annotations

import errno
import json
import logging
import math
import queue
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from mvsim_core.comms.errors import AddressInUse
from mvsim_core.geometry.rotations import quaternion_from_ypr
from mvsim_core.io.ros_names import BASE_FRAME, DEFAULT_WORLD_FRAME, output_topics, rgbd_frames, vehicle_prefix
from mvsim_core.outputs import Output, OutputKind, outputs_of, vehicle_roles

if TYPE_CHECKING:
    from mvsim_core.world import World

log = logging.getLogger(__name__)

DEFAULT_PORT = 8765
"""Foxglove's usual WebSocket port."""
TF_RATE = 30.0
"""Transforms per simulated second."""
SCENE_RATE = 10.0
"""Scene updates (moving vehicles and blocks) per simulated second."""
LOOPBACK = "127.0.0.1"

READER = "foxglove"
"""The reader a sensor with a subscribed channel is wanted as (``Sensor.want``)."""


def _stamp(t: float) -> Any:
    from foxglove.messages import Timestamp

    sec = math.floor(t)
    return Timestamp(int(sec), int(round((t - sec) * 1e9)) % 1_000_000_000)


def _pose(x: float, y: float, z: float, yaw: float, pitch: float = 0.0, roll: float = 0.0) -> Any:
    from foxglove.messages import Pose, Quaternion, Vector3

    qx, qy, qz, qw = quaternion_from_ypr(yaw, pitch, roll)
    return Pose(position=Vector3(x=x, y=y, z=z), orientation=Quaternion(x=qx, y=qy, z=qz, w=qw))


def _prism(footprint: np.ndarray, z0: float, z1: float, color: Any, pose: Any = None) -> Any:
    """A TriangleListPrimitive of the prism footprint × [z0, z1] (m), at ``pose`` in the entity's frame."""
    from foxglove.messages import Color, Point3, TriangleListPrimitive

    from mvsim_core.sensors.render.mesh_primitives import prism_triangles

    tris = prism_triangles(np.asarray(footprint, dtype=np.float64), float(z0), float(z1)).reshape(-1, 3)
    c = [float(v) / 255.0 for v in list(color)[:3]] + [1.0]
    return TriangleListPrimitive(pose=pose if pose is not None else _pose(0.0, 0.0, 0.0, 0.0),
                                 points=[Point3(x=float(p[0]), y=float(p[1]), z=float(p[2])) for p in tris],
                                 color=Color(r=c[0], g=c[1], b=c[2], a=c[3]))


def _scan(frame: str, obs: Any, stamp: Any) -> Any:
    """A ``foxglove.LaserScan`` of a scan, in the sensor's frame."""
    from foxglove.messages import LaserScan

    return LaserScan(timestamp=stamp, frame_id=frame, pose=_pose(0, 0, 0, 0), start_angle=float(obs.angle_min),
                     end_angle=float(obs.angle_max), ranges=np.asarray(obs.ranges, dtype=np.float64).tolist())


def _point_cloud(frame: str, obs: Any, stamp: Any) -> Any:
    """A ``foxglove.PointCloud`` of a point cloud: x, y, z, intensity (float32; 0 without intensities)."""
    from foxglove.messages import PackedElementField, PackedElementFieldNumericType, PointCloud

    pts = np.asarray(obs.points, dtype=np.float32).reshape(-1, 3)
    inten = np.asarray(getattr(obs, "intensity", np.zeros(len(pts))), dtype=np.float32).reshape(-1, 1)
    if len(inten) != len(pts):
        inten = np.zeros((len(pts), 1), dtype=np.float32)
    data = np.ascontiguousarray(np.hstack([pts, inten]), dtype=np.float32).tobytes()
    f32 = PackedElementFieldNumericType.Float32
    fields = [PackedElementField(name=n, offset=4 * i, type=f32) for i, n in enumerate("xyz")]
    fields.append(PackedElementField(name="intensity", offset=12, type=f32))
    return PointCloud(timestamp=stamp, frame_id=frame, pose=_pose(0, 0, 0, 0), point_stride=16, fields=fields,
                      data=data)


def _rgb(frame: str, obs: Any, stamp: Any) -> Any:
    """A ``foxglove.RawImage`` (rgb8) of an observation's colour image; None when it has none."""
    from foxglove.messages import RawImage

    img = getattr(obs, "rgb", None)
    if img is None:
        return None
    img = np.ascontiguousarray(img, dtype=np.uint8)
    return RawImage(timestamp=stamp, frame_id=frame, width=int(img.shape[1]), height=int(img.shape[0]),
                    encoding="rgb8", step=int(img.shape[1]) * 3, data=img.tobytes())


def _rgbd(frame: str, obs: Any, stamp: Any) -> Any:
    """The colour image of an RGB-D pair, in its RGB optical frame (``<sensor>_rgb``)."""
    return _rgb(rgbd_frames(frame)[0], obs, stamp)


def _fix(frame: str, obs: Any, stamp: Any) -> Any:
    """A ``foxglove.LocationFix`` of a fix (deg, deg, m)."""
    from foxglove.messages import LocationFix

    return LocationFix(timestamp=stamp, frame_id=frame, latitude=float(obs.latitude), longitude=float(obs.longitude),
                       altitude=float(obs.altitude))


class Channel(NamedTuple):
    """How one output kind is shown: ``channel`` = the name of its ``foxglove.channels`` class, ``topic`` = which of
    the kind's ROS topics (:data:`mvsim_core.io.ros_names.KIND_TOPICS`) it goes on, and ``message`` (frame with the
    vehicle's prefix, observation, Foxglove timestamp) → the message, or None for nothing to send."""

    channel: str
    topic: str
    message: Callable[[str, Any, Any], Any]


CHANNELS: dict[OutputKind, Channel] = {
    OutputKind.SCAN: Channel("LaserScanChannel", "main", _scan),
    OutputKind.POINT_CLOUD: Channel("PointCloudChannel", "points", _point_cloud),
    OutputKind.IMAGE: Channel("RawImageChannel", "image", _rgb),
    OutputKind.RGBD: Channel("RawImageChannel", "rgb_image", _rgbd),
    OutputKind.FIX: Channel("LocationFixChannel", "main", _fix),
}
"""Output kind → its Foxglove channel (a kind without a row, an IMU sample, is not shown)."""


class FoxgloveView:
    """The Foxglove WebSocket server of a world; a step listener (see the module docstring).

    Args:
        world: the running :class:`~mvsim_core.world.World` (it is started here if it was not).
        host: address to bind (loopback by default).
        port: TCP port (0: any free one; :attr:`port` says which).

    Raises:
        AddressInUse: the port is taken (the message names it).
        MvsimError: the address cannot be bound otherwise.
    """

    def __init__(self, world: World, *, host: str = LOOPBACK, port: int = DEFAULT_PORT) -> None:
        import foxglove
        from foxglove import Capability, Context, ServerListener
        from foxglove.channels import FrameTransformsChannel, SceneUpdateChannel

        from mvsim_core.errors import MvsimError

        self.world = world.start()
        self.context = Context()
        self._commands: queue.SimpleQueue[tuple[str, float, float, float]] = queue.SimpleQueue()
        self._client_channels: dict[tuple[int, int], str] = {}  # (client id, channel id) -> vehicle
        self._said: set[str] = set()
        self._scene_sent_static = False
        view = self

        class _Listener(ServerListener):
            def on_client_advertise(self, client: Any, channel: Any) -> None:
                view._advertised(client.id, channel.id, channel.topic, channel.encoding)

            def on_client_unadvertise(self, client: Any, client_channel_id: int) -> None:
                view._client_channels.pop((client.id, client_channel_id), None)

            def on_message_data(self, client: Any, client_channel_id: int, data: bytes) -> None:
                view._message(client.id, client_channel_id, data)

            def on_subscribe(self, client: Any, channel: Any) -> None:
                if channel.topic == "/scene":
                    view._scene_sent_static = False  # a new viewer gets the static entities too

        try:
            self.server = foxglove.start_server(name="mvsim", host=host, port=port,
                                                capabilities=[Capability.ClientPublish],
                                                server_listener=_Listener(), supported_encodings=["json"],
                                                context=self.context)
        except Exception as e:  # the SDK raises its own error types for a busy or bad address
            text = f"cannot start the Foxglove server on {host}:{port}: {e}"
            if f"os error {errno.EADDRINUSE})" in str(e) or "Address already in use" in str(e):
                raise AddressInUse(text, port) from None
            raise MvsimError(text) from None
        self.port = int(self.server.port)
        """The bound TCP port."""
        self.host = host
        n = len(world.vehicles)
        self._prefix = {v: vehicle_prefix(v, n, False) for v in world.vehicles}
        self._frame_prefix = {v: ("" if n == 1 else f"{v}/") for v in world.vehicles}
        self._sensor_channels: list[tuple[Any, Output, Any]] = []  # (sensor, output, channel)
        self._listened: set[int] = set()  # id of the sensors wanted for their channel
        self._last: dict[int, Any] = {}
        for vname, v in world.vehicles.items():
            for s in v.sensors.values():
                self._add_sensor(vname, s)
        self.tf_channel = FrameTransformsChannel("/tf", context=self.context)
        self.scene_channel = SceneUpdateChannel("/scene", context=self.context)
        self._next_tf = self._next_scene = -math.inf
        world.add_step_listener(self)

    # ------------------------------------------------------------------ channels
    def _add_sensor(self, vname: str, s: Any) -> None:
        """A channel for each output of ``s`` of a kind the view shows (:data:`CHANNELS`)."""
        import foxglove.channels

        for o in outputs_of(s):
            row = CHANNELS.get(o.kind)
            if row is None:
                continue
            topic = "/" + output_topics(o, self._prefix[vname])[row.topic]
            self._sensor_channels.append((s, o, getattr(foxglove.channels, row.channel)(topic, context=self.context)))

    # ------------------------------------------------------------------ teleop (server threads)
    def _say_once(self, text: str) -> None:
        if text not in self._said:
            self._said.add(text)
            log.warning("%s", text)

    def _advertised(self, client: int, channel: int, topic: str, encoding: str) -> None:
        name = topic.lstrip("/")
        for vname, prefix in self._prefix.items():
            if name == f"{prefix}cmd_vel":
                if encoding != "json":
                    self._say_once(f"Foxglove client channel {topic}: encoding '{encoding}' is not supported; "
                                   f"publish geometry_msgs/msg/Twist as json")
                    return
                self._client_channels[(client, channel)] = vname
                return

    def _message(self, client: int, channel: int, data: bytes) -> None:
        vname = self._client_channels.get((client, channel))
        if vname is None:
            return
        try:
            msg = json.loads(bytes(data).decode("utf-8"))
            lin, ang = msg.get("linear", {}), msg.get("angular", {})
            vx, vy, wz = (float(lin.get("x", 0.0)), float(lin.get("y", 0.0)), float(ang.get("z", 0.0)))
        except (ValueError, TypeError, AttributeError, UnicodeDecodeError):
            self._say_once(f"Foxglove: a cmd_vel message for '{vname}' is not a Twist as JSON; dropped")
            return
        if not all(math.isfinite(v) for v in (vx, vy, wz)):
            self._say_once(f"Foxglove: a cmd_vel message for '{vname}' has a value that is not finite; dropped")
            return
        self._commands.put((vname, vx, vy, wz))

    # ------------------------------------------------------------------ the step listener (simulation thread)
    def __call__(self, world: World) -> None:
        """Apply the queued commands, then publish what is new; a failure to publish is said once and the
        simulation goes on (a live view never stops the run)."""
        try:
            self._step(world)
        except Exception as e:  # noqa: BLE001 (any failure of the view: logged once, the simulation goes on)
            self._say_once(f"Foxglove view: {type(e).__name__}: {e} (the simulation goes on)")

    def _step(self, world: World) -> None:
        while True:
            try:
                vname, vx, vy, wz = self._commands.get_nowait()
            except queue.Empty:
                break
            v = world.vehicles.get(vname)
            if v is None:
                continue
            try:
                v.set_twist(vx, vy, wz)
            except Exception as e:  # a controller that takes no twists: said once, the rest goes on
                self._say_once(f"Foxglove: cannot command '{vname}': {e}")
        t = float(world.time)
        for s, o, channel in self._sensor_channels:
            listened = bool(channel.has_sinks())
            if listened != (id(s) in self._listened):  # sample it from its next due time on, or no more
                s.wanted(READER, listened)
                (self._listened.add if listened else self._listened.discard)(id(s))
            obs = s.last  # the latest observation (a GNSS: its latest fix)
            if obs is None or self._last.get(id(channel)) is obs:
                continue
            self._last[id(channel)] = obs
            self._publish(s, o, channel, obs)
        if t >= self._next_tf:
            self._next_tf = t + 1.0 / TF_RATE
            self._publish_tf(world, t)
        if t >= self._next_scene:
            self._next_scene = t + 1.0 / SCENE_RATE
            self._publish_scene(world, t)

    def _frame(self, s: Any) -> str:
        return self._frame_prefix.get(s.parent, "") + s.name

    def _publish(self, s: Any, o: Output, channel: Any, obs: Any) -> None:
        msg = CHANNELS[o.kind].message(self._frame_prefix.get(s.parent, "") + o.frame, obs, _stamp(float(obs.stamp)))
        if msg is not None:
            channel.log(msg, log_time=int(round(float(obs.stamp) * 1e9)))

    def _publish_tf(self, world: World, t: float) -> None:
        from foxglove.messages import FrameTransform, FrameTransforms, Quaternion, Vector3

        stamp = _stamp(t)
        out = []
        for vname, v in world.vehicles.items():
            truth = vehicle_roles(outputs_of(v)).truth  # the vehicle's odometry in the world frame
            if truth is None:
                continue
            x, y, z, yaw, pitch, roll = (float(a) for a in truth.observe(v).pose)
            base = self._frame_prefix[vname] + truth.frame
            qx, qy, qz, qw = quaternion_from_ypr(yaw, pitch, roll)
            out.append(FrameTransform(timestamp=stamp, parent_frame_id=DEFAULT_WORLD_FRAME, child_frame_id=base,
                                      translation=Vector3(x=x, y=y, z=z),
                                      rotation=Quaternion(x=qx, y=qy, z=qz, w=qw)))
            for s in v.sensors.values():
                sx, sy, sz, syaw, spitch, sroll = (float(a) for a in s.pose)
                qx, qy, qz, qw = quaternion_from_ypr(syaw, spitch, sroll)
                out.append(FrameTransform(timestamp=stamp, parent_frame_id=base, child_frame_id=self._frame(s),
                                          translation=Vector3(x=sx, y=sy, z=sz),
                                          rotation=Quaternion(x=qx, y=qy, z=qz, w=qw)))
        self.tf_channel.log(FrameTransforms(transforms=out), log_time=int(round(t * 1e9)))

    def _publish_scene(self, world: World, t: float) -> None:
        from foxglove.messages import SceneEntity, SceneUpdate

        stamp = _stamp(t)
        entities = []
        for b in world.blocks.values():
            if b.is_visual_only or (b.is_static and self._scene_sent_static):
                continue
            x, y, z, yaw, pitch, roll = (float(a) for a in b.pose)
            prism = _prism(b.footprint, b.zmin, b.zmax, b.params["color"], _pose(x, y, z, yaw, pitch, roll))
            entities.append(SceneEntity(timestamp=stamp, frame_id=DEFAULT_WORLD_FRAME, id=f"block/{b.name}",
                                        triangles=[prism]))
        if not self._scene_sent_static:
            for vname, v in world.vehicles.items():
                ch = v.chassis
                prism = _prism(ch.footprint, ch.zmin, ch.zmax, ch.color)
                entities.append(SceneEntity(timestamp=stamp, frame_id=self._frame_prefix[vname] + BASE_FRAME,
                                            id=f"vehicle/{vname}", frame_locked=True, triangles=[prism]))
        self._scene_sent_static = True
        if entities:
            self.scene_channel.log(SceneUpdate(entities=entities), log_time=int(round(t * 1e9)))

    # ------------------------------------------------------------------ end
    def close(self) -> None:
        """Stop listening to the world and stop the server (clients are disconnected)."""
        self.world.remove_step_listener(self)
        for s, _, _ in self._sensor_channels:
            s.unwant(READER)
        self._listened.clear()
        self.server.stop()
