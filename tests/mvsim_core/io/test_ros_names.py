"""ROS topic names by output kind (mvsim_core.io.ros_names): each kind's topics under a vehicle prefix."""

from __future__ import annotations

from mvsim_core.io.ros_names import KIND_TOPICS, output_topics
from mvsim_core.output_kind import OutputKind
from mvsim_core.sensors.outputs import Output
from mvsim_core.sensors.outputs import OutputKind as ReExported


def test_every_kind_has_topics():
    assert set(KIND_TOPICS) == set(OutputKind)
    assert ReExported is OutputKind


def test_topics_of_each_kind():
    topics = {k.value: output_topics(Output(k, "s", "s", 0.1), "r1/") for k in OutputKind}
    assert topics == {
        "scan": {"main": "r1/s"},
        "point_cloud": {"points": "r1/s_points"},
        "image": {"image": "r1/s/image_raw", "info": "r1/s/camera_info"},
        "rgbd": {"rgb_image": "r1/s_rgb/image_raw", "rgb_info": "r1/s_rgb/camera_info",
                 "depth_image": "r1/s_depth/image_raw", "depth_info": "r1/s_depth/camera_info",
                 "points": "r1/s_points"},
        "imu": {"main": "r1/s"},
        "fix": {"main": "r1/s"},
        "odometry": {"main": "r1/s"},
        "collision": {"main": "r1/s"},
        "joint_state": {"main": "r1/s"},
        "robot_description": {"main": "r1/s"},
    }
    assert output_topics(Output(OutputKind.SCAN, "laser1", "laser1", 0.1), "/") == {"main": "/laser1"}
