"""Topic naming (upstream's rule) and QoS compatibility of every publisher with the subscribers users run."""

from __future__ import annotations

import pytest
from ros_harness import (
    DurabilityPolicy,
    QoSCompatibility,
    QoSProfile,
    ReliabilityPolicy,
    qos_check_compatible,
    qos_profile_sensor_data,
)

from mvsim_ros2 import naming


def compatible(pub: QoSProfile, sub: QoSProfile) -> bool:
    return qos_check_compatible(pub, sub)[0] != QoSCompatibility.ERROR


def test_vehicle_prefix_rule() -> None:
    assert naming.vehicle_prefix("r1", 1, False) == ""
    assert naming.vehicle_prefix("r1", 1, True) == "r1/"
    assert naming.vehicle_prefix("r1", 2, False) == "r1/"


def test_frames_and_tf_topics_with_and_without_a_shared_tree() -> None:
    assert naming.frame_prefix("r1", False) == ""
    assert naming.frame_prefix("r1", True) == "r1/"
    assert naming.tf_topics("r1/", False) == ("r1/tf", "r1/tf_static")  # upstream: one tree per vehicle
    assert naming.tf_topics("", False) == ("tf", "tf_static")
    assert naming.tf_topics("r1/", True) == ("tf", "tf_static")  # shared: the node's tf, every vehicle on it


def test_sensor_topics() -> None:
    assert naming.sensor_topics("", "laser1", "laser") == {"main": "laser1"}
    assert naming.sensor_topics("r1/", "imu1", "imu") == {"main": "r1/imu1"}
    assert naming.sensor_topics("r1/", "lidar1", "lidar3d") == {"points": "r1/lidar1_points"}
    assert naming.sensor_topics("", "cam1", "camera") == {"image": "cam1/image_raw", "info": "cam1/camera_info"}
    assert naming.sensor_topics("v/", "cam", "rgbd_camera") == {
        "rgb_image": "v/cam_rgb/image_raw", "rgb_info": "v/cam_rgb/camera_info",
        "depth_image": "v/cam_depth/image_raw", "depth_info": "v/cam_depth/camera_info", "points": "v/cam_points"}
    assert naming.rgbd_frames("cam") == ("cam_rgb", "cam_depth")


RELIABLE_SUB = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)  # RViz's default
LATCHED_SUB = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def test_sensor_qos_matches_sensor_data_and_reliable_subscribers() -> None:
    pub = naming.qos_sensor()
    assert compatible(pub, qos_profile_sensor_data)  # Nav2, slam_toolbox
    assert compatible(pub, RELIABLE_SUB)  # RViz, ros2 topic echo
    assert pub.reliability == ReliabilityPolicy.RELIABLE  # large images: best effort loses most of them


@pytest.mark.parametrize("make", [naming.qos_latched, naming.qos_tf_static])
def test_latched_topics_serve_late_joiners(make) -> None:
    pub = make()
    assert pub.durability == DurabilityPolicy.TRANSIENT_LOCAL
    assert compatible(pub, LATCHED_SUB) and compatible(pub, RELIABLE_SUB)


def test_clock_and_tf_profiles() -> None:
    clock = naming.qos_clock()
    assert compatible(clock, QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))  # rclpy's TimeSource
    assert naming.qos_tf().depth == 100 and naming.qos_tf_static().depth == 1
    assert naming.qos_state(50).depth == 50 and naming.qos_state(0).depth == 1
