"""Issue 33's acceptance: a sensor class that only this test knows (:mod:`sonar_ring`, a ring of ultrasonic ranges
declaring an existing output kind, a scan) is published by every adapter without any adapter naming it: ZMQ, MCAP
and Foxglove here (real server, real recorder and reader, real WebSocket), ROS in
``tests/mvsim_ros2/test_node_throwaway_sensor.py``. Each adapter is its own test.

The sonar is 2.0 m from a wall; its ranges are :data:`sonar_ring.EXPECTED`, worked out from the geometry.
"""

from __future__ import annotations

import json
import math
import queue
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
import sonar_ring as sr

import mvsim_core as mv
from mvsim_core.sensors.outputs import OutputKind, output_of

DEADLINE = 30.0  # wall seconds any wait may take before the test fails


@pytest.fixture
def world(tmp_path: Path) -> Iterator[mv.World]:
    """The sonar world, loaded while the throwaway class is registered (and unregistered after the test)."""
    with sr.registered():
        yield mv.load_world(sr.write_world(tmp_path), seed=0)


def test_the_world_file_picks_the_class_and_it_samples_the_wall(world: mv.World) -> None:
    sonar = world.vehicles["r1"].sensors[sr.NAME]
    assert type(sonar) is sr.SonarRing
    out = output_of(sonar)
    assert out is not None
    assert (out.kind, out.name, out.frame) == (OutputKind.SCAN, "sonar1", "sonar1")
    assert out.period == pytest.approx(0.1)
    world.run(0.1)
    scan = sonar.last
    assert scan.stamp == pytest.approx(0.1)
    np.testing.assert_allclose(scan.ranges, sr.EXPECTED, atol=1e-5)
    assert scan.ranges.dtype == np.float32
    np.testing.assert_array_equal(scan.valid, sr.EXPECTED_VALID)
    assert (scan.angle_min, scan.angle_max, scan.angle_increment) == pytest.approx(
        (-math.pi, 0.75 * math.pi, 0.25 * math.pi))


def _ros_ranges() -> np.ndarray:
    """The expected ranges as ROS writes them (REP 117): +inf where a beam missed."""
    return np.where(sr.EXPECTED_VALID, sr.EXPECTED, np.inf)


# ---------------------------------------------------------------------- ZMQ
def test_zmq_publishes_the_sonar_as_a_2d_scan(world: mv.World) -> None:
    from mvsim_core.comms import Client, Server, WorldComms
    from mvsim_core.comms.proto import ObservationLidar2D_pb2

    topic = sr.ZMQ_TOPIC + "_scan"  # a scan's ZMQ topic, as every 2D lidar's
    server = Server(port=0).start()
    got: queue.Queue[tuple[str, bytes]] = queue.Queue()
    try:
        with WorldComms(world, port=server.port, timeout=10.0) as comms, \
                Client("caller", port=server.port, timeout=30.0) as caller:
            assert topic in [t.topic for t in comms.sensor_topics]
            caller.subscribe(topic, lambda type_name, payload: got.put((type_name, payload)))
            end = time.monotonic() + DEADLINE
            while not comms.client.has_subscribers(topic):
                assert time.monotonic() < end, f"nobody subscribed to {topic}"
                time.sleep(0.01)
            world.run(0.3)
            assert comms.published == 3  # sent in the steps (an encoder that fails says so in the log)
            msgs = [got.get(timeout=DEADLINE) for _ in range(3)]
    finally:
        server.stop()
    for type_name, _ in msgs:
        assert type_name == "mvsim_msgs.ObservationLidar2D"
    m = ObservationLidar2D_pb2.ObservationLidar2D.FromString(msgs[-1][1])
    assert m.sourceObjectId == "sonar1"
    np.testing.assert_allclose(np.array(m.scanRanges), sr.EXPECTED, atol=1e-5)
    assert list(m.validRanges) == sr.EXPECTED_VALID.tolist()
    assert m.maxRange == pytest.approx(sr.MAX_RANGE)
    assert (m.sensorPose.x, m.sensorPose.z) == pytest.approx((0.5, 0.3))  # on the vehicle
    stamps = [ObservationLidar2D_pb2.ObservationLidar2D.FromString(p).unixTimestamp - comms.t0_unix for _, p in msgs]
    np.testing.assert_allclose(stamps, [0.1, 0.2, 0.3], atol=1e-6)


# ---------------------------------------------------------------------- MCAP
def test_mcap_records_the_sonar_as_a_laser_scan(world: mv.World, tmp_path: Path) -> None:
    from mcap.reader import make_reader
    from rosbags.typesys import Stores, get_typestore

    from mvsim_core.record.mcap_recorder import Recorder

    path = tmp_path / "sonar.mcap"
    with Recorder(world, path):
        world.run(0.3)
    typestore = get_typestore(Stores.ROS2_HUMBLE)
    with path.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert summary is not None
        channels = {c.topic: c for c in summary.channels.values()}
        assert "/sonar1" in channels, sorted(channels)  # a lone vehicle: no prefix
        schema = summary.schemas[channels["/sonar1"].schema_id]
        assert (schema.name, channels["/sonar1"].message_encoding) == ("sensor_msgs/msg/LaserScan", "cdr")
        scans: list[tuple[int, Any]] = [(msg.log_time, typestore.deserialize_cdr(msg.data, schema.name))
                 for _, _, msg in reader.iter_messages(topics=["/sonar1"])]
    assert [t for t, _ in scans] == [100_000_000, 200_000_000, 300_000_000]
    _, m = scans[-1]
    assert (m.header.frame_id, m.header.stamp.sec, m.header.stamp.nanosec) == ("sonar1", 0, 300_000_000)
    np.testing.assert_allclose(np.asarray(m.ranges), _ros_ranges(), atol=1e-5)
    assert (m.angle_min, m.angle_max, m.angle_increment) == pytest.approx((-math.pi, 0.75 * math.pi, 0.25 * math.pi))
    assert (m.range_min, m.range_max, m.scan_time) == pytest.approx((sr.MIN_RANGE, sr.MAX_RANGE, sr.PERIOD))


# ---------------------------------------------------------------------- Foxglove
class _FoxgloveClient:
    """A bare Foxglove WebSocket client (``foxglove.sdk.v1``): JSON ops in text frames, data in binary frames."""

    def __init__(self, port: int) -> None:
        from websockets.sync.client import connect

        self._connection = connect(f"ws://127.0.0.1:{port}", subprotocols=[cast(Any, "foxglove.sdk.v1")],
                                   open_timeout=10)
        self.ws: Any = self._connection.__enter__()
        self.channels: dict[str, dict[str, Any]] = {}
        self.binary: list[bytes] = []

    def _take(self) -> None:
        m = self.ws.recv(timeout=DEADLINE)
        if isinstance(m, bytes):
            self.binary.append(m)
        else:
            msg = json.loads(m)
            if msg["op"] == "advertise":
                self.channels.update({c["topic"]: c for c in msg["channels"]})

    def wait_channel(self, topic: str) -> dict[str, Any]:
        end = time.monotonic() + DEADLINE
        while topic not in self.channels:
            assert time.monotonic() < end, f"channel {topic} never advertised; got {sorted(self.channels)}"
            self._take()
        return self.channels[topic]

    def subscribe(self, sub_id: int, topic: str) -> None:
        self.ws.send(json.dumps({"op": "subscribe",
                                 "subscriptions": [{"id": sub_id, "channelId": self.wait_channel(topic)["id"]}]}))

    def poll(self, sub_id: int) -> tuple[int, bytes] | None:
        """(log time ns, payload) of a message of ``sub_id`` received so far, or None (reads what is waiting)."""
        for i, b in enumerate(self.binary):
            op, sid, t = struct.unpack_from("<BIQ", b)
            if op == 1 and sid == sub_id:
                del self.binary[i]
                return t, b[13:]
        try:
            m = self.ws.recv(timeout=0.01)
        except TimeoutError:
            return None
        if isinstance(m, bytes):
            self.binary.append(m)
        return None

    def close(self) -> None:
        self._connection.__exit__(None, None, None)


def _message_class(channel: dict[str, Any]) -> Any:
    """The protobuf class of a channel advertised with a FileDescriptorSet schema."""
    import base64

    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    assert channel["encoding"] == "protobuf" and channel["schemaEncoding"] == "protobuf"
    fds = descriptor_pb2.FileDescriptorSet.FromString(base64.b64decode(channel["schema"]))
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(channel["schemaName"]))


def test_foxglove_sends_the_sonar_as_a_laser_scan(world: mv.World) -> None:
    pytest.importorskip("foxglove")
    pytest.importorskip("websockets.sync.client")
    from mvsim_core.comms.foxglove_view import FoxgloveView

    view = FoxgloveView(world, port=0)
    client = None
    try:
        client = _FoxgloveClient(view.port)
        client.wait_channel("/scene")  # advertised last, after every sensor's channel
        assert "/sonar1" in client.channels, sorted(client.channels)  # a lone vehicle: the ROS node's name
        channel = client.channels["/sonar1"]
        assert channel["schemaName"] == "foxglove.LaserScan"
        client.subscribe(1, "/sonar1")
        end = time.monotonic() + DEADLINE
        got = None
        while got is None:  # step until the view has seen the subscription and sent a scan
            assert time.monotonic() < end, "no scan from the Foxglove view"
            world.step()
            got = client.poll(1)
        t_ns, payload = got
    finally:
        if client is not None:
            client.close()
        view.close()
    m = _message_class(channel).FromString(payload)
    assert t_ns == m.timestamp.seconds * 10**9 + m.timestamp.nanos
    assert t_ns % 100_000_000 == 0 and t_ns > 0  # at a sample time of the 10 Hz sonar
    assert m.frame_id == "sonar1"
    np.testing.assert_allclose(np.array(m.ranges), sr.EXPECTED, atol=1e-5)  # as measured: max_range for a miss
    assert (m.start_angle, m.end_angle) == pytest.approx((-math.pi, 0.75 * math.pi))
