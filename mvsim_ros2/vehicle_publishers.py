"""The per-vehicle topics of the node: publishers, the messages refilled in place, and what goes out when.

* latched, once (:func:`publish_static`): ``robot_description`` (std_msgs/String, the URDF text of
  :meth:`Vehicle.robot_description <mvsim_core.objects.vehicles.base.Vehicle.robot_description>`), ``tf_static``
  (with ``publish_sensor_tf``: ``base_link`` → ``base_footprint``, every sensor's frames and, for a vehicle from a
  URDF, every fixed joint of its URDF; see :func:`static_transforms`), ``chassis_polygon``, ``chassis_markers``
  (frame-locked to ``base_link``, a URDF vehicle's to ``base_footprint``: RViz moves them with the vehicle, see
  :func:`mvsim_ros2.conversions.chassis_markers_msg`);
* every ``period_ms_publish_tf`` (:func:`publish_periodic`): the vehicle's outputs ``odom``,
  ``base_pose_ground_truth``, ``collision`` and ``joint_states`` (sensor_msgs/JointState),
  ``tf`` (``odom`` → the vehicle's frame; ``map`` → ``odom`` with fake localization; then, with
  ``publish_wheel_tf``, a second message with the description's movable joints, :mod:`mvsim_ros2.joint_frames`),
  ``amcl_pose``, ``particlecloud``, ``chassis_markers`` again when steered wheels turned;
* with ``publish_log_topics`` while a CSV logger records (:func:`publish_log`): ``log/...`` Float64 topics.

Names and QoS: :mod:`mvsim_ros2.naming`; frames are prefixed with ``<V>/`` under ``shared_tf_tree``
(:attr:`VehicleLink.frame_prefix`). A volatile topic nobody subscribes to is skipped.

The vehicle's own topics come from its declared outputs (:meth:`Vehicle.outputs
<mvsim_core.objects.vehicles.base.Vehicle.outputs>`), one encoder per output kind (:data:`VEHICLE_ENCODERS`): an
odometry output is an ``Odometry`` from its ``parent`` frame to ``base_link``, a collision output a ``Bool``, a joint
state a ``JointState``, a robot description a ``String`` (latched: reliable, transient local, depth 1). The
transforms come from the odometry outputs too: ``odom`` → ``base_link`` is the pose of the one whose parent is
``odom``, ``map`` → ``odom`` composes it with the one whose parent is the world.

Covariances: an odometry with drift (``odom``) carries the odometry noise model's
(:func:`mvsim_ros2.conversions.odometry_variances`: pose drift growing with the path length and rotation so far, twist
error proportional to the speed, floor :data:`~mvsim_ros2.conversions.VARIANCE_FLOOR`); an exact one (ground truth)
and ``amcl_pose`` carry the floor.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from geometry_msgs.msg import Polygon, PoseArray, PoseWithCovarianceStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState as JointStateMsg
from std_msgs.msg import Bool, Float64, Header, String
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from mvsim_core.geometry.rotations import compose2d, inverse2d
from mvsim_core.io.ros_names import output_topics
from mvsim_core.outputs import WORLD_FRAME, Output, OutputKind, PlanarOdometry, outputs_of, vehicle_roles
from mvsim_ros2 import conversions as cv
from mvsim_ros2 import naming
from mvsim_ros2.audience import listened
from mvsim_ros2.joint_frames import JointFrames
from mvsim_ros2.params import Options
from mvsim_ros2.sensor_publishers import sensor_static_tfs

if TYPE_CHECKING:
    from mvsim_core.objects.vehicles.base import Vehicle
    from mvsim_core.objects.vehicles.description import JointState
    from mvsim_core.world import World

IDENTITY = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@dataclass
class OutputLink:
    """One declared output of a vehicle (:class:`~mvsim_core.outputs.Output`) on its topic: the publisher, the
    message refilled in place, and what the output accumulates between messages."""

    output: Output
    pub: Any
    msg: Any
    sample: Any = None  # the latest sample (observed every period, sent or not)
    latched: bool = False  # a collision output: it touched something since the previous message
    prev: tuple[float, float, float] = (0.0, 0.0, 0.0)  # an odometry: (x, y, yaw) at the previous period
    travelled: float = 0.0  # an odometry: path length so far (m)
    turned: float = 0.0  # an odometry: total rotation so far (rad)

    def restart(self) -> None:
        """Forget the latch and the path history."""
        self.sample = None
        self.latched = False
        self.prev = (0.0, 0.0, 0.0)
        self.travelled = 0.0
        self.turned = 0.0


@dataclass
class VehicleLink:
    """Publishers, subscriptions and command state of one vehicle."""

    vehicle: Vehicle
    prefix: str  # topic prefix ("<V>/" or "")
    frame_prefix: str = ""  # frame prefix ("<V>/" in a shared tf tree)
    pubs: dict[str, Any] = field(default_factory=dict)
    subs: list[Any] = field(default_factory=list)
    last_cmd: float | None = None  # simulated time of the latest command; None = no command active
    warned: set[str] = field(default_factory=set)
    wheel_yaws: tuple[float, ...] | None = None
    steerable: bool = False  # wheels may turn: republish chassis_markers when their angles change
    msgs: dict[str, Any] = field(default_factory=dict)  # messages refilled in place every period
    log_pubs: dict[str, Any] = field(default_factory=dict)
    markers_changed: bool = False  # chassis_markers went out again (wheels steered): the node's aggregate follows
    outputs: list[OutputLink] = field(default_factory=list)  # the vehicle's declared outputs, in their order
    estimate: OutputLink | None = None  # the odometry output in the odom frame (odom -> base_link on tf)
    truth: OutputLink | None = None  # the odometry output in the world frame (map -> odom, fake localization)
    joints: OutputLink | None = None  # the joint-state output (joint_states; the wheel tf reads its sample)
    joint_frames: JointFrames | None = None  # the description's movable joints on tf (publish_wheel_tf)
    sensor_tf: bool = True  # publish_sensor_tf: sensor frames and the description's fixed joints on tf_static

    def restart(self) -> None:
        """Forget what this run accumulated (command time, collision latch, steering seen, odometry history of the
        covariances), as after a reset of the world's state; publishers and messages stay."""
        self.last_cmd = None
        self.wheel_yaws = None
        for ol in self.outputs:
            ol.restart()

    def note_step(self) -> None:
        """After each physics step: latch the collision outputs that touch something now."""
        veh = self.vehicle
        for ol in self.outputs:
            if ol.output.kind is OutputKind.COLLISION and ol.output.observe(veh):
                ol.latched = True

    def frame(self, name: str) -> str:
        """The vehicle's frame ``name`` (``base_link``, a sensor's name, ...) as it appears in messages."""
        return self.frame_prefix + name


# ---------------------------------------------------------------------- encoders of the vehicle output kinds
@dataclass(frozen=True)
class VehicleEncoder:
    """How one vehicle output kind goes out: its message type, the message made once (frames, constant fields) and
    the refill of that message from a sample (in place, at stamp ``t``)."""

    msg_type: type
    make: Callable[[VehicleLink, Output, str], Any]  # (link, output, world frame) -> message
    fill: Callable[[OutputLink, float], Any]  # (output link with its sample, t) -> message


def _odometry_msg(link: VehicleLink, out: Output, world_frame: str) -> Any:
    parent = out.options.get("parent", WORLD_FRAME)
    msg = Odometry(header=Header(frame_id=world_frame if parent == WORLD_FRAME else link.frame(parent)),
                   child_frame_id=link.frame(out.frame))
    cv.set_covariance_diagonal(msg.pose.covariance, cv.EXACT_VARIANCES)  # an estimate's are set at each message
    cv.set_covariance_diagonal(msg.twist.covariance, cv.EXACT_VARIANCES)
    return msg


def _fill_odometry(ol: OutputLink, t: float) -> Any:
    s: PlanarOdometry = ol.sample
    msg = cv.set_odometry(ol.msg, s.pose, s.twist, t)
    if s.drift is not None:
        pose_var, twist_var = cv.odometry_variances(s.drift, ol.travelled, ol.turned, s.twist)
        cv.set_covariance_diagonal(msg.pose.covariance, pose_var)
        cv.set_covariance_diagonal(msg.twist.covariance, twist_var)
    return msg


def _fill_collision(ol: OutputLink, t: float) -> Any:
    ol.msg.data = ol.latched
    return ol.msg


def _joint_state_msg(link: VehicleLink, out: Output, world_frame: str) -> Any:
    return JointStateMsg()  # no frame: joint positions are in their joints


def _fill_joint_state(ol: OutputLink, t: float) -> Any:
    s: JointState = ol.sample
    msg = ol.msg
    cv.set_stamp(msg.header.stamp, t)
    if len(msg.name) != len(s.names):
        msg.name = list(s.names)
    msg.position = s.positions
    msg.velocity = s.velocities
    return msg


def _fill_description(ol: OutputLink, t: float) -> Any:
    ol.msg.data = ol.sample
    return ol.msg


VEHICLE_ENCODERS: dict[OutputKind, VehicleEncoder] = {
    OutputKind.ODOMETRY: VehicleEncoder(Odometry, _odometry_msg, _fill_odometry),
    OutputKind.COLLISION: VehicleEncoder(Bool, lambda link, out, wf: Bool(), _fill_collision),
    OutputKind.JOINT_STATE: VehicleEncoder(JointStateMsg, _joint_state_msg, _fill_joint_state),
    OutputKind.ROBOT_DESCRIPTION: VehicleEncoder(String, lambda link, out, wf: String(), _fill_description),
}
"""Vehicle output kind → its encoder (:data:`mvsim_core.outputs.VEHICLE_KINDS`)."""


def _observe(ol: OutputLink, veh: Vehicle) -> None:
    """Take the output's sample of this period; an odometry's path history follows its pose."""
    s = ol.sample = ol.output.observe(veh)
    if ol.output.kind is OutputKind.ODOMETRY and s.drift is not None:
        ox, oy, oyaw = s.pose[0], s.pose[1], s.pose[3]
        px, py, pyaw = ol.prev
        ol.travelled += math.hypot(ox - px, oy - py)
        ol.turned += abs(math.remainder(oyaw - pyaw, 2.0 * math.pi))
        ol.prev = (ox, oy, oyaw)


def make_vehicle_link(create_publisher: Callable[[Any, str, Any], Any], veh: Vehicle, prefix: str,
                      o: Options) -> VehicleLink:
    """The publishers of vehicle ``veh`` (topics under ``prefix``) and the messages they send, built once."""
    link = VehicleLink(veh, prefix, naming.frame_prefix(veh.name, o.shared_tf_tree), sensor_tf=o.publish_sensor_tf)
    hist = naming.qos_state(o.publisher_history_len)
    pub = create_publisher
    tf_topic, tf_static_topic = naming.tf_topics(prefix, o.shared_tf_tree)
    wf = o.world_frame_id
    outs = outputs_of(veh)
    roles = vehicle_roles(outs)
    for out in outs:
        enc = VEHICLE_ENCODERS[out.kind]
        topic = output_topics(out, prefix)["main"]
        qos = naming.qos_latched(1) if out.options.get("latched") else hist
        ol = OutputLink(out, pub(enc.msg_type, topic, qos), enc.make(link, out, wf))
        link.outputs.append(ol)
        link.pubs[topic] = ol.pub
        if out is roles.estimate:
            link.estimate = ol
        elif out is roles.truth:
            link.truth = ol
        elif out.kind is OutputKind.JOINT_STATE and link.joints is None:
            link.joints = ol
    link.pubs["tf"] = pub(TFMessage, tf_topic, naming.qos_tf())
    link.pubs["tf_static"] = pub(TFMessage, tf_static_topic, naming.qos_tf_static())
    link.pubs["markers"] = pub(MarkerArray, f"{prefix}chassis_markers", naming.qos_latched(5))
    link.pubs["polygon"] = pub(Polygon, f"{prefix}chassis_polygon", naming.qos_latched(1))
    if o.do_fake_localization:
        link.pubs["amcl_pose"] = pub(PoseWithCovarianceStamped, f"{prefix}amcl_pose", naming.qos_latched(1))
        link.pubs["particlecloud"] = pub(PoseArray, f"{prefix}particlecloud", naming.qos_state(1))
    odom, base = link.frame(naming.ODOM_FRAME), link.frame(veh.base_frame)
    tfs = []
    if o.publish_tf_odom2baselink:
        tfs.append(cv.transform_msg(odom, base, IDENTITY, 0.0))
    if o.do_fake_localization:
        tfs.append(cv.transform_msg(wf, odom, IDENTITY, 0.0))
        link.msgs["amcl_pose"] = cv.pose_with_covariance_msg(wf, IDENTITY, 0.0)
        link.msgs["particlecloud"] = cv.pose_array_msg(wf, [IDENTITY], 0.0)
    link.msgs["tf"] = TFMessage(transforms=tfs)
    link.steerable = any(w.yaw != 0.0 for w in veh.wheels) or veh.dynamics.steerable
    if o.publish_wheel_tf and link.joints is not None:
        desc = veh.robot_description()
        names = tuple(j.name for j in desc.movable_joints)
        frames = JointFrames(desc.joints, names, [], link.frame_prefix)
        link.joint_frames = frames if frames else None
    return link


def _generated(veh: Vehicle) -> bool:
    """Whether the vehicle's description is generated (it came from no URDF)."""
    return veh.description is None


def static_transforms(link: VehicleLink, t: float) -> list[Any]:
    """The vehicle's tf_static transforms, unprefixed: ``base_link`` → ``base_footprint`` (identity; for a URDF
    vehicle, its own joint to a ``base_footprint`` link when it has one, else one from its root down to the ground,
    z = −height), then with ``publish_sensor_tf``: every fixed joint of a URDF vehicle's description, and every
    sensor's frames (``base_link`` → the sensor at its ``pose_3d``, and its outputs' extra frames; a URDF vehicle's
    from its root, z lowered by the height, and without the sensor's own frame when the URDF has a link of that
    name: the URDF places it)."""
    veh = link.vehicle
    tfs: list[Any] = []
    if _generated(veh):
        tfs.append(cv.transform_msg(naming.BASE_FRAME, naming.FOOTPRINT_FRAME, IDENTITY, t))
        if link.sensor_tf:
            own = {naming.FOOTPRINT_FRAME, *veh.sensors}  # placed just above and just below, as they always were
            for j in veh.robot_description().joints:
                if not j.movable and j.child not in own:  # the chassis link
                    x, y, z, roll, pitch, yaw = j.origin
                    tfs.append(cv.transform_msg(j.parent, j.child, (x, y, z, yaw, pitch, roll), t))
            for s in veh.sensors.values():
                tfs.extend(sensor_static_tfs(s, t))
        return tfs
    desc = veh.robot_description()
    root, h = desc.root, desc.height
    links = set(desc.links)
    if naming.FOOTPRINT_FRAME not in links:
        tfs.append(cv.transform_msg(root, naming.FOOTPRINT_FRAME, (0.0, 0.0, -h, 0.0, 0.0, 0.0), t))
    for j in desc.joints:
        if not j.movable and (link.sensor_tf or j.child == naming.FOOTPRINT_FRAME):
            x, y, z, roll, pitch, yaw = j.origin
            tfs.append(cv.transform_msg(j.parent, j.child, (x, y, z, yaw, pitch, roll), t))
    if link.sensor_tf:
        for s in veh.sensors.values():
            own, *extra = sensor_static_tfs(s, t)
            if s.name not in links:
                own.header.frame_id = root
                own.transform.translation.z -= h
                tfs.append(own)
            tfs.extend(extra)
    return tfs


def publish_static(link: VehicleLink, t: float) -> None:
    """The latched messages of a vehicle: robot_description, tf_static (:func:`static_transforms`), chassis polygon
    and markers."""
    veh = link.vehicle
    for ol in link.outputs:
        if ol.output.options.get("latched"):
            ol.sample = ol.output.observe(veh)
            ol.pub.publish(VEHICLE_ENCODERS[ol.output.kind].fill(ol, t))
    tfs = static_transforms(link, t)
    link.pubs["tf_static"].publish(TFMessage(transforms=cv.prefix_frames(tfs, link.frame_prefix)))
    link.pubs["polygon"].publish(cv.polygon_msg(veh.chassis.footprint))
    publish_markers(link, t)


def chassis_markers(link: VehicleLink, t: float, ns_prefix: str = "") -> Any:
    """The vehicle's ``MarkerArray`` (chassis and wheels at their current steering angles, frame-locked to its
    ``base_link``; for a vehicle from a URDF to its ``base_footprint``, which tf always carries on the ground under
    the reference point, whereas a URDF's ``base_link`` may be raised or absent), marker namespaces prefixed with
    ``ns_prefix``."""
    veh = link.vehicle
    frame = naming.BASE_FRAME if _generated(veh) else naming.FOOTPRINT_FRAME
    return cv.chassis_markers_msg(link.frame(frame), veh.chassis.footprint, veh.wheels, t, ns_prefix)


def publish_markers(link: VehicleLink, t: float) -> None:
    """``chassis_markers`` with the wheels at their current steering angles."""
    link.wheel_yaws = tuple(float(w.yaw) for w in link.vehicle.wheels)
    link.pubs["markers"].publish(chassis_markers(link, t))
    link.markers_changed = True


def publish_periodic(link: VehicleLink, o: Options, t: float) -> int:
    """The declared outputs (odom, ground truth, collision), tf, fake localization and changed markers of one
    vehicle at stamp ``t``.

    Every output is sampled each period (an odometry's path history must not miss one); messages are refilled in
    place; a topic nobody subscribes to is skipped (a new subscriber gets the next period's message). Returns the
    number of messages sent.
    """
    fake = o.do_fake_localization
    veh = link.vehicle
    pubs, msgs = link.pubs, link.msgs
    n = 0
    frames = link.joint_frames
    wheel_tf = frames is not None and listened(pubs["tf"])
    for ol in link.outputs:
        out = ol.output
        if out.options.get("latched"):
            continue  # sent once (publish_static)
        heard = listened(ol.pub)
        if out.kind is OutputKind.JOINT_STATE:  # no history: read only when it goes out
            if not (heard or (wheel_tf and ol is link.joints)):
                continue
            ol.sample = out.observe(veh)
        else:
            _observe(ol, veh)
        if heard:
            ol.pub.publish(VEHICLE_ENCODERS[out.kind].fill(ol, t))
            n += 1
        ol.latched = False
    est = link.estimate.sample.pose if link.estimate is not None else IDENTITY
    gt = link.truth.sample.pose if link.truth is not None else veh.pose
    if fake or o.publish_tf_odom2baselink:
        tfm = msgs["tf"]
        if listened(pubs["tf"]):
            k = 0
            if o.publish_tf_odom2baselink:
                cv.set_transform(tfm.transforms[0], est, t)
                k = 1
            if fake:  # map->odom = ground truth ⊕ odometry⁻¹, so that map->base_link is the true pose
                m2o = compose2d((gt[0], gt[1], gt[3]), inverse2d((est[0], est[1], est[3])))
                cv.set_transform(tfm.transforms[k], (m2o[0], m2o[1], 0.0, m2o[2], 0.0, 0.0), t)
            pubs["tf"].publish(tfm)
            n += 1
    if wheel_tf and frames is not None and link.joints is not None:
        pubs["tf"].publish(frames.fill(link.joints.sample, t))
        n += 1
    if fake:
        if listened(pubs["amcl_pose"]):
            amcl = msgs["amcl_pose"]
            cv.set_stamp(amcl.header.stamp, t)
            cv.set_pose(amcl.pose.pose, gt)
            pubs["amcl_pose"].publish(amcl)
            n += 1
        if listened(pubs["particlecloud"]):
            pc = msgs["particlecloud"]
            cv.set_stamp(pc.header.stamp, t)
            cv.set_pose(pc.poses[0], gt)
            pubs["particlecloud"].publish(pc)
            n += 1
    if link.steerable:
        yaws = tuple(float(w.yaw) for w in veh.wheels)
        if yaws != link.wheel_yaws:
            publish_markers(link, t)
            n += 1
    return n


def publish_log(link: VehicleLink, world: World, create_publisher: Callable[[Any, str, Any], Any],
                history_len: int) -> int:
    """The CSV-logger columns of a recording vehicle as ``log/pose/<col>`` and ``log/wheel_<i>/<col>`` Float64
    topics (publishers made on first use). Returns the number of messages sent."""
    veh = link.vehicle
    logger = getattr(veh, "logger", None)
    if logger is None or not logger.recording:
        return 0
    from mvsim_core.io.csv_logger import POSE_COLUMNS, WHEEL_COLUMNS

    values = {f"log/pose/{c}": v for c, v in zip(POSE_COLUMNS[1:], (*veh.pose, *veh.twist, *veh.odometry),
                                                  strict=True)}
    k = list(world.vehicles).index(veh.name)
    for j, row in enumerate(world.physics.wheel_log_rows(k)):
        for c, v in zip(WHEEL_COLUMNS[1:], row, strict=True):
            values[f"log/wheel_{j + 1}/{c}"] = v
    for name, v in values.items():
        p = link.log_pubs.get(name)
        if p is None:
            p = link.log_pubs[name] = create_publisher(Float64, f"{link.prefix}{name}",
                                                       naming.qos_state(history_len))
        p.publish(Float64(data=float(v)))
    return len(values)
