"""Sensors on ROS 2: one row per sensor class — its topics, the builder of its publishers, its static frames.

:data:`SENSOR_PUBLISHERS` maps a sensor class of :mod:`mvsim_core.sensors` to a :class:`SensorPublisher`;
:func:`sensor_publisher` finds the row of a sensor by its class (the nearest base class with a row). The node asks
the row for the sensor's topics, builds its publish function once, and calls it with each new observation. Adding a
sensor class: one row here (a test fails for a registered sensor class without one).

Each publish function skips a topic nobody subscribes to (a new subscriber gets the next observation) and stamps
messages with the observation's simulated time (or wall time, see ``disable_sim_time_clock``). The node samples a
sensor only while one of its topics has a subscriber (:func:`follow_audience`, reader :data:`READER`; the world
samples on demand, :mod:`mvsim_core.sensors.demand`): a sensor nobody listens to costs nothing. Frames are the
sensor's name, prefixed with ``<V>/`` in a shared tf tree (:attr:`PublishContext.frame_prefix`).

What a row publishes is its :attr:`SensorPublisher.observation` of the sensor: the latest observation
(``sensor.last``), except for GNSS, whose samples without a fix (``last`` None, ``last_no_fix`` set) go out as
NavSatFix messages with status NO_FIX at the sensor's rate.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sensor_msgs.msg import CameraInfo, Image, Imu, LaserScan, NavSatFix, PointCloud2

from mvsim_core.io.ros_names import camera_topics, points_topic, rgbd_topics, single_topic
from mvsim_core.sensors import Camera, Gnss, Lidar2D, Lidar3D, RgbdCamera, Sensor
from mvsim_core.sensors import Imu as ImuSensor
from mvsim_core.sensors.base import class_row
from mvsim_core.sensors.rgbd_camera import OPTICAL_WRT_SENSOR
from mvsim_ros2 import conversions as cv
from mvsim_ros2 import naming
from mvsim_ros2.audience import listened, unwatch, watch

READER = "ros"
"""The reader the node wants its sensors as (``Sensor.want``)."""

Publish = Callable[[Any], None]
"""Publishes one observation of its sensor."""


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


def latest_observation(sensor: Any) -> Any:
    """What a sensor has to publish now: its latest observation (None before the first)."""
    return sensor.last


def gnss_observation(sensor: Any) -> Any:
    """A GNSS's latest sample: its fix, or else its latest sample without one (``last_no_fix``; None before any)."""
    return sensor.last if sensor.last is not None else getattr(sensor, "last_no_fix", None)


@dataclass
class SensorLink:
    """Publishing state of one sensor: ``publish`` is called with each ``observe(sensor)`` other than ``prev``;
    ``publishers``: its topics' publishers."""

    sensor: Any
    publish: Publish
    prev: Any = None
    observe: Callable[[Any], Any] = latest_observation
    publishers: list[Any] = field(default_factory=list)


def follow_audience(link: SensorLink) -> None:
    """Want the link's sensor (reader :data:`READER`) while one of its publishers has a subscriber, now and after
    every change of their counts (:func:`mvsim_ros2.audience.watch`)."""
    def refresh() -> None:
        link.sensor.wanted(READER, any(listened(p) for p in link.publishers))

    for p in link.publishers:
        watch(p, refresh)
    refresh()


def unfollow_audience(link: SensorLink) -> None:
    """Stop following (the sensor's publishers are being destroyed) and release the sensor."""
    for p in link.publishers:
        unwatch(p)
    link.sensor.unwant(READER)


def sensor_frame(sensor: Any, t: float) -> list[Any]:
    """``base_link`` → the sensor's frame (named as the sensor), at its pose on the vehicle."""
    return [cv.transform_msg(naming.BASE_FRAME, sensor.name, sensor.pose, t)]


@dataclass(frozen=True)
class SensorPublisher:
    """How one sensor class appears in ROS.

    Attributes:
        topics: topic base (``<prefix><sensor name>``) → the topic of each output (see :mod:`mvsim_ros2.naming`).
        build: (context, sensor, its topics) → the publish function (publishers created once, here).
        static_tfs: (sensor, stamp seconds) → its frames on ``tf_static`` (unprefixed: the vehicle adds its prefix).
        observation: sensor → what to publish now (compared by identity with what was published last).
    """

    topics: Callable[[str], dict[str, str]]
    build: Callable[[PublishContext, Any, dict[str, str]], Publish]
    static_tfs: Callable[[Any, float], list[Any]] = sensor_frame
    observation: Callable[[Any], Any] = latest_observation


# ---------------------------------------------------------------------- builders
def _one_message(ctx: PublishContext, sensor: Any, msg_type: Any, topic: str,
                 convert: Callable[[Any, float, str], Any]) -> Publish:
    """A publisher of one message per observation: ``convert(obs, stamp, frame)`` built only while someone
    subscribes (frame: the sensor's, prefixed as the context says)."""
    p = ctx.create_publisher(msg_type, topic, naming.qos_sensor())
    st, count, frame = ctx.stamp, ctx.count, ctx.frame_prefix + sensor.name

    def publish(obs: Any) -> None:
        if listened(p):
            p.publish(convert(obs, st(obs.stamp), frame))
            count(1)

    return publish


def _laser(ctx: PublishContext, sensor: Any, topics: dict[str, str]) -> Publish:
    period = float(sensor.period)
    return _one_message(ctx, sensor, LaserScan, topics["main"],
                        lambda obs, t, frame: cv.laser_scan_msg(obs, t, scan_time=period, frame=frame))


def _lidar3d(ctx: PublishContext, sensor: Any, topics: dict[str, str]) -> Publish:
    return _one_message(ctx, sensor, PointCloud2, topics["points"], cv.lidar3d_cloud_msg)


def _camera(ctx: PublishContext, sensor: Any, topics: dict[str, str]) -> Publish:
    qos = naming.qos_sensor()
    pi, pc = ctx.create_publisher(Image, topics["image"], qos), ctx.create_publisher(CameraInfo, topics["info"], qos)
    st, count, frame = ctx.stamp, ctx.count, ctx.frame_prefix + sensor.name

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


def _rgbd(ctx: PublishContext, sensor: Any, topics: dict[str, str]) -> Publish:
    qos, pub = naming.qos_sensor(), ctx.create_publisher
    rgb_frame, depth_frame = naming.rgbd_frames(ctx.frame_prefix + sensor.name)
    pri, prc = pub(Image, topics["rgb_image"], qos), pub(CameraInfo, topics["rgb_info"], qos)
    want_depth_img = bool(sensor.params.get("publish_ros_depth_image", True))
    colored = bool(sensor.params.get("publish_ros_colored_pointcloud", False))
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


def _rgbd_frames(sensor: Any, t: float) -> list[Any]:
    """The sensor frame (x forward) and the two optical frames: depth (z forward, x right) and RGB (its pose w.r.t.
    the depth camera)."""
    rgb_frame, depth_frame = naming.rgbd_frames(sensor.name)
    return [*sensor_frame(sensor, t),
            cv.transform_matrix_msg(sensor.name, depth_frame, OPTICAL_WRT_SENSOR, (0.0, 0.0, 0.0), t),
            cv.transform_msg(sensor.name, rgb_frame, sensor.rgb_pose_wrt_depth, t)]


def _imu(ctx: PublishContext, sensor: Any, topics: dict[str, str]) -> Publish:
    gyro, accel = float(sensor.gyro_noise), float(sensor.accel_noise)
    orient = float(sensor.params.get("orientation_std_noise", 0.0))
    return _one_message(ctx, sensor, Imu, topics["main"], lambda obs, t, frame: cv.imu_msg(
        obs, t, gyro_sigma=gyro, accel_sigma=accel, orientation_sigma=orient, frame=frame))


def _gnss(ctx: PublishContext, sensor: Any, topics: dict[str, str]) -> Publish:
    return _one_message(ctx, sensor, NavSatFix, topics["main"], cv.nav_sat_fix_msg)


# ---------------------------------------------------------------------- the table
SENSOR_PUBLISHERS: dict[type[Sensor], SensorPublisher] = {
    Lidar2D: SensorPublisher(single_topic, _laser),  # LaserScan
    Lidar3D: SensorPublisher(points_topic, _lidar3d),  # PointCloud2 (x, y, z, intensity, ring)
    Camera: SensorPublisher(camera_topics, _camera),  # Image (rgb8) + CameraInfo
    RgbdCamera: SensorPublisher(rgbd_topics, _rgbd, _rgbd_frames),  # Images, CameraInfos, PointCloud2
    ImuSensor: SensorPublisher(single_topic, _imu),  # Imu
    Gnss: SensorPublisher(single_topic, _gnss, observation=gnss_observation),  # NavSatFix, NO_FIX samples too
}
"""Sensor class → its ROS row; one per class of :mod:`mvsim_core.sensors` (a test checks)."""


def sensor_publisher(sensor: Any) -> SensorPublisher | None:
    """The row of a sensor (or sensor class): its class's, else the nearest base class's; None when there is none."""
    return class_row(SENSOR_PUBLISHERS, sensor)


def sensor_static_tfs(sensor: Any, t: float) -> list[Any]:
    """The static frames of a sensor (``base_link`` → its frame, and its row's extra frames), unprefixed."""
    row = sensor_publisher(sensor)
    return (row.static_tfs if row is not None else sensor_frame)(sensor, t)


def sensor_link(ctx: PublishContext, sensor: Any, topic_base: str) -> SensorLink | None:
    """The publishing state of a sensor (its row's publishers on the topics of ``topic_base`` = ``<prefix><name>``,
    frames prefixed as ``ctx`` says), or None when its class has no row."""
    row = sensor_publisher(sensor)
    if row is None:
        return None
    made: list[Any] = []

    def create(msg_type: Any, topic: str, qos: Any) -> Any:
        pub = ctx.create_publisher(msg_type, topic, qos)
        made.append(pub)
        return pub

    publish = row.build(dataclasses.replace(ctx, create_publisher=create), sensor, row.topics(topic_base))
    return SensorLink(sensor, publish, observe=row.observation, publishers=made)
