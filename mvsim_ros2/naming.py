"""Topic and frame names, and the QoS profile of every topic of the bridge node.

Naming (upstream's rule, reference §3.2): with exactly one vehicle, its topics have no prefix (``odom``, ``tf``,
``laser1``) unless ``force_publish_vehicle_namespace`` is set; otherwise every vehicle topic is ``<V>/<name>``,
including ``<V>/tf`` and ``<V>/tf_static``. Names are relative, so they resolve under the node's namespace
(``/r1/odom`` for the default namespace).

Frames, by default (upstream's), are *not* prefixed: each vehicle has its own ``odom``, ``base_link``,
``base_footprint`` and sensor frames on its own ``<V>/tf`` and ``<V>/tf_static`` (what Nav2 multi-robot setups
expect; RViz for robot ``r1`` remaps ``/tf`` to ``/r1/tf``).

With ``shared_tf_tree`` (a ``tf_prefix``-style option) all vehicles share one tree instead: every frame of vehicle
``V`` is ``V/<frame>`` (``V/odom``, ``V/base_link``, ``V/base_footprint``, ``V/laser1``, ...), whatever the number of
vehicles, and every vehicle's transforms go on the node's ``tf`` and ``tf_static`` (``/tf``, ``/tf_static`` in the
root namespace), so one RViz or tf listener sees ``map → V/odom → V/base_link → V/laser1`` for every ``V``. Topic
names keep the rule above. The world frame (``world_frame_id``, ``map``) is never prefixed. Frame ids in messages
(odometry, ground truth, sensors, markers) follow the same rule (:func:`frame_prefix`).

Sensor topics and frames (``L`` = the sensor's name in the world file; the row of each output kind in
:mod:`mvsim_ros2.sensor_publishers` makes them, :func:`mvsim_core.io.ros_names.output_topics` names them):

=================  ==========================================================  =====================================
sensor class        topics                                                      frames
=================  ==========================================================  =====================================
laser               ``L`` (LaserScan)                                            ``L``
lidar3d             ``L_points`` (PointCloud2)                                   ``L``
camera              ``L/image_raw`` (Image), ``L/camera_info``                   ``L`` (optical: z forward, x right)
rgbd_camera         ``L_rgb/image_raw``, ``L_rgb/camera_info``,                  ``L`` (x forward), ``L_rgb`` and
                    ``L_depth/image_raw``, ``L_depth/camera_info``,              ``L_depth`` (optical frames)
                    ``L_points`` (PointCloud2 in ``L_depth``)
imu                 ``L`` (Imu)                                                  ``L``
gnss                ``L`` (NavSatFix)                                            ``L``
=================  ==========================================================  =====================================
"""

from __future__ import annotations

import dataclasses

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from mvsim_core.io.ros_names import (  # noqa: F401 (re-exported: the names are shared with the MCAP recorder)
    BASE_FRAME,
    CHASSIS_MARKERS_ALL,
    DEFAULT_WORLD_FRAME,
    FOOTPRINT_FRAME,
    ODOM_FRAME,
    frame_prefix,
    rgbd_frames,
    tf_topics,
    vehicle_prefix,
)

SENSOR_DEPTH = 5
"""History depth of sensor topics (the depth of SensorDataQoS)."""


def sensor_topics(prefix: str, sensor_name: str, sensor_class: str) -> dict[str, str]:
    """Topic of each output of a sensor of class ``sensor_class`` (its ``class="..."``) named ``sensor_name``: keys
    ``main`` (laser, imu, gnss), ``points`` (lidar3d, rgbd_camera), ``image``/``info`` (camera), ``rgb_image``/
    ``rgb_info``/``depth_image``/``depth_info`` (rgbd_camera). The names are those of the outputs a default sensor of
    that class declares (:func:`mvsim_core.io.ros_names.output_topics`); an unknown class, or one without outputs,
    gets one topic named as the sensor."""
    from mvsim_core.io.ros_names import output_topics, single_topic
    from mvsim_core.sensors import Sensor, sensor_from_xml
    from mvsim_core.sensors.outputs import outputs_of
    from mvsim_core.xml.context import ParseContext
    from mvsim_core.xml.parser import parse_text

    if sensor_class not in Sensor.registry:
        return single_topic(f"{prefix}{sensor_name}")
    node = parse_text(f'<sensor class="{sensor_class}" name="s"/>', file="<sensor_topics>")[0]
    topics: dict[str, str] = {}
    for o in outputs_of(sensor_from_xml(node, ParseContext(env={}), "")):
        topics.update(output_topics(dataclasses.replace(o, name=sensor_name), prefix))
    return topics or single_topic(f"{prefix}{sensor_name}")


# ---------------------------------------------------------------------- QoS
def _profile(depth: int, *, reliable: bool = True, transient_local: bool = False) -> QoSProfile:
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=depth,
        reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if transient_local else DurabilityPolicy.VOLATILE,
    )


def qos_state(history_len: int) -> QoSProfile:
    """odom, base_pose_ground_truth, collision, log topics: reliable, volatile, depth ``publisher_history_len``."""
    return _profile(max(1, history_len))


def qos_sensor() -> QoSProfile:
    """Every sensor topic (scans, clouds, images, IMU, GNSS): reliable, volatile, depth 5.

    A reliable publisher matches both reliable subscribers (RViz's default) and best-effort ones
    (``SensorDataQoS``: Nav2, SLAM toolbox); large images must be reliable anyway, since Fast DDS drops most
    fragmented best-effort samples.
    """
    return _profile(SENSOR_DEPTH)


def qos_tf() -> QoSProfile:
    """``tf``: tf2's DynamicBroadcasterQoS (reliable, volatile, depth 100)."""
    return _profile(100)


def qos_tf_static() -> QoSProfile:
    """``tf_static``: tf2's StaticBroadcasterQoS (reliable, transient local, depth 1): one message holds them all."""
    return _profile(1, transient_local=True)


def qos_latched(depth: int = 1) -> QoSProfile:
    """``simul_map``, ``simul_map_metadata``, ``chassis_polygon``, ``chassis_markers``, ``simul_chassis_markers``,
    ``amcl_pose``: reliable, transient local, so that late subscribers get the last message(s)."""
    return _profile(max(1, depth), transient_local=True)


def qos_clock() -> QoSProfile:
    """``/clock``: ClockQoS (best effort, volatile, depth 1), what rclpy/rclcpp time sources subscribe with."""
    return _profile(1, reliable=False)


def qos_runtime_objects() -> QoSProfile:
    """``runtime_objects`` and ``runtime_overlays`` subscriptions: reliable, volatile, depth 10 (a transient-local
    publisher matches too, and its last message arrives when the node starts)."""
    return _profile(10)


def qos_command() -> QoSProfile:
    """``cmd_vel`` and ``ackermann_cmd`` subscriptions: reliable, volatile, depth 10 (as upstream)."""
    return _profile(10)
