"""The kinds of data sensors and vehicles put out: one enum, at the bottom of the layers.

:class:`OutputKind` is what every adapter keys its encoders by (:mod:`mvsim_core.outputs` declares the outputs
of each sensor and vehicle and documents each kind's fields and units). It lives here, below ``sensors`` and ``io``, so
that the bottom layers (``io.ros_names``: the topics of each kind; ``io.ros_fields``: the ROS message rules) may name
it too; :mod:`mvsim_core.outputs` re-exports it. No imports from the simulator.
"""

from __future__ import annotations

import enum


class OutputKind(enum.Enum):
    """The kinds of data sensors and vehicles put out (see :data:`mvsim_core.outputs.KINDS` for each one's fields
    and units)."""

    SCAN = "scan"
    POINT_CLOUD = "point_cloud"
    IMAGE = "image"
    RGBD = "rgbd"
    IMU = "imu"
    FIX = "fix"
    ODOMETRY = "odometry"
    COLLISION = "collision"
    JOINT_STATE = "joint_state"
    ROBOT_DESCRIPTION = "robot_description"
