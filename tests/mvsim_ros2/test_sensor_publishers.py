"""The ROS table of output kinds (mvsim_ros2.sensor_publishers), in process and without DDS: one row per output
kind, used for every output a sensor declares; each output's topics, message types, static frames and what its
publish function sends."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar

import pytest

import mvsim_core as mv
from mvsim_core.output_kind import OutputKind
from mvsim_core.sensors import Lidar2D, Sensor
from mvsim_core.sensors.outputs import SENSOR_KINDS, VEHICLE_KINDS, outputs_of
from mvsim_ros2.sensor_publishers import (
    KIND_PUBLISHERS,
    READER,
    PublishContext,
    SensorLink,
    follow_audience,
    sensor_links,
    sensor_static_tfs,
    sensor_topics,
)
from mvsim_ros2.vehicle_publishers import VEHICLE_ENCODERS

SENSORS = """
<sensor class="laser" name="laser1"><pose_3d>0.2 0 0.3 0 0 0</pose_3d><nrays>11</nrays>
  <sensor_period>0.1</sensor_period></sensor>
<sensor class="lidar3d" name="lidar1"><pose_3d>0 0 1 0 0 0</pose_3d><vert_nrays>2</vert_nrays>
  <horz_nrays>4</horz_nrays></sensor>
<sensor class="camera" name="cam1"><ncols>8</ncols><nrows>6</nrows></sensor>
<sensor class="rgbd_camera" name="rgbd1"><pose_3d>0 0 0.8 0 0 0</pose_3d>{rgbd}</sensor>
<sensor class="imu" name="imu1"><pose_3d>0 0 0.2 0 0 0</pose_3d></sensor>
<sensor class="gnss" name="gnss1"><pose_3d>0 0 0.5 0 0 0</pose_3d></sensor>
"""


def world(tmp_path: Path, rgbd: str = "") -> mv.World:
    p = tmp_path / "s.world.xml"
    p.write_text('<mvsim_world version="1.0"><georeference><latitude>36.72</latitude><longitude>-4.42</longitude>'
                 '</georeference><vehicle name="r1"><dynamics class="differential"/><init_pose>0 0 0</init_pose>'
                 f'{SENSORS.format(rgbd=rgbd)}</vehicle></mvsim_world>')
    return mv.load_world(p)


class FakePublisher:
    def __init__(self, msg_type: Any, topic: str, subscribers: int) -> None:
        self.msg_type, self.topic, self.subscribers = msg_type, topic, subscribers
        self.sent: list[Any] = []

    def get_subscription_count(self) -> int:
        return self.subscribers

    def publish(self, msg: Any) -> None:
        self.sent.append(msg)


class FakeNode:
    """What a builder sees of the node: create_publisher, stamps (sim time + 1000 s here) and a message counter."""

    def __init__(self, subscribers: int = 1) -> None:
        self.pubs: list[FakePublisher] = []
        self.counted = 0
        self.subscribers = subscribers

    def create_publisher(self, msg_type: Any, topic: str, qos: Any) -> FakePublisher:
        p = FakePublisher(msg_type, topic, self.subscribers)
        self.pubs.append(p)
        return p

    def count(self, n: int) -> None:
        self.counted += n

    def context(self, encoding: str = "32FC1", frame_prefix: str = "") -> PublishContext:
        return PublishContext(self.create_publisher, lambda t: t + 1000.0, self.count, encoding, frame_prefix)


def build(node: FakeNode, sensor: Any, prefix: str = "r1/") -> Any:
    (link,) = sensor_links(node.context(), sensor, prefix)
    return link.publish


# ---------------------------------------------------------------------- the table
def test_every_output_kind_has_a_ros_row():
    """Adding an output kind means adding its row to ``KIND_PUBLISHERS`` (a sensor kind) or to
    ``VEHICLE_ENCODERS`` (a vehicle kind), else this fails."""
    assert set(KIND_PUBLISHERS) == SENSOR_KINDS
    assert set(VEHICLE_ENCODERS) == VEHICLE_KINDS
    assert SENSOR_KINDS | VEHICLE_KINDS == set(OutputKind)


def test_every_sensor_class_is_published_by_its_outputs(tmp_path):
    """Every sampling sensor class declares outputs, all of kinds with a row: each sensor gets one link each."""
    veh = world(tmp_path).vehicles["r1"]
    assert {type(s) for s in veh.sensors.values()} == set(Sensor.registry.values())
    kinds = {s.name: [o.kind.value for o in outputs_of(s)] for s in veh.sensors.values()}
    assert kinds == {"laser1": ["scan"], "lidar1": ["point_cloud"], "cam1": ["image"], "rgbd1": ["rgbd"],
                     "imu1": ["imu"], "gnss1": ["fix"]}
    for s in veh.sensors.values():
        assert len(sensor_links(FakeNode().context(), s, "r1/")) == 1


def test_topics_of_each_sensor(tmp_path):
    veh = world(tmp_path).vehicles["r1"]
    topics = {n: sensor_topics(s, "r1/") for n, s in veh.sensors.items()}
    assert topics == {
        "laser1": ["r1/laser1"],
        "lidar1": ["r1/lidar1_points"],
        "cam1": ["r1/cam1/image_raw", "r1/cam1/camera_info"],
        "rgbd1": ["r1/rgbd1_rgb/image_raw", "r1/rgbd1_rgb/camera_info", "r1/rgbd1_depth/image_raw",
                  "r1/rgbd1_depth/camera_info", "r1/rgbd1_points"],
        "imu1": ["r1/imu1"],
        "gnss1": ["r1/gnss1"],
    }


def test_a_subclass_is_published_by_the_outputs_it_inherits(tmp_path):
    class FancyLidar(Lidar2D):
        xml_class: ClassVar[str] = ""  # not registered

    class Unknown(Sensor):
        xml_class: ClassVar[str] = ""

    laser = world(tmp_path).vehicles["r1"].sensors["laser1"]
    fancy = object.__new__(FancyLidar)
    fancy.__dict__.update(laser.__dict__)
    assert [(p.msg_type.__name__, p.topic) for p in _made(fancy)] == [("LaserScan", "r1/laser1")]
    odd = object.__new__(Unknown)
    odd.name = "odd"
    assert sensor_links(FakeNode().context(), odd, "r1/") == [] and sensor_topics(odd, "r1/") == []


def _made(sensor: Any) -> list[Any]:
    node = FakeNode()
    build(node, sensor)
    return node.pubs


def test_a_sensor_with_several_outputs_gets_one_link_each(tmp_path):
    """Each output of a sensor is its own link; the second one wants the sensor as (READER, 1)."""
    veh = world(tmp_path).vehicles["r1"]
    laser, imu = veh.sensors["laser1"], veh.sensors["imu1"]

    class Both(Lidar2D):
        xml_class: ClassVar[str] = ""

        def outputs(self) -> Any:
            return (*super().outputs(), *type(imu).outputs(imu))

    both = object.__new__(Both)
    both.__dict__.update(laser.__dict__)
    node = FakeNode()
    links = sensor_links(node.context(), both, "r1/")
    assert [(p.msg_type.__name__, p.topic) for p in node.pubs] == [("LaserScan", "r1/laser1"), ("Imu", "r1/imu1")]
    assert [lk.reader for lk in links] == [READER, (READER, 1)]
    assert all(isinstance(lk, SensorLink) and lk.sensor is both for lk in links)
    for lk in links:
        follow_audience(lk)
    assert both.readers == frozenset({READER, (READER, 1)})


# ---------------------------------------------------------------------- publishers built
def test_publishers_of_each_sensor(tmp_path):
    veh = world(tmp_path).vehicles["r1"]
    made = {}
    for s in veh.sensors.values():
        node = FakeNode()
        build(node, s)
        made[s.name] = [(p.msg_type.__name__, p.topic) for p in node.pubs]
    assert made == {
        "laser1": [("LaserScan", "r1/laser1")],
        "lidar1": [("PointCloud2", "r1/lidar1_points")],
        "cam1": [("Image", "r1/cam1/image_raw"), ("CameraInfo", "r1/cam1/camera_info")],
        "rgbd1": [("Image", "r1/rgbd1_rgb/image_raw"), ("CameraInfo", "r1/rgbd1_rgb/camera_info"),
                  ("Image", "r1/rgbd1_depth/image_raw"), ("CameraInfo", "r1/rgbd1_depth/camera_info"),
                  ("PointCloud2", "r1/rgbd1_points")],
        "imu1": [("Imu", "r1/imu1")],
        "gnss1": [("NavSatFix", "r1/gnss1")],
    }


def test_rgbd_depth_image_can_be_turned_off(tmp_path):
    veh = world(tmp_path, "<publish_ros_depth_image>false</publish_ros_depth_image>").vehicles["r1"]
    node = FakeNode()
    build(node, veh.sensors["rgbd1"])
    assert "r1/rgbd1_depth/image_raw" not in [p.topic for p in node.pubs]
    assert len(node.pubs) == 4


def test_scan_goes_out_only_with_subscribers(tmp_path):
    w = world(tmp_path)
    laser = w.vehicles["r1"].sensors["laser1"]
    w.run(0.1)
    obs = laser.last
    assert obs is not None
    node = FakeNode(subscribers=1)
    build(node, laser)(obs)
    (msg,) = node.pubs[0].sent
    assert node.counted == 1
    assert msg.header.frame_id == "laser1"
    assert msg.header.stamp.sec == 1000 and msg.header.stamp.nanosec == pytest.approx(round(obs.stamp * 1e9), abs=1)
    assert len(msg.ranges) == 11 and msg.scan_time == pytest.approx(0.1)
    quiet = FakeNode(subscribers=0)
    build(quiet, laser)(obs)
    assert quiet.pubs[0].sent == [] and quiet.counted == 0


def test_frames_prefixed_in_a_shared_tree(tmp_path):
    """With a frame prefix (shared_tf_tree), every message of every sensor names the prefixed frames."""
    w = world(tmp_path)
    w.run(0.1)
    frames = {}
    for s in w.vehicles["r1"].sensors.values():
        node = FakeNode()
        (link,) = sensor_links(node.context(frame_prefix="r1/"), s, "r1/")
        obs = link.observe(s)
        if obs is None:
            continue
        link.publish(obs)
        frames[s.name] = {m.header.frame_id for p in node.pubs for m in p.sent}
    assert frames["laser1"] == {"r1/laser1"} and frames["imu1"] == {"r1/imu1"} and frames["gnss1"] == {"r1/gnss1"}
    assert frames["lidar1"] == {"r1/lidar1"} and frames["cam1"] == {"r1/cam1"}
    assert frames["rgbd1"] == {"r1/rgbd1_rgb", "r1/rgbd1_depth"}


def test_gnss_without_coverage_publishes_no_fix(tmp_path):
    """No georeference → no fix: the GNSS row publishes each sample as STATUS_NO_FIX (the sensor's last is None)."""
    p = tmp_path / "n.world.xml"
    p.write_text('<mvsim_world version="1.0"><vehicle name="r1"><dynamics class="differential"/>'
                 '<init_pose>0 0 0</init_pose><sensor class="gnss" name="gnss1"><sensor_period>0.1</sensor_period>'
                 '</sensor></vehicle></mvsim_world>')
    w = mv.load_world(p)
    gnss = w.vehicles["r1"].sensors["gnss1"]
    node = FakeNode()
    (link,) = sensor_links(node.context(), gnss, "")
    w.run(0.2)
    obs = link.observe(gnss)
    assert gnss.last is None and obs is gnss.last_no_fix and obs.stamp == pytest.approx(0.2)
    link.publish(obs)
    (msg,) = node.pubs[0].sent
    assert msg.status.status == msg.status.STATUS_NO_FIX and math.isnan(msg.latitude)


# ---------------------------------------------------------------------- static frames
def test_static_frames(tmp_path):
    veh = world(tmp_path).vehicles["r1"]
    laser = sensor_static_tfs(veh.sensors["laser1"], 2.0)
    assert [(m.header.frame_id, m.child_frame_id) for m in laser] == [("base_link", "laser1")]
    tr = laser[0].transform.translation
    assert (tr.x, tr.y, tr.z) == pytest.approx((0.2, 0.0, 0.3))
    assert laser[0].header.stamp.sec == 2
    rgbd = sensor_static_tfs(veh.sensors["rgbd1"], 0.0)
    assert [(m.header.frame_id, m.child_frame_id) for m in rgbd] == [
        ("base_link", "rgbd1"), ("rgbd1", "rgbd1_depth"), ("rgbd1", "rgbd1_rgb")]
    q = rgbd[1].transform.rotation  # optical frame: z forward, x right = yaw −90°, roll −90° (a 120° turn)
    assert (q.x, q.y, q.z, q.w) == pytest.approx((-0.5, 0.5, -0.5, 0.5))
    assert 2 * math.acos(abs(q.w)) == pytest.approx(math.radians(120))

    class Unknown(Sensor):
        xml_class: ClassVar[str] = ""

    odd = object.__new__(Unknown)
    odd.name, odd.pose = "odd", (1.0, 2.0, 3.0, 0.0, 0.0, 0.0)
    assert [m.child_frame_id for m in sensor_static_tfs(odd, 0.0)] == ["odd"]  # no row: its frame only
