"""The ZMQ table of sensor topics: one row per output kind, found through the sensor's declared outputs."""

from __future__ import annotations

from typing import ClassVar

import pytest

from mvsim_core.comms.proto import ObservationLidar2D_pb2, mvsim_core_msgs_pb2
from mvsim_core.comms.world_comms import SENSOR_TOPICS, lidar2d_bytes, sensor_topic
from mvsim_core.sensors import Lidar2D, Sensor, sensor_from_xml
from mvsim_core.sensors.outputs import SENSOR_KINDS, OutputKind, outputs_of
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.parser import parse_text


def _sensor(xml_class: str) -> Sensor:
    return sensor_from_xml(parse_text(f'<sensor class="{xml_class}" name="s1"/>', file="<t>")[0],
                           ParseContext(env={}), "r1")


@pytest.mark.parametrize("kind", sorted(SENSOR_KINDS, key=lambda k: k.value), ids=lambda k: k.value)
def test_every_sensor_output_kind_has_a_zmq_row(kind):
    """Adding a sensor output kind means adding its row to ``SENSOR_TOPICS`` (else this fails); vehicles' state goes
    out through ``get_pose`` and ``<publish>`` topics instead."""
    assert kind in SENSOR_TOPICS, f"{kind} has no row in world_comms.SENSOR_TOPICS"


@pytest.mark.parametrize("xml_class", sorted(Sensor.registry))
def test_every_sensor_class_is_published_through_its_outputs(xml_class):
    outputs = outputs_of(_sensor(xml_class))
    assert outputs, f"sensor class {xml_class} declares no output"
    assert all(sensor_topic(o) is SENSOR_TOPICS[o.kind] for o in outputs)


def test_rows():
    assert {k: (r.suffix, r.message) for k, r in SENSOR_TOPICS.items()} == {
        OutputKind.SCAN: ("_scan", ObservationLidar2D_pb2.ObservationLidar2D),
        OutputKind.IMU: ("", mvsim_core_msgs_pb2.ObservationIMU),
        OutputKind.FIX: ("", mvsim_core_msgs_pb2.ObservationGNSS),
        OutputKind.POINT_CLOUD: ("", mvsim_core_msgs_pb2.ObservationLidar3D),
        OutputKind.IMAGE: ("", mvsim_core_msgs_pb2.ObservationImage),
        OutputKind.RGBD: ("", mvsim_core_msgs_pb2.ObservationRGBD),
    }
    assert SENSOR_TOPICS[OutputKind.SCAN].build is lidar2d_bytes


def test_the_row_follows_the_output_not_the_class():
    """A subclass keeps its base's outputs (and so its row); a sensor that declares no output has none."""

    class FancyLidar(Lidar2D):
        xml_class: ClassVar[str] = ""  # not registered

    class Unknown(Sensor):
        xml_class: ClassVar[str] = ""

    laser = _sensor("laser")
    fancy = object.__new__(FancyLidar)
    fancy.__dict__.update(laser.__dict__)
    assert [sensor_topic(o) for o in outputs_of(fancy)] == [SENSOR_TOPICS[OutputKind.SCAN]]
    assert outputs_of(object.__new__(Unknown)) == ()
