"""The live Foxglove view (mvsim_core.comms.foxglove_view) of a running ``mvsim launch --foxglove``, seen by a plain
WebSocket client speaking the Foxglove WebSocket protocol: serverInfo and channels, ten scans whose ranges equal the
simulator's (the same world and seed run here, step for step), teleop by a client-published Twist, malformed
commands dropped, loopback only."""

from __future__ import annotations

import base64
import json
import math
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mvsim_core as mv

websockets_sync = pytest.importorskip("websockets.sync.client")
pytest.importorskip("foxglove")

WORLD = """<mvsim_world version="1.0">
  <simul_timestep>0.005</simul_timestep>
  <vehicle name="r1"><dynamics class="differential"><controller class="twist_ideal"/></dynamics>
    <init_pose>0 0 0</init_pose>
    <sensor class="laser" name="laser1"><pose>0.1 0 0</pose><fov_degrees>90</fov_degrees><nrays>31</nrays>
      <max_range>10</max_range><sensor_period>0.1</sensor_period></sensor>
  </vehicle>
  <block name="box"><static>true</static><init_pose>0 0 0</init_pose><zmin>0</zmin><zmax>1</zmax>
    <shape><pt>3 -1</pt><pt>3.5 -1</pt><pt>3.5 1</pt><pt>3 1</pt></shape></block>
</mvsim_world>
"""
SUBPROTOCOL = "foxglove.sdk.v1"
DEADLINE = 30.0  # wall seconds any wait may take before the test fails


def _launch(path: Path, *extra: str) -> tuple[subprocess.Popen, int]:
    """``mvsim launch --foxglove 0`` (any free port) and the port it says it serves on."""
    p = subprocess.Popen([sys.executable, "-m", "mvsim_core.cli", "launch", str(path), "--headless", "--no-server",
                          "--foxglove", "0", *extra], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert p.stderr is not None
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        line = p.stderr.readline()
        if not line:
            break
        if "Foxglove view: ws://" in line:
            return p, int(line.strip().rsplit(":", 1)[1])
    p.kill()
    raise AssertionError(f"no 'Foxglove view' line from mvsim launch (exit {p.poll()})")


class Client:
    """A bare Foxglove WebSocket client: JSON ops as text frames, message data as binary frames."""

    def __init__(self, port: int, host: str = "127.0.0.1") -> None:
        self._connection = websockets_sync.connect(f"ws://{host}:{port}", subprotocols=[SUBPROTOCOL],
                                                   open_timeout=10)
        self.ws = self._connection.__enter__()
        self.channels: dict[str, dict[str, Any]] = {}
        self.server_info: dict[str, Any] | None = None
        self.binary: list[bytes] = []

    def _take(self, timeout: float) -> None:
        m = self.ws.recv(timeout=timeout)
        if isinstance(m, bytes):
            self.binary.append(m)
            return
        msg = json.loads(m)
        if msg["op"] == "serverInfo":
            self.server_info = msg
        elif msg["op"] == "advertise":
            for c in msg["channels"]:
                self.channels[c["topic"]] = c

    def wait_channel(self, topic: str) -> dict[str, Any]:
        end = time.monotonic() + DEADLINE
        while topic not in self.channels:
            assert time.monotonic() < end, f"channel {topic} never advertised; got {sorted(self.channels)}"
            self._take(DEADLINE)
        return self.channels[topic]

    def subscribe(self, sub_id: int, topic: str) -> None:
        self.ws.send(json.dumps({"op": "subscribe",
                                 "subscriptions": [{"id": sub_id, "channelId": self.wait_channel(topic)["id"]}]}))

    def next_message(self, sub_id: int) -> tuple[int, bytes]:
        """(log time ns, payload) of the next message of subscription ``sub_id``."""
        end = time.monotonic() + DEADLINE
        while True:
            for i, b in enumerate(self.binary):
                op, sid, t = struct.unpack_from("<BIQ", b)
                if op == 1 and sid == sub_id:
                    del self.binary[i]
                    return t, b[13:]
            assert time.monotonic() < end, "no message in time"
            self._take(DEADLINE)

    def advertise_twist(self, channel_id: int, topic: str) -> None:
        self.ws.send(json.dumps({"op": "advertise", "channels": [
            {"id": channel_id, "topic": topic, "encoding": "json", "schemaName": "geometry_msgs/msg/Twist"}]}))

    def publish(self, channel_id: int, payload: bytes) -> None:
        self.ws.send(bytes([1]) + struct.pack("<I", channel_id) + payload)

    def close(self) -> None:
        self._connection.__exit__(None, None, None)


def message_class(channel: dict[str, Any]) -> Any:
    """The protobuf class of a channel advertised with a FileDescriptorSet schema."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    assert channel["encoding"] == "protobuf" and channel["schemaEncoding"] == "protobuf"
    fds = descriptor_pb2.FileDescriptorSet.FromString(base64.b64decode(channel["schema"]))
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(channel["schemaName"]))


def test_scans_tf_and_teleop_over_foxglove(tmp_path):
    path = tmp_path / "fox.world.xml"
    path.write_text(WORLD)
    proc, port = _launch(path)
    client = Client(port)
    try:
        scan_ch = client.wait_channel("/laser1")  # a lone vehicle: the ROS node's names, no prefix
        assert client.server_info is not None and client.server_info["name"] == "mvsim"
        assert "clientPublish" in client.server_info["capabilities"]
        assert scan_ch["schemaName"] == "foxglove.LaserScan"
        assert {"/tf", "/scene"} <= set(client.channels)
        scan_cls = message_class(scan_ch)
        client.subscribe(1, "/laser1")
        scans = []
        for _ in range(10):
            t_ns, payload = client.next_message(1)
            scans.append((t_ns, scan_cls.FromString(payload)))

        # the same world and seed, stepped here: the scan at each stamp is the one received
        w = mv.load_world(path, seed=0)
        lidar = w.vehicles["r1"].sensors["laser1"]
        mine = {}
        while w.time < scans[-1][0] * 1e-9 + 1e-6:
            w.step()
            if lidar.last is not None:
                mine[round(lidar.last.stamp * 1e9)] = lidar.last
        for t_ns, msg in scans:
            assert msg.timestamp.seconds * 10**9 + msg.timestamp.nanos == t_ns
            ref = mine[t_ns]
            assert msg.frame_id == "laser1"
            np.testing.assert_array_equal(np.array(msg.ranges), np.asarray(ref.ranges, dtype=np.float64))
            assert msg.start_angle == pytest.approx(-math.pi / 4) and msg.end_angle == pytest.approx(math.pi / 4)
        middle = np.array(scans[-1][1].ranges)[15]
        assert middle == pytest.approx(2.9, abs=0.05)  # the box face at x = 3, the sensor at x = 0.1

        # teleop: garbage and a NaN are dropped, then a twist drives r1 towards the box
        client.advertise_twist(7, "/cmd_vel")
        client.publish(7, b"not json")
        client.publish(7, b'{"linear": {"x": NaN}}')
        client.publish(7, json.dumps({"linear": {"x": 0.5, "y": 0.0, "z": 0.0},
                                      "angular": {"x": 0.0, "y": 0.0, "z": 0.0}}).encode())
        tf_cls = message_class(client.wait_channel("/tf"))
        client.subscribe(2, "/tf")
        end = time.monotonic() + DEADLINE
        x = 0.0
        while x < 0.3:
            assert time.monotonic() < end, f"r1 did not move (x = {x})"
            _, payload = client.next_message(2)
            tfs = {tf.child_frame_id: tf for tf in tf_cls.FromString(payload).transforms}
            x = tfs["base_link"].translation.x
            assert tfs["base_link"].parent_frame_id == "map"
            assert abs(tfs["base_link"].translation.y) < 1e-6
        assert proc.poll() is None  # the malformed commands did not stop anything

        # the scene: the box as a prism in map (12 triangles), r1's chassis locked to its base_link
        scene_cls = message_class(client.wait_channel("/scene"))
        client.subscribe(3, "/scene")
        entities: dict[str, Any] = {}
        while not {"block/box", "vehicle/r1"} <= set(entities):
            _, payload = client.next_message(3)
            entities.update({e.id: e for e in scene_cls.FromString(payload).entities})
        box = entities["block/box"]
        pts = np.array([(p.x, p.y, p.z) for p in box.triangles[0].points])
        assert box.frame_id == "map" and pts.shape == (36, 3)
        np.testing.assert_allclose([pts.min(axis=0), pts.max(axis=0)], [[3, -1, 0], [3.5, 1, 1]], atol=1e-9)
        assert entities["vehicle/r1"].frame_id == "base_link" and entities["vehicle/r1"].frame_locked
    finally:
        client.close()
        proc.terminate()
        proc.wait(timeout=20)


def _outside_address() -> str | None:
    """An address of this machine that is not loopback, if it has one."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: nothing is sent, the kernel only picks a route
            addr = s.getsockname()[0]
    except OSError:
        return None
    return None if addr.startswith("127.") else addr


def test_only_loopback_is_bound(tmp_path):
    addr = _outside_address()
    if addr is None:
        pytest.skip("this machine has no address besides loopback")
    path = tmp_path / "fox.world.xml"
    path.write_text(WORLD)
    proc, port = _launch(path)
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            assert s.connect_ex((addr, port)) != 0  # refused on the machine's own outside address
        Client(port).close()  # and served on loopback
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_a_busy_port_is_one_line_and_exit_2(tmp_path):
    """A second launch on the port the first one serves: one line naming the address, exit 2, no traceback."""
    path = tmp_path / "fox.world.xml"
    path.write_text(WORLD)
    proc, port = _launch(path)
    try:
        r = subprocess.run([sys.executable, "-m", "mvsim_core.cli", "launch", str(path), "--headless", "--no-server",
                            "--foxglove", str(port), "--duration", "1"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and "Traceback" not in r.stderr
        assert f"cannot start the Foxglove server on 127.0.0.1:{port}" in r.stderr
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_a_failing_publish_does_not_stop_the_simulation(tmp_path, caplog):
    """If building a message fails (here: a scan whose ranges cannot be read), the view says so once and the world
    keeps stepping."""
    from mvsim_core.comms.foxglove_view import FoxgloveView

    path = tmp_path / "fox.world.xml"
    path.write_text(WORLD)
    w = mv.load_world(path, seed=0)
    view = FoxgloveView(w, port=0)
    try:
        lidar = w.vehicles["r1"].sensors["laser1"]
        w.run(0.1)
        lidar.last = type("Broken", (), {"stamp": 0.2, "angle_min": 0.0, "angle_max": 1.0, "ranges": None})()
        with caplog.at_level("WARNING", logger="mvsim_core.comms.foxglove_view"):
            w.run(0.5)
        assert w.time == pytest.approx(0.6)
        said = [r.getMessage() for r in caplog.records if "Foxglove view" in r.getMessage()]
        assert len(said) == 1 and "the simulation goes on" in said[0]
    finally:
        view.close()


def test_a_sensor_samples_while_its_channel_has_a_subscriber(tmp_path):
    """In a world that samples on demand (``mvsim launch --foxglove``), the laser is cast only while a client
    subscribes to its channel: nothing before, scans from the next due time after the subscription, nothing after
    the client left. The view runs in this process (to look at the laser), the client over a real WebSocket."""
    from mvsim_core.comms.foxglove_view import FoxgloveView

    path = tmp_path / "fox.world.xml"
    path.write_text(WORLD)
    world = mv.load_world(path, seed=0)
    world.sensors_on_demand = True
    laser = world.vehicles["r1"].sensors["laser1"]
    view = FoxgloveView(world, port=0)
    try:
        client = Client(view.port)
        client.wait_channel("/laser1")
        world.run(0.5)
        assert laser.last is None and laser.readers == frozenset()
        client.subscribe(1, "/laser1")
        end = time.monotonic() + DEADLINE
        while not laser.readers:  # the view looks at its channels after every step
            assert time.monotonic() < end, "the subscription never reached the view"
            world.step()
        t0 = world.time
        assert laser.readers == frozenset({"foxglove"})
        world.run(0.1)
        assert t0 < laser.last.stamp <= t0 + 0.1 + 1e-9  # the next due time
        t_ns, _ = client.next_message(1)
        assert t_ns == round(laser.last.stamp * 1e9)
        client.close()
        end = time.monotonic() + DEADLINE
        while laser.readers:
            assert time.monotonic() < end, "the view never saw the client leave"
            world.step()
        last = laser.last.stamp
        world.run(0.5)
        assert laser.last.stamp == last
    finally:
        view.close()
    assert laser.readers == frozenset()
