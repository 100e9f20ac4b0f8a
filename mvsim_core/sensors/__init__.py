"""Sensors carried by vehicles or placed in the world: 2D/3D lidars, cameras, RGB-D cameras, IMUs, GNSS.

Importing this package registers every sensor class; :func:`sensor_from_xml` builds one from its ``<sensor>``
element.
"""

from mvsim_core.sensors.base import COMMON_PARAMS, Pose3D, Sensor, sensor_from_xml
from mvsim_core.sensors.camera import Camera, PinholeModel
from mvsim_core.sensors.gnss import Gnss
from mvsim_core.sensors.imu import Imu
from mvsim_core.sensors.lidar2d import Lidar2D
from mvsim_core.sensors.lidar3d import Lidar3D
from mvsim_core.sensors.rgbd_camera import RgbdCamera

__all__ = [
    "COMMON_PARAMS",
    "Camera",
    "Gnss",
    "Imu",
    "Lidar2D",
    "Lidar3D",
    "PinholeModel",
    "Pose3D",
    "RgbdCamera",
    "Sensor",
    "sensor_from_xml",
]
