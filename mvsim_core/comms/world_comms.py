"""A World on the comms network: the node ``World``, its services and its topics (upstream ``World_services.cpp``).

Services (input → output; answers and error texts as upstream):

* ``set_pose`` (SrvSetPose → SrvSetPoseAnswer): teleport a vehicle, block or actor. Absolute: x, y, yaw of ``pose``
  are applied (z, pitch and roll follow the terrain). With ``relativeIncrement`` the increment is composed (SE(3))
  with the current pose and ``objectGlobalPose`` returns the pose the object now has. ``objectIsInCollision`` is
  the object's latched collision flag, which is then reset. Every field of ``pose`` must be finite and within ±1e9
  (m or rad), and so must the composed pose: otherwise nothing moves and ``errorMessage`` names the field
  (``set_pose('r1'): pose.x is nan; it must be a finite number; refused, nothing changed``; upstream has no such
  check).
* ``get_pose`` (SrvGetPose → SrvGetPoseAnswer): pose (world frame, m / rad), twist in the body frame
  (vx, vy, 0, 0, 0, ωz) and the latched collision flag (reset afterwards).
* ``get_all_poses`` (SrvGetAllPoses → SrvGetAllPosesAnswer): one snapshot of every vehicle, block (walls too) and
  actor — vehicles, then blocks, then actors, each in file order, only names starting with ``prefix`` when it is
  given — each a ``NamedPose`` with its pose and body-frame twist as ``get_pose`` gives them, and ``simulTime`` the
  simulated time (s) of the snapshot. Collision flags are left alone.
* ``set_controller_twist`` (SrvSetControllerTwist → SrvSetControllerTwistAnswer): (vx, vy, ωz) of ``twistSetPoint``
  to the vehicle's controller, clamped to its command limits (``Vehicle.set_twist``); errors "objectId not found",
  "objectId is not of VehicleBase type", "objectId vehicle seems not to have any controller", "objectId vehicle
  controller did not accept the twist command", and for a NaN/inf value in any field (vz, wx and wy are otherwise
  ignored) the core's message (``vehicle 'r1': vx is nan; command ignored, the last good one stays``; upstream has
  no such check).
* ``shutdown`` (SrvShutdown → SrvShutdownAnswer{accepted=true}): sets :attr:`WorldComms.shutdown_requested`; the
  runner (``mvsim launch``) then stops.

Run-time objects (ours, messages in ``mvsim_core_msgs``; upstream's ``spawn_objects`` / ``remove_objects`` take
visual-only shapes and are not offered):

* ``spawn_xml_objects`` (SrvSpawnXmlObjects → SrvSpawnXmlObjectsAnswer): add vehicles, blocks or actors written as in
  world files, each with an optional name and pose (x, y, yaw), with one rebuild of the physics
  (:meth:`World.spawn_many <mvsim_core.world.World.spawn_many>`): all or none. ``objectIds`` answers their names.
  Errors (bad XML, a name taken, a NaN pose) answer success=false and ``errorMessage`` =
  ``object <k>: <the core's message>`` (k counting from 0; the XML's line in the message is the line in that
  object's text). ``$(cmd)`` substitutions are refused (no shell on behalf of a remote caller).
* ``remove_objects_by_name`` (SrvRemoveObjectsByName → SrvRemoveObjectsAnswer): take these objects out (any vehicle,
  block or actor), with one rebuild; all or none (``cannot remove 'x': no such object; nothing removed``).
* ``remove_spawned_objects`` (SrvRemoveSpawnedObjects → SrvRemoveObjectsAnswer): take out every object added while
  running (:meth:`World.spawned_names <mvsim_core.world.World.spawned_names>`, whoever added it); ``objectIds``
  answers their names.

Objects added at run time are served by ``get_pose`` / ``set_pose`` like the others, but their ``<publish>`` topics
and their sensors' topics are not advertised.

``get_pose`` answers for actors too: where the actor is now (walking along its path, or standing), zero twist.

An unknown ``objectId`` answers success=false with errorMessage "objectId not found" (upstream leaves the message
empty for ``get_pose``/``set_pose``).

Topics, published after the steps that produce data (each only while someone subscribes; a sensor is wanted, reader
:data:`READER`, while its topic has a subscriber, so in a world that samples on demand it costs nothing otherwise —
:mod:`mvsim_core.sensors.demand`):

* every sensor with ``<publish>``, one message per output (by its kind, :data:`SENSOR_TOPICS`): a scan
  (a 2D lidar) as ``mvsim_msgs.ObservationLidar2D`` on ``<publish_topic>_scan``; an IMU sample, a GNSS fix, a point
  cloud, an image, an RGB-D pair on ``<publish_topic>``, as ``mvsim_core_msgs.ObservationIMU`` / ``ObservationGNSS``
  / ``ObservationLidar3D`` / ``ObservationImage`` / ``ObservationRGBD``, built from the observation's attributes
  (the sensor's latest observation: a GNSS sends its fixes only);
* every object with ``<publish>``: ``mvsim_msgs.TimeStampedPose`` on ``publish_topic`` every ``publish_pose_period``
  simulated seconds, and the poses of ``publish_relative_pose_objects`` relative to it (``relativeToObjectId`` set)
  on ``publish_relative_pose_topic``.

Time stamps: ``unixTimestamp`` = wall-clock Unix time when the comms were attached, minus the simulated time then,
plus the simulated time of the data (upstream's convention): differences between stamps are simulated seconds.

Threads: service handlers run in the client's service thread and hold :attr:`WorldComms.lock` — the World's
``step_guard`` — so they never see half a step; a fair (FIFO) lock, so a simulation stepping flat out cannot starve
them. Publishing runs in the stepping thread (a World step listener).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from google.protobuf.message import Message

from mvsim_core.comms.client import Client
from mvsim_core.comms.names import RULE, name_problem
from mvsim_core.comms.proto import (
    ObservationLidar2D_pb2,
    Pose_pb2,
    SrvGetAllPoses_pb2,
    SrvGetAllPosesAnswer_pb2,
    SrvGetPose_pb2,
    SrvGetPoseAnswer_pb2,
    SrvSetControllerTwist_pb2,
    SrvSetControllerTwistAnswer_pb2,
    SrvSetPose_pb2,
    SrvSetPoseAnswer_pb2,
    SrvShutdown_pb2,
    SrvShutdownAnswer_pb2,
    TimeStampedPose_pb2,
    mvsim_core_msgs_pb2,
)
from mvsim_core.comms.proto.mvsim_core_msgs_pb2 import (
    SrvRemoveObjectsAnswer,
    SrvRemoveObjectsByName,
    SrvRemoveSpawnedObjects,
    SrvSpawnXmlObjects,
    SrvSpawnXmlObjectsAnswer,
)
from mvsim_core.comms.server import DEFAULT_PORT, LOOPBACK, Server
from mvsim_core.dynamics.command_limits import MAX_POSITION
from mvsim_core.errors import CommandValueError, ControllerError, MvsimError, StateValueError, one_line
from mvsim_core.geometry.rotations import compose, relative
from mvsim_core.sensors.outputs import Output, OutputKind, outputs_of
from mvsim_core.world import Spawn

if TYPE_CHECKING:
    from mvsim_core.sensors.base import Sensor
    from mvsim_core.world import World

log = logging.getLogger("mvsim.comms.world")

NODE_NAME = "World"
Pose6 = tuple[float, float, float, float, float, float]


class FairLock:
    """A FIFO (ticket) lock: waiters get it in arrival order. Context manager; not re-entrant."""

    def __init__(self) -> None:
        self._cv = threading.Condition(threading.Lock())
        self._next = 0
        self._serving = 0

    def acquire(self) -> None:
        with self._cv:
            ticket = self._next
            self._next += 1
            while self._serving != ticket:
                self._cv.wait()

    def release(self) -> None:
        with self._cv:
            self._serving += 1
            self._cv.notify_all()

    def __enter__(self) -> FairLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def pose_msg(p: Any, out: Pose_pb2.Pose | None = None) -> Pose_pb2.Pose:
    """A ``mvsim_msgs.Pose`` from (x, y, z, yaw, pitch, roll)."""
    m = out if out is not None else Pose_pb2.Pose()
    m.x, m.y, m.z, m.yaw, m.pitch, m.roll = (float(v) for v in p)
    return m


# ---------------------------------------------------------------------- observation → message
def _common(msg: Message, sensor: Sensor, obs: Any, t0: float) -> None:
    msg.unixTimestamp = t0 + float(obs.stamp)
    msg.simTime = float(obs.stamp)
    msg.sourceObjectId = sensor.name
    pose_msg(sensor.pose, msg.sensorPose)


def _image(img: Any, array: np.ndarray, encoding: str) -> None:
    a = np.ascontiguousarray(array)
    img.height, img.width = int(a.shape[0]), int(a.shape[1])
    img.encoding = encoding
    img.step = int(a.strides[0])
    img.data = a.tobytes()


_RANGE_ITEM = np.dtype([("tag", "u1"), ("value", "<f4")])
_VALID_ITEM = np.dtype([("tag", "u1"), ("value", "u1")])


def lidar2d_bytes(sensor: Sensor, obs: Any, t0: float) -> bytes:
    """The serialized ``ObservationLidar2D`` of a scan, byte for byte what protobuf writes (fields in tag order;
    ``scanRanges``/``validRanges`` unpacked, as proto2 declares them), with the arrays encoded by numpy: ~10x faster
    than filling the repeated fields one value at a time. ``aperture`` (rad) is the sensor's ``fov_degrees``
    parameter where it has one (a 2D lidar; stored in rad), else the scan's ``angle_max - angle_min``; ``maxRange``
    the scan's ``max_range`` (else the sensor's parameter)."""
    head = ObservationLidar2D_pb2.ObservationLidar2D(unixTimestamp=t0 + float(obs.stamp), sourceObjectId=sensor.name)
    fov = getattr(sensor, "params", {}).get("fov_degrees")
    aperture = float(fov) if fov is not None else float(obs.angle_max) - float(obs.angle_min)
    reach = obs.max_range if hasattr(obs, "max_range") else sensor.params["max_range"]
    tail = ObservationLidar2D_pb2.ObservationLidar2D(aperture=aperture, ccw=True, maxRange=float(reach))
    pose_msg(sensor.pose, tail.sensorPose)
    ranges = np.asarray(obs.ranges, dtype="<f4").reshape(-1)
    r = np.empty(len(ranges), _RANGE_ITEM)
    r["tag"] = 3 << 3 | 5  # field 3, 32-bit
    r["value"] = ranges
    v = np.empty(len(ranges), _VALID_ITEM)
    v["tag"] = 4 << 3 | 0  # field 4, varint
    v["value"] = np.asarray(obs.valid, dtype=bool).reshape(-1)
    return b"".join((head.SerializePartialToString(), r.tobytes(), v.tobytes(), tail.SerializePartialToString()))


def imu_message(sensor: Sensor, obs: Any, t0: float) -> mvsim_core_msgs_pb2.ObservationIMU:
    m = mvsim_core_msgs_pb2.ObservationIMU()
    _common(m, sensor, obs, t0)
    m.angularVelocity.x, m.angularVelocity.y, m.angularVelocity.z = (float(v) for v in obs.angular_velocity)
    a = m.linearAcceleration
    a.x, a.y, a.z = (float(v) for v in obs.linear_acceleration)
    q = getattr(obs, "orientation", None)
    if q is not None:
        m.orientation.x, m.orientation.y, m.orientation.z, m.orientation.w = (float(v) for v in q)
    return m


def gnss_message(sensor: Sensor, obs: Any, t0: float) -> mvsim_core_msgs_pb2.ObservationGNSS:
    m = mvsim_core_msgs_pb2.ObservationGNSS()
    _common(m, sensor, obs, t0)
    m.latitude, m.longitude, m.altitude = float(obs.latitude), float(obs.longitude), float(obs.altitude)
    cov = getattr(obs, "covariance", None)
    if cov is not None:
        m.positionCovariance.extend(np.asarray(cov, dtype=float).reshape(-1).tolist())
    if getattr(obs, "status", None) is not None:
        m.fixQuality = int(obs.status)
    if getattr(obs, "hdop", None) is not None:
        m.hdop = float(obs.hdop)
    return m


def lidar3d_message(sensor: Sensor, obs: Any, t0: float) -> mvsim_core_msgs_pb2.ObservationLidar3D:
    m = mvsim_core_msgs_pb2.ObservationLidar3D()
    _common(m, sensor, obs, t0)
    pts = np.asarray(obs.points, dtype="<f4").reshape(-1, 3)
    m.numPoints = len(pts)
    m.points = pts.tobytes()
    inten = getattr(obs, "intensity", None)
    if inten is not None:
        m.intensity = np.asarray(inten, dtype="<f4").reshape(-1).tobytes()
    ring = getattr(obs, "ring", None)
    if ring is not None:
        m.ring = np.asarray(ring, dtype="<u2").reshape(-1).tobytes()
    return m


def camera_message(sensor: Sensor, obs: Any, t0: float) -> mvsim_core_msgs_pb2.ObservationImage:
    m = mvsim_core_msgs_pb2.ObservationImage()
    _common(m, sensor, obs, t0)
    _image(m.image, np.asarray(obs.rgb, dtype=np.uint8), "rgb8")
    return m


def rgbd_message(sensor: Sensor, obs: Any, t0: float) -> mvsim_core_msgs_pb2.ObservationRGBD:
    m = mvsim_core_msgs_pb2.ObservationRGBD()
    _common(m, sensor, obs, t0)
    depth = getattr(obs, "depth", None)
    if depth is not None:
        _image(m.depth, np.asarray(depth, dtype="<f4"), "32FC1")
    rgb = getattr(obs, "rgb", None)
    if rgb is not None:
        _image(m.rgb, np.asarray(rgb, dtype=np.uint8), "rgb8")
    return m


def _serialized(build: Callable[[Any, Any, float], Message]) -> Callable[[Any, Any, float], bytes]:
    return lambda sensor, obs, t0: build(sensor, obs, t0).SerializeToString()


class SensorTopic(NamedTuple):
    """How one output kind is published: ``suffix`` added to the sensor's ``publish_topic``, the ``message`` class,
    and ``build`` (sensor, observation, t0 Unix seconds) → the serialized message."""

    suffix: str
    message: type[Message]
    build: Callable[[Any, Any, float], bytes]


SENSOR_TOPICS: dict[OutputKind, SensorTopic] = {
    OutputKind.SCAN: SensorTopic("_scan", ObservationLidar2D_pb2.ObservationLidar2D, lidar2d_bytes),
    OutputKind.IMU: SensorTopic("", mvsim_core_msgs_pb2.ObservationIMU, _serialized(imu_message)),
    OutputKind.FIX: SensorTopic("", mvsim_core_msgs_pb2.ObservationGNSS, _serialized(gnss_message)),
    OutputKind.POINT_CLOUD: SensorTopic("", mvsim_core_msgs_pb2.ObservationLidar3D, _serialized(lidar3d_message)),
    OutputKind.IMAGE: SensorTopic("", mvsim_core_msgs_pb2.ObservationImage, _serialized(camera_message)),
    OutputKind.RGBD: SensorTopic("", mvsim_core_msgs_pb2.ObservationRGBD, _serialized(rgbd_message)),
}
"""Output kind (:mod:`mvsim_core.sensors.outputs`) → how its observations go out; one row per kind (a test
checks), so a new sensor with outputs of existing kinds is published without a change here."""


def sensor_topic(output: Output) -> SensorTopic | None:
    """The row of an output (by its kind); None when its kind has none."""
    return SENSOR_TOPICS.get(output.kind)


READER = "zmq"
"""The reader a sensor with a subscribed ZMQ topic is wanted as (``Sensor.want``)."""


class _SensorTopic:
    def __init__(self, sensor: Sensor, topic: str, type_name: str, build: Callable[[Any, Any, float], bytes]) -> None:
        self.sensor = sensor
        self.topic = topic
        self.type_name = type_name
        self.build = build
        self.last: Any = sensor.last  # what is already there when the comms start is not news
        self.listened = False  # whether the sensor is wanted for this topic


class _PoseTopic:
    def __init__(self, name: str, topic: str, period: float, others: tuple[str, ...] = ()) -> None:
        self.name = name
        self.topic = topic
        self.period = period
        self.others = others
        self.next_t = 0.0


def _publishable(topic: str, owner: str) -> bool:
    """Whether ``topic`` follows the name rule; a warning says why not (the world runs on, unpublished there)."""
    problem = name_problem(topic)
    if problem is None:
        return True
    log.warning("%s: ZMQ topic %r not published: it %s; %s", owner, topic[:64], problem, RULE)
    return False


class WorldComms:
    """Serve a World on an MVSim comms server as the node ``World``.

    Args:
        world: the World.
        host, port: the server (default 127.0.0.1:23700).
        client: a Client to use instead of making one (it must not be connected yet; its name becomes ``World``).
        bind_host: interface of the node's service and publisher sockets (default: see :class:`Client`); use the
            server's ``--bind`` interface when other machines must reach the world.
        on_shutdown: called (from the service thread) when a client asks for ``shutdown``.
        server: the server, when it runs in this process (``mvsim launch``): the node registers straight with it
            and is protected there — no client over the wire can unregister ``World``, register that name, or
            re-advertise its services at another endpoint (:mod:`mvsim_core.comms.server`).

    :meth:`attach` registers the node, offers the services and advertises the topics; :meth:`close` undoes it.
    """

    def __init__(self, world: World, host: str = LOOPBACK, port: int = DEFAULT_PORT, *, client: Client | None = None,
                 bind_host: str | None = None, on_shutdown: Callable[[], None] | None = None,
                 timeout: float = 5.0, server: Server | None = None) -> None:
        self.world = world
        self.client = client or Client(NODE_NAME, host, port, bind_host=bind_host, timeout=timeout, server=server)
        self.client.name = NODE_NAME
        self.lock = FairLock()
        self.shutdown_requested = threading.Event()
        self.on_shutdown = on_shutdown
        self.t0_unix = 0.0
        self.sensor_topics: list[_SensorTopic] = []
        self.pose_topics: list[_PoseTopic] = []
        self.published = 0
        """Messages sent so far."""
        self._attached = False

    # ------------------------------------------------------------------ life cycle
    def attach(self) -> WorldComms:
        """Connect, register ``World``, offer the services, advertise the topics and hook into the step loop.

        Raises:
            CommsError / CommsTimeout: the server is not reachable or refuses.
        """
        w = self.world
        if w.step_guard is not None and w.step_guard is not self.lock:
            raise RuntimeError("this World is already served by another WorldComms")
        self.t0_unix = time.time() - float(w.time)
        c = self.client
        if not c.connected:
            c.connect()
        try:
            c.advertise_service("set_pose", SrvSetPose_pb2.SrvSetPose, SrvSetPoseAnswer_pb2.SrvSetPoseAnswer,
                                self.srv_set_pose)
            c.advertise_service("get_pose", SrvGetPose_pb2.SrvGetPose, SrvGetPoseAnswer_pb2.SrvGetPoseAnswer,
                                self.srv_get_pose)
            c.advertise_service("get_all_poses", SrvGetAllPoses_pb2.SrvGetAllPoses,
                                SrvGetAllPosesAnswer_pb2.SrvGetAllPosesAnswer, self.srv_get_all_poses)
            c.advertise_service("set_controller_twist", SrvSetControllerTwist_pb2.SrvSetControllerTwist,
                                SrvSetControllerTwistAnswer_pb2.SrvSetControllerTwistAnswer,
                                self.srv_set_controller_twist)
            c.advertise_service("shutdown", SrvShutdown_pb2.SrvShutdown, SrvShutdownAnswer_pb2.SrvShutdownAnswer,
                                self.srv_shutdown)
            c.advertise_service("spawn_xml_objects", SrvSpawnXmlObjects, SrvSpawnXmlObjectsAnswer,
                                self.srv_spawn_xml_objects)
            c.advertise_service("remove_objects_by_name", SrvRemoveObjectsByName, SrvRemoveObjectsAnswer,
                                self.srv_remove_objects_by_name)
            c.advertise_service("remove_spawned_objects", SrvRemoveSpawnedObjects, SrvRemoveObjectsAnswer,
                                self.srv_remove_spawned_objects)
            self._advertise_topics()
        except BaseException:
            c.shutdown()
            raise
        w.step_guard = self.lock
        if self.sensor_topics or self.pose_topics:
            w.add_step_listener(self.publish)
        self._attached = True
        return self

    def close(self) -> None:
        """Unhook from the World, unregister the node and close its sockets (idempotent)."""
        w = self.world
        if self._attached:
            with self.lock:
                w.remove_step_listener(self.publish)
                w.step_guard = None
                for st in self.sensor_topics:
                    st.sensor.unwant(READER)
                    st.listened = False
            self._attached = False
        self.client.shutdown()

    def __enter__(self) -> WorldComms:
        return self if self._attached else self.attach()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _advertise_topics(self) -> None:
        w = self.world
        sensors = [s for v in w.vehicles.values() for s in v.sensors.values()] + list(w.sensors.values())
        for s in sensors:
            if not getattr(s, "publish_topic", None):
                continue
            specs = [spec for spec in map(sensor_topic, outputs_of(s)) if spec is not None]
            if not specs:
                log.warning("sensor '%s' of class %s: no ZMQ message for it; not published", s.name, s.xml_class)
                continue
            for suffix, cls, build in specs:
                topic = s.publish_topic + suffix  # type: ignore[operator]  # not None: checked above
                if not _publishable(topic, f"sensor '{s.name}'"):
                    continue
                self.client.advertise_topic(topic, cls)
                self.sensor_topics.append(_SensorTopic(s, topic, cls.DESCRIPTOR.full_name, build))
        for name, obj in self._objects().items():
            sim = getattr(obj, "sim", None)
            if sim is None:
                continue
            if sim.publish_topic and _publishable(sim.publish_topic, f"object '{name}'"):
                self.client.advertise_topic(sim.publish_topic, TimeStampedPose_pb2.TimeStampedPose)
                self.pose_topics.append(_PoseTopic(name, sim.publish_topic, sim.publish_period))
            if (sim.publish_relative_pose_topic and sim.publish_relative_pose_objects
                    and _publishable(sim.publish_relative_pose_topic, f"object '{name}'")):
                self.client.advertise_topic(sim.publish_relative_pose_topic, TimeStampedPose_pb2.TimeStampedPose)
                self.pose_topics.append(_PoseTopic(name, sim.publish_relative_pose_topic, sim.publish_period,
                                                   sim.publish_relative_pose_objects))

    def _objects(self) -> dict[str, Any]:
        w = self.world
        return {**w.actors, **w.blocks, **w.vehicles}

    def _object(self, name: str) -> Any:
        w = self.world
        return w.vehicles.get(name) or w.blocks.get(name) or w.actors.get(name)

    # ------------------------------------------------------------------ publishing (stepping thread)
    def publish(self, world: World | None = None) -> None:
        """Publish what is new since the last call: fresh sensor observations and due poses (a post-step hook)."""
        c = self.client
        t = float(self.world.time)
        for st in self.sensor_topics:
            listened = c.has_subscribers(st.topic)
            if listened != st.listened:  # sample it from the next due time on, or no more
                st.listened = listened
                st.sensor.wanted(READER, listened)
            obs = st.sensor.last
            if obs is None or obs is st.last:
                continue
            st.last = obs
            if not listened:
                continue
            try:
                payload = st.build(st.sensor, obs, self.t0_unix)
            except Exception as e:  # an observation without the expected attributes
                log.warning("cannot publish %s on '%s': %s", type(obs).__name__, st.topic, e)
                continue
            self.published += c.publish_raw(st.topic, st.type_name, payload)
        for pt in self.pose_topics:
            if t + 1e-9 < pt.next_t:
                continue
            pt.next_t = t + pt.period
            if not c.has_subscribers(pt.topic):
                continue
            obj = self._object(pt.name)
            if obj is None:
                continue
            if not pt.others:
                self.published += c.publish(pt.topic, self._stamped(pt.name, obj.pose, t))
                continue
            for other in pt.others:
                o = self._object(other)
                if o is not None:
                    m = self._stamped(other, relative(obj.pose, o.pose), t)
                    m.relativeToObjectId = pt.name
                    self.published += c.publish(pt.topic, m)

    def _stamped(self, name: str, pose: Any, t: float) -> TimeStampedPose_pb2.TimeStampedPose:
        m = TimeStampedPose_pb2.TimeStampedPose(unixTimestamp=self.t0_unix + t, objectId=name)
        pose_msg(pose, m.pose)
        return m

    # ------------------------------------------------------------------ services (service thread)
    def _twist(self, name: str, obj: Any) -> tuple[float, float, float]:
        """Body-frame (vx, vy, ω) of an object: the vehicle's twist, a dynamic block's body velocity, else 0."""
        if name in self.world.vehicles:
            vx, vy, wz = obj.twist
            return (float(vx), float(vy), float(wz))
        w = self.world
        body = w.physics.bodies.block_bodies.get(name) if w.started else None
        if body is None:
            return (0.0, 0.0, 0.0)
        vx, vy = body.linearVelocity
        a = body.angle
        c, s = math.cos(a), math.sin(a)
        return (c * vx + s * vy, -s * vx + c * vy, float(body.angularVelocity))

    def srv_get_pose(self, req: SrvGetPose_pb2.SrvGetPose) -> SrvGetPoseAnswer_pb2.SrvGetPoseAnswer:
        ans = SrvGetPoseAnswer_pb2.SrvGetPoseAnswer(success=False, objectIsInCollision=False)
        with self.lock:
            obj = self._object(req.objectId)
            if obj is None:
                ans.errorMessage = "objectId not found"
                return ans
            ans.success = True
            pose_msg(obj.pose, ans.pose)
            vx, vy, wz = self._twist(req.objectId, obj)
            tw = ans.twist
            tw.vx, tw.vy, tw.vz, tw.wx, tw.wy, tw.wz = vx, vy, 0.0, 0.0, 0.0, wz
            ans.objectIsInCollision = bool(getattr(obj, "had_collision", False))
            if hasattr(obj, "had_collision"):
                obj.had_collision = False
        return ans

    def srv_get_all_poses(self, req: SrvGetAllPoses_pb2.SrvGetAllPoses
                          ) -> SrvGetAllPosesAnswer_pb2.SrvGetAllPosesAnswer:
        ans = SrvGetAllPosesAnswer_pb2.SrvGetAllPosesAnswer(success=True)
        prefix = req.prefix if req.HasField("prefix") else ""
        w = self.world
        with self.lock:
            ans.simulTime = float(w.time)
            for table in (w.vehicles, w.blocks, w.actors):
                for name, obj in table.items():
                    if not name.startswith(prefix):
                        continue
                    item = ans.objects.add(name=name)
                    pose_msg(obj.pose, item.pose)
                    vx, vy, wz = self._twist(name, obj)
                    tw = item.twist
                    tw.vx, tw.vy, tw.vz, tw.wx, tw.wy, tw.wz = vx, vy, 0.0, 0.0, 0.0, wz
        return ans

    def srv_set_pose(self, req: SrvSetPose_pb2.SrvSetPose) -> SrvSetPoseAnswer_pb2.SrvSetPoseAnswer:
        ans = SrvSetPoseAnswer_pb2.SrvSetPoseAnswer(success=False, objectIsInCollision=False)
        p = req.pose
        target: Pose6 = (p.x, p.y, p.z, p.yaw, p.pitch, p.roll)
        for field, v, unit in zip(("x", "y", "z", "yaw", "pitch", "roll"), target, ("m",) * 3 + ("rad",) * 3,
                                  strict=True):
            if not math.isfinite(v) or abs(v) > MAX_POSITION:
                bound = MAX_POSITION if math.isfinite(v) else math.inf
                ans.errorMessage = str(StateValueError("set_pose", req.objectId, f"pose.{field}", v, bound, unit))
                return ans
        with self.lock:
            obj = self._object(req.objectId)
            if obj is None:
                ans.errorMessage = "objectId not found"
                return ans
            if req.HasField("relativeIncrement") and req.relativeIncrement:
                target = compose(tuple(obj.pose), target)
            try:  # the composed pose may still be out of bounds
                self.world.set_pose(req.objectId, target[0], target[1], target[3])
            except MvsimError as e:
                ans.errorMessage = str(e)
                return ans
            if req.HasField("relativeIncrement") and req.relativeIncrement:
                pose_msg(obj.pose, ans.objectGlobalPose)
            ans.success = True
            ans.objectIsInCollision = bool(getattr(obj, "had_collision", False))
            if hasattr(obj, "had_collision"):
                obj.had_collision = False
        return ans

    def srv_set_controller_twist(self, req: SrvSetControllerTwist_pb2.SrvSetControllerTwist
                                 ) -> SrvSetControllerTwistAnswer_pb2.SrvSetControllerTwistAnswer:
        ans = SrvSetControllerTwistAnswer_pb2.SrvSetControllerTwistAnswer(success=False)
        t = req.twistSetPoint
        with self.lock:
            if self._object(req.objectId) is None:
                ans.errorMessage = "objectId not found"
                return ans
            veh = self.world.vehicles.get(req.objectId)
            if veh is None:
                ans.errorMessage = "objectId is not of VehicleBase type"
                return ans
            if getattr(veh, "controller", None) is None:
                ans.errorMessage = "objectId vehicle seems not to have any controller"
                return ans
            try:
                for field in ("vz", "wx", "wy"):  # not used (a planar twist), but a NaN there is a broken request
                    if not math.isfinite(getattr(t, field)):
                        raise CommandValueError(req.objectId, field, getattr(t, field))
                veh.set_twist(t.vx, t.vy, t.wz)  # clamped to the vehicle's command limits
            except CommandValueError as e:  # NaN/inf: refused, the last good command stays
                ans.errorMessage = str(e)
                return ans
            except ControllerError:
                ans.errorMessage = "objectId vehicle controller did not accept the twist command"
                return ans
        ans.success = True
        return ans

    def srv_shutdown(self, req: SrvShutdown_pb2.SrvShutdown) -> SrvShutdownAnswer_pb2.SrvShutdownAnswer:
        self.shutdown_requested.set()
        if self.on_shutdown is not None:
            self.on_shutdown()
        return SrvShutdownAnswer_pb2.SrvShutdownAnswer(accepted=True)

    def srv_spawn_xml_objects(self, req: SrvSpawnXmlObjects) -> SrvSpawnXmlObjectsAnswer:
        """``spawn_xml_objects``: every object of the request, or none (see the module docstring)."""
        ans = SrvSpawnXmlObjectsAnswer(success=False)
        specs = []
        for o in req.objects:
            pose = (o.pose.x, o.pose.y, o.pose.yaw) if o.HasField("pose") else None
            specs.append(Spawn(o.xml, o.objectId or None, pose))
        with self.lock:
            try:
                objs = self.world.spawn_many(specs, allow_shell=False)
            except MvsimError as e:
                ans.errorMessage = f"object {getattr(e, 'item', '?')}: {one_line(str(e))}"
                return ans
        ans.success = True
        ans.objectIds.extend(o.name for o in objs)
        log.info("spawned %d object(s) on request: %s", len(objs), ", ".join(o.name for o in objs))
        return ans

    def srv_remove_objects_by_name(self, req: SrvRemoveObjectsByName) -> SrvRemoveObjectsAnswer:
        """``remove_objects_by_name``: these objects, or none."""
        ans = SrvRemoveObjectsAnswer(success=False)
        with self.lock:
            try:
                gone = self.world.remove_many(list(req.objectIds))
            except MvsimError as e:
                ans.errorMessage = one_line(str(e))
                return ans
        ans.success = True
        ans.objectIds.extend(o.name for o in gone)
        return ans

    def srv_remove_spawned_objects(self, req: SrvRemoveSpawnedObjects) -> SrvRemoveObjectsAnswer:
        """``remove_spawned_objects``: every object added while running."""
        ans = SrvRemoveObjectsAnswer(success=False)
        with self.lock:
            gone = self.world.remove_spawned()
        ans.success = True
        ans.objectIds.extend(o.name for o in gone)
        return ans
