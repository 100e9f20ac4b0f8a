"""Sensors on ROS 2, by output kind: the publishers of each kind, and its static frames.

A sensor says what it puts out (:meth:`Sensor.outputs <mvsim_core.sensors.base.Sensor.outputs>`: a tuple of
:class:`~mvsim_core.sensors.outputs.Output`, each of an :class:`~mvsim_core.output_kind.OutputKind`).
:data:`KIND_PUBLISHERS` maps each kind to a :class:`KindPublisher`: the builder of its publish function and its
extra static frames. The node makes one :class:`SensorLink` per output (:func:`sensor_links`): the output's topics
(:func:`mvsim_core.io.ros_names.output_topics`), its publish function built once, called with each new sample
(``output.observe(sensor)``). No sensor class is named here: a new sensor whose outputs are of existing kinds needs
nothing here; a new kind needs one row (a test fails for a kind without one). A sensor with no outputs is not
published.

Each publish function skips a topic nobody subscribes to (a new subscriber gets the next observation) and stamps
messages with the observation's simulated time (or wall time, see ``disable_sim_time_clock``). The node samples a
sensor only while one of its topics has a subscriber (:func:`follow_audience`, reader :data:`READER`; the world
samples on demand, :mod:`mvsim_core.sensors.demand`): a sensor nobody listens to costs nothing. Frames are the
output's frame (the sensor's name), prefixed with ``<V>/`` in a shared tf tree (:attr:`PublishContext.frame_prefix`).

What a link publishes is its output's ``observe`` of the sensor: the latest observation (``sensor.last``), except
for a fix, whose samples without one (GNSS: ``last`` None, ``last_no_fix`` set) go out as NavSatFix messages with
status NO_FIX at the sensor's rate.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from sensor_msgs.msg import CameraInfo, Image, Imu, LaserScan, NavSatFix, PointCloud2

from mvsim_core.io import ros_fields as rf
from mvsim_core.io.ros_names import output_topics
from mvsim_core.output_kind import OutputKind
from mvsim_core.sensors.outputs import Output, latest, outputs_of
from mvsim_ros2 import conversions as cv
from mvsim_ros2 import naming
from mvsim_ros2.audience import listened, unwatch, watch

if TYPE_CHECKING:
    from mvsim_core.sensors.base import Sensor

READER = "ros"
"""The reader the node wants its sensors as (``Sensor.want``); a sensor's second and later outputs read as
``(READER, index)``, so that each output's audience keeps the sensor sampled."""

Publish = Callable[[Any], None]
"""Publishes one observation of its output."""


@dataclass(frozen=True)
class PublishContext:
    """What a builder needs from the node.

    Attributes:
        create_publisher: ``rclpy.node.Node.create_publisher`` (message type, topic, QoS).
        stamp: simulated seconds → stamp seconds.
        count: called with the number of messages sent.
        depth_image_encoding: ``32FC1`` or ``16UC1`` (RGB-D depth images).
        frame_prefix: prefix of the sensor's frames (``<V>/`` in a shared tf tree, else ""; one context per vehicle).
    """

    create_publisher: Callable[[Any, str, Any], Any]
    stamp: Callable[[float], float]
    count: Callable[[int], None]
    depth_image_encoding: str = "32FC1"
    frame_prefix: str = ""


@dataclass
class SensorLink:
    """Publishing state of one output of one sensor: ``publish`` is called with each ``observe(sensor)`` other than
    ``prev``; ``publishers``: its topics' publishers; ``reader``: what it wants the sensor as (:data:`READER`)."""

    sensor: Sensor
    publish: Publish
    prev: Any = None
    observe: Callable[[Any], Any] = latest
    publishers: list[Any] = field(default_factory=list)
    reader: Hashable = READER


def follow_audience(link: SensorLink) -> None:
    """Want the link's sensor (as ``link.reader``) while one of its publishers has a subscriber, now and after
    every change of their counts (:func:`mvsim_ros2.audience.watch`)."""
    def refresh() -> None:
        link.sensor.wanted(link.reader, any(listened(p) for p in link.publishers))

    for p in link.publishers:
        watch(p, refresh)
    refresh()


def unfollow_audience(link: SensorLink) -> None:
    """Stop following (the link's publishers are being destroyed) and release the sensor."""
    for p in link.publishers:
        unwatch(p)
    link.sensor.unwant(link.reader)


def sensor_frame(sensor: Sensor, t: float) -> list[Any]:
    """``base_link`` → the sensor's frame (named as the sensor), at its pose on the vehicle."""
    return [cv.transform_msg(naming.BASE_FRAME, sensor.name, sensor.pose, t)]


def no_frames(output: Output, t: float) -> list[Any]:
    """An output whose data is in the sensor's own frame: no frame of its own."""
    return []


@dataclass(frozen=True)
class KindPublisher:
    """How one output kind appears in ROS.

    Attributes:
        build: (context, output, its topics from :func:`mvsim_core.io.ros_names.output_topics`) → the publish
            function (publishers created once, here).
        static_tfs: (output, stamp seconds) → its frames on ``tf_static`` besides the sensor's own frame
            (unprefixed: the vehicle adds its prefix).
    """

    build: Callable[[PublishContext, Output, dict[str, str]], Publish]
    static_tfs: Callable[[Output, float], list[Any]] = no_frames


# ---------------------------------------------------------------------- builders
def _one_message(ctx: PublishContext, output: Output, msg_type: Any, topic: str,
                 convert: Callable[[Any, float, str], Any]) -> Publish:
    """A publisher of one message per observation: ``convert(obs, stamp, frame)`` built only while someone
    subscribes (frame: the output's, prefixed as the context says)."""
    p = ctx.create_publisher(msg_type, topic, naming.qos_sensor())
    st, count, frame = ctx.stamp, ctx.count, ctx.frame_prefix + output.frame

    def publish(obs: Any) -> None:
        if listened(p):
            p.publish(convert(obs, st(obs.stamp), frame))
            count(1)

    return publish


def _scan(ctx: PublishContext, output: Output, topics: dict[str, str]) -> Publish:
    period = float(output.period)
    return _one_message(ctx, output, LaserScan, topics["main"],
                        lambda obs, t, frame: cv.laser_scan_msg(obs, t, scan_time=period, frame=frame))


def _point_cloud(ctx: PublishContext, output: Output, topics: dict[str, str]) -> Publish:
    return _one_message(ctx, output, PointCloud2, topics["points"], cv.lidar3d_cloud_msg)


def _image(ctx: PublishContext, output: Output, topics: dict[str, str]) -> Publish:
    qos = naming.qos_sensor()
    pi, pc = ctx.create_publisher(Image, topics["image"], qos), ctx.create_publisher(CameraInfo, topics["info"], qos)
    st, count, frame = ctx.stamp, ctx.count, ctx.frame_prefix + output.frame

    def publish(obs: Any) -> None:
        t = st(obs.stamp)
        if listened(pi):
            pi.publish(cv.image_msg(obs.rgb, frame, t))
            count(1)
        if listened(pc):
            pc.publish(cv.camera_info_msg(obs.intrinsics, frame, t))
            count(1)

    return publish


def rgbd_cloud_msg(obs: Any, frame: str, t: float, colored: bool) -> Any:
    """The RGB-D point cloud in the depth optical frame; coloured when asked and the RGB image is pixel-aligned."""
    pts = obs.points()
    aligned = (obs.rgb is not None and obs.depth is not None and obs.rgb.shape[:2] == obs.depth.shape
               and np.allclose(obs.rgb_pose, obs.depth_pose, atol=1e-9))
    if colored and aligned:
        v, u = np.nonzero(obs.depth > 0)
        return cv.colored_cloud_msg(frame, t, pts, obs.rgb[v, u])
    return cv.point_cloud_msg(frame, t, pts)


def _rgbd(ctx: PublishContext, output: Output, topics: dict[str, str]) -> Publish:
    qos, pub = naming.qos_sensor(), ctx.create_publisher
    rgb_frame, depth_frame = naming.rgbd_frames(ctx.frame_prefix + output.frame)
    pri, prc = pub(Image, topics["rgb_image"], qos), pub(CameraInfo, topics["rgb_info"], qos)
    want_depth_img = bool(output.options.get("depth_image", True))
    colored = bool(output.options.get("colored_points", False))
    pdi = pub(Image, topics["depth_image"], qos) if want_depth_img else None
    pdc = pub(CameraInfo, topics["depth_info"], qos)
    pp = pub(PointCloud2, topics["points"], qos)
    st, count, enc = ctx.stamp, ctx.count, ctx.depth_image_encoding

    def publish(obs: Any) -> None:
        t = st(obs.stamp)
        if obs.rgb is not None:
            if listened(pri):
                pri.publish(cv.image_msg(obs.rgb, rgb_frame, t))
                count(1)
            if listened(prc):
                prc.publish(cv.camera_info_msg(obs.rgb_intrinsics, rgb_frame, t))
                count(1)
        if obs.depth is None:
            return
        if pdi is not None and listened(pdi):
            pdi.publish(cv.depth_image_msg(obs.depth, depth_frame, t, enc))
            count(1)
        if listened(pdc):
            pdc.publish(cv.camera_info_msg(obs.depth_intrinsics, depth_frame, t))
            count(1)
        if listened(pp):
            pp.publish(rgbd_cloud_msg(obs, depth_frame, t, colored))
            count(1)

    return publish


def _rgbd_frames(output: Output, t: float) -> list[Any]:
    """The two optical frames (:func:`mvsim_core.io.ros_fields.rgbd_optical_frames`): depth (z forward, x right)
    and RGB (at the output's ``rgb_pose_wrt_depth``)."""
    pose = output.options.get("rgb_pose_wrt_depth", (0.0,) * 6)
    return [cv.static_frame_msg(f, t) for f in rf.rgbd_optical_frames(output.frame, pose)]


def _imu(ctx: PublishContext, output: Output, topics: dict[str, str]) -> Publish:
    noise = dict(output.noise)
    return _one_message(ctx, output, Imu, topics["main"],
                        lambda obs, t, frame: cv.imu_noise_msg(obs, t, noise, frame=frame))


def _fix(ctx: PublishContext, output: Output, topics: dict[str, str]) -> Publish:
    return _one_message(ctx, output, NavSatFix, topics["main"], cv.nav_sat_fix_msg)


# ---------------------------------------------------------------------- the table
KIND_PUBLISHERS: dict[OutputKind, KindPublisher] = {
    OutputKind.SCAN: KindPublisher(_scan),  # LaserScan
    OutputKind.POINT_CLOUD: KindPublisher(_point_cloud),  # PointCloud2 (x, y, z, intensity, ring)
    OutputKind.IMAGE: KindPublisher(_image),  # Image (rgb8) + CameraInfo
    OutputKind.RGBD: KindPublisher(_rgbd, _rgbd_frames),  # Images, CameraInfos, PointCloud2; optical frames
    OutputKind.IMU: KindPublisher(_imu),  # Imu
    OutputKind.FIX: KindPublisher(_fix),  # NavSatFix, NO_FIX samples too (the output's observe)
}
"""Output kind → its ROS row; one per :class:`~mvsim_core.output_kind.OutputKind` (a test checks)."""


def published_outputs(sensor: Sensor) -> list[Output]:
    """The outputs of a sensor that have a ROS row (in the sensor's order)."""
    return [o for o in outputs_of(sensor) if o.kind in KIND_PUBLISHERS]


def sensor_topics(sensor: Sensor, topic_prefix: str) -> list[str]:
    """Every topic of a sensor's published outputs, under ``topic_prefix`` (the vehicle's, ``<V>/`` or "")."""
    return [tp for o in published_outputs(sensor) for tp in output_topics(o, topic_prefix).values()]


def sensor_static_tfs(sensor: Sensor, t: float) -> list[Any]:
    """The static frames of a sensor (``base_link`` → its frame, and each output's extra frames), unprefixed."""
    return [*sensor_frame(sensor, t),
            *(f for o in published_outputs(sensor) for f in KIND_PUBLISHERS[o.kind].static_tfs(o, t))]


def output_link(ctx: PublishContext, sensor: Sensor, output: Output, topic_prefix: str,
                reader: Hashable = READER) -> SensorLink:
    """The publishing state of one output of a sensor (its kind's publishers on the output's topics under
    ``topic_prefix``, frames prefixed as ``ctx`` says); ``output.kind`` must have a row."""
    made: list[Any] = []

    def create(msg_type: Any, topic: str, qos: Any) -> Any:
        pub = ctx.create_publisher(msg_type, topic, qos)
        made.append(pub)
        return pub

    row = KIND_PUBLISHERS[output.kind]
    publish = row.build(dataclasses.replace(ctx, create_publisher=create), output,
                        output_topics(output, topic_prefix))
    return SensorLink(sensor, publish, observe=output.observe, publishers=made, reader=reader)


def sensor_links(ctx: PublishContext, sensor: Sensor, topic_prefix: str) -> list[SensorLink]:
    """One link per published output of a sensor (:func:`output_link`; none for a sensor without outputs); the
    first wants the sensor as :data:`READER`, the i-th (i ≥ 1) as ``(READER, i)``."""
    return [output_link(ctx, sensor, o, topic_prefix, READER if i == 0 else (READER, i))
            for i, o in enumerate(published_outputs(sensor))]
