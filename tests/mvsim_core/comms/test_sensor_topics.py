"""The ZMQ table of sensor topics: one row per sensor class, looked up by the sensor's class (nearest base class)."""

from __future__ import annotations

from typing import ClassVar

import pytest

from mvsim_core.comms.proto import ObservationLidar2D_pb2, mvsim_core_msgs_pb2
from mvsim_core.comms.world_comms import SENSOR_TOPICS, lidar2d_bytes, sensor_topic
from mvsim_core.sensors import Camera, Gnss, Imu, Lidar2D, Lidar3D, RgbdCamera, Sensor


@pytest.mark.parametrize("cls", sorted(set(Sensor.registry.values()), key=lambda c: c.__name__),
                         ids=lambda c: c.__name__)
def test_every_sensor_class_has_a_zmq_row(cls):
    """Adding a sensor class means adding its row to ``SENSOR_TOPICS`` (else this fails)."""
    assert sensor_topic(cls) is not None, f"{cls.__name__} has no row in world_comms.SENSOR_TOPICS"


def test_rows():
    assert {c: (r.suffix, r.message) for c, r in SENSOR_TOPICS.items()} == {
        Lidar2D: ("_scan", ObservationLidar2D_pb2.ObservationLidar2D),
        Imu: ("", mvsim_core_msgs_pb2.ObservationIMU),
        Gnss: ("", mvsim_core_msgs_pb2.ObservationGNSS),
        Lidar3D: ("", mvsim_core_msgs_pb2.ObservationLidar3D),
        Camera: ("", mvsim_core_msgs_pb2.ObservationImage),
        RgbdCamera: ("", mvsim_core_msgs_pb2.ObservationRGBD),
    }
    assert SENSOR_TOPICS[Lidar2D].build is lidar2d_bytes


def test_lookup_walks_the_class_hierarchy():
    class FancyLidar(Lidar2D):
        xml_class: ClassVar[str] = ""  # not registered

    class Unknown(Sensor):
        xml_class: ClassVar[str] = ""

    assert sensor_topic(FancyLidar) is SENSOR_TOPICS[Lidar2D]
    assert sensor_topic(Unknown) is None
    assert sensor_topic(object.__new__(FancyLidar)) is SENSOR_TOPICS[Lidar2D]  # instances too
