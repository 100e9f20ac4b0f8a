"""`mvsim launch` with its ZMQ interface, used from other processes: services, topics, the command-line tools, and
byte-for-byte wire compatibility (frames built and decoded by hand, without generated classes).

Timing: the simulator runs at real-time factor 1 on a possibly busy machine, so rates are checked on the messages'
simulated-time stamps (exact), and arrival rates only loosely. Readiness is awaited by polling, never by sleeping.
"""

from __future__ import annotations

import math
import os
import queue
import re
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import zmq

from mvsim_core.comms import Client, CommsError
from mvsim_core.comms.errors import ServiceError
from mvsim_core.comms.proto import (
    ObservationLidar2D_pb2,
    SrvGetPose_pb2,
    SrvGetPoseAnswer_pb2,
    SrvSetControllerTwist_pb2,
    SrvSetControllerTwistAnswer_pb2,
    SrvSetPose_pb2,
    SrvSetPoseAnswer_pb2,
    SrvShutdown_pb2,
    TimeStampedPose_pb2,
)

REPO = Path(__file__).resolve().parents[2]
WORLD = REPO / "tests" / "mvsim_core" / "comms" / "data" / "comms.world.xml"
READY_S = 300.0  # the first steps may compile numba kernels on a cold cache


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict[str, str]:
    return {**os.environ, "MVSIM_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}


def mvsim(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mvsim_core.cli", *args], capture_output=True, text=True, cwd=REPO,
                          env=_env(), timeout=timeout)


def spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "mvsim_core.cli", *args], cwd=REPO, env=_env(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_ready(proc: subprocess.Popen, port: int, timeout: float = READY_S) -> None:
    """Poll until the World answers get_pose (its first steps are done)."""
    end = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"mvsim exited with {proc.returncode}:\n{proc.stderr.read()}")
        c = Client("ready-probe", port=port, timeout=2.0)
        try:
            c.connect(register=False)
            if c.service_info("get_pose").success:
                c.timeout = max(5.0, end - time.monotonic())
                if c.call_service("get_pose", SrvGetPose_pb2.SrvGetPose(objectId="r1")).success:
                    return
        except CommsError:
            pass
        finally:
            c.shutdown()
        assert time.monotonic() < end, "mvsim launch did not become ready"
        time.sleep(0.2)


def stop(proc: subprocess.Popen, sig: int = signal.SIGINT, timeout: float = 60) -> tuple[str, str]:
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"mvsim did not stop within {timeout} s on signal {sig}:\n{err}") from None


@pytest.fixture(scope="module")
def sim():
    """`mvsim launch` of the test world on a free port, real-time factor 1; stopped with Ctrl-C (SIGINT)."""
    port = _free_port()
    proc = spawn("launch", str(WORLD), "--headless", "--port", str(port))
    try:
        wait_ready(proc, port)
        yield port
    finally:
        out, err = stop(proc)
    assert proc.returncode == 0, err
    assert f"ZMQ server listening on tcp://127.0.0.1:{port}" in err
    assert "Traceback" not in err
    assert re.search(r"sim time +\d+\.\d+ s \| real-time factor +\d+\.\d+ \| vehicles 2$", out.strip().splitlines()[-1])


@pytest.fixture
def client(sim):
    c = Client("test-client", port=sim, timeout=60.0).connect()
    yield c
    c.shutdown()


def _get(c, name):
    return c.call_service("get_pose", SrvGetPose_pb2.SrvGetPose(objectId=name), SrvGetPoseAnswer_pb2.SrvGetPoseAnswer)


def _set(c, name, x, y, yaw, relative=False):
    req = SrvSetPose_pb2.SrvSetPose(objectId=name, relativeIncrement=relative)
    req.pose.x, req.pose.y, req.pose.z, req.pose.yaw, req.pose.pitch, req.pose.roll = x, y, 0.0, yaw, 0.0, 0.0
    return c.call_service("set_pose", req, SrvSetPoseAnswer_pb2.SrvSetPoseAnswer)


def _twist(c, name, vx, wz):
    req = SrvSetControllerTwist_pb2.SrvSetControllerTwist(objectId=name)
    t = req.twistSetPoint
    t.vx, t.vy, t.vz, t.wx, t.wy, t.wz = vx, 0.0, 0.0, 0.0, 0.0, wz
    return c.call_service("set_controller_twist", req, SrvSetControllerTwistAnswer_pb2.SrvSetControllerTwistAnswer)


def _collect(c, topic, n, timeout=120.0, decode=True):
    """n messages of ``topic``: (arrival monotonic s, message)."""
    q: queue.Queue = queue.Queue()
    c.subscribe(topic, lambda t, p: q.put((time.monotonic(), t, p)))
    out = []
    end = time.monotonic() + timeout
    while len(out) < n:
        try:
            t, type_name, payload = q.get(timeout=max(0.01, end - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"only {len(out)} of {n} messages on {topic} in {timeout} s") from None
        out.append((t, Client.decode(type_name, payload) if decode else (type_name, payload)))
    return out


# ---------------------------------------------------------------------- services across processes
def test_get_pose(client):
    box = _get(client, "box1")
    assert (box.success, box.pose.x, box.pose.y, box.pose.yaw) == (True, 5.0, 0.0, 0.0)
    r2 = _get(client, "r2")
    assert (r2.pose.x, r2.pose.y) == (0.0, 5.0) and r2.pose.yaw == pytest.approx(math.pi / 2)
    assert (r2.twist.vx, r2.twist.wz) == (0.0, 0.0) and not r2.objectIsInCollision
    ghost = _get(client, "ghost")
    assert (ghost.success, ghost.errorMessage) == (False, "objectId not found")


def test_set_controller_twist_moves_the_robot_the_expected_distance(client):
    """0.5 m/s forward, then 0.5 rad/s on the spot: displacement per simulated second from the pose topic stamps."""
    assert _set(client, "r1", -10.0, 0.0, 0.0).success
    assert _twist(client, "r1", 0.5, 0.0).success
    poses = [m for _, m in _collect(client, "/r1/pose", 25)]
    assert all(isinstance(m, TimeStampedPose_pb2.TimeStampedPose) and m.objectId == "r1" for m in poses)
    moving = [m for m in poses if m.pose.x > -9.99]
    assert len(moving) >= 10
    dt = moving[-1].unixTimestamp - moving[0].unixTimestamp  # simulated seconds
    dx = moving[-1].pose.x - moving[0].pose.x
    assert dt == pytest.approx(0.1 * (len(moving) - 1), abs=1e-6)
    assert dx == pytest.approx(0.5 * dt, rel=0.01)
    assert max(abs(m.pose.y) for m in moving) < 1e-3
    assert _get(client, "r1").twist.vx == pytest.approx(0.5, abs=1e-6)

    assert _twist(client, "r1", 0.0, 0.5).success
    spin = [m for _, m in _collect(client, "/r1/pose", 10)][3:]  # a few periods after the command
    yaws = np.unwrap([m.pose.yaw for m in spin])
    rate = (yaws[-1] - yaws[0]) / (spin[-1].unixTimestamp - spin[0].unixTimestamp)
    assert rate == pytest.approx(0.5, rel=0.01)
    assert _twist(client, "r1", 0.0, 0.0).success
    bad = _twist(client, "r2", 1.0, 0.0)
    assert (bad.success, bad.errorMessage) == (False, "objectId vehicle controller did not accept the twist command")


def test_set_pose_teleports(client):
    assert _twist(client, "r1", 0.0, 0.0).success
    ans = _set(client, "r1", 2.0, 3.0, 1.0)
    assert ans.success
    p = _get(client, "r1").pose
    assert (p.x, p.y, p.yaw) == pytest.approx((2.0, 3.0, 1.0), abs=1e-6)
    ans = _set(client, "r1", 1.0, 0.0, 0.5, relative=True)
    g = ans.objectGlobalPose
    assert (g.x, g.y, g.yaw) == pytest.approx((2.0 + math.cos(1.0), 3.0 + math.sin(1.0), 1.5), abs=1e-6)
    p = _get(client, "r1").pose
    assert (p.x, p.y, p.yaw) == pytest.approx((g.x, g.y, g.yaw), abs=1e-6)
    assert _set(client, "r1", -10.0, 0.0, 0.0).success


def test_objects_spawned_from_another_process_are_seen_and_removed(client):
    """``spawn_xml_objects`` into `mvsim launch`: r1's lidar (0.2 m ahead of r1, stopped at x = -10 facing +x) reads
    the cube's face (x = 0) at 9.8 m instead of box1's (x = 4.5) at 14.3 m, until ``remove_spawned_objects``; bad XML
    answers why and changes nothing."""
    assert _twist(client, "r1", 0.0, 0.0).success
    assert _set(client, "r1", -10.0, 0.0, 0.0).success
    with pytest.raises(ServiceError, match=r"failed: object 0: .*<spawn request>:1: start tag <block> is never "
                                           r"finished; add '>'$"):
        client.spawn_object("<block", "cube")
    cube = ("<block><static>true</static><shape><pt>0 -0.5</pt><pt>0.3 -0.5</pt><pt>0.3 0.5</pt><pt>0 0.5</pt>"
            "</shape></block>")
    assert client.spawn_object(cube, "cube", (0.0, 0.0, 0.0)) == "cube"
    c = _get(client, "cube")
    assert (c.success, c.pose.x, c.pose.y) == (True, 0.0, 0.0)
    scan = _collect(client, "/r1/laser1_scan", 2)[-1][1]
    assert scan.scanRanges[90] == pytest.approx(9.8, abs=0.02)
    assert client.remove_spawned_objects() == ["cube"]
    assert not _get(client, "cube").success
    scan = _collect(client, "/r1/laser1_scan", 2)[-1][1]
    assert scan.scanRanges[90] == pytest.approx(14.3, abs=0.02)


# ---------------------------------------------------------------------- topics across processes
def test_lidar_scans_arrive_at_the_configured_rate(client, capsys):
    msgs = _collect(client, "/r1/laser1_scan", 31)
    scans = [m for _, m in msgs]
    assert all(isinstance(s, ObservationLidar2D_pb2.ObservationLidar2D) for s in scans)
    assert {s.sourceObjectId for s in scans} == {"laser1"}
    assert {len(s.scanRanges) for s in scans} == {181}
    stamps = np.array([s.unixTimestamp for s in scans])
    gaps = np.diff(stamps)
    np.testing.assert_allclose(gaps, 0.1, atol=1e-5)  # every scan, none lost, 0.1 simulated s apart
    stamp_rate = (len(stamps) - 1) / (stamps[-1] - stamps[0])
    assert stamp_rate == pytest.approx(10.0, rel=0.10)
    arrivals = np.array([t for t, _ in msgs])
    wall_rate = (len(arrivals) - 1) / (arrivals[-1] - arrivals[0])
    assert 3.0 < wall_rate < 12.5  # real-time pacing: never faster than 1x; slower only on a starved machine
    with capsys.disabled():
        print(f"\n2D lidar topic: {stamp_rate:.4f} Hz by stamps, {wall_rate:.3f} Hz by arrival (configured 10 Hz)")


def test_service_round_trip_latency(client, capsys):
    lat = []
    for _ in range(300):
        t = time.perf_counter()
        _get(client, "box1")
        lat.append(time.perf_counter() - t)
    med, p99 = np.median(lat) * 1e3, np.percentile(lat, 99) * 1e3
    assert med < 20.0  # the goal (< 1 ms) is measured by benchmarks/bench_comms.py; here: no pathological waits
    with capsys.disabled():
        print(f"\nget_pose round trip across processes: median {med:.3f} ms, p99 {p99:.3f} ms")


# ---------------------------------------------------------------------- the command-line tools
def test_mvsim_node_list(sim):
    r = mvsim("node", "list", "--port", str(sim))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "World\n"


def test_mvsim_topic_list(sim):
    r = mvsim("topic", "list", "--port", str(sim))
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("/r1/gnss1           mvsim_core_msgs.ObservationGNSS\n"
                        "/r1/imu1            mvsim_core_msgs.ObservationIMU\n"
                        "/r1/laser1_scan     mvsim_msgs.ObservationLidar2D\n"
                        "/r1/pose            mvsim_msgs.TimeStampedPose\n"
                        "/r1/relative_poses  mvsim_msgs.TimeStampedPose\n")
    r = mvsim("topic", "list", "--details", "--port", str(sim))
    lines = r.stdout.splitlines()
    assert lines[0] == "/r1/gnss1           mvsim_core_msgs.ObservationGNSS"
    assert re.fullmatch(r"    publisher: World at tcp://127\.0\.0\.1:\d+", lines[1])
    assert len(lines) == 10


def test_mvsim_topic_echo(sim):
    r = mvsim("topic", "echo", "/r1/laser1_scan", "-n", "2", "--duration", "100", "--port", str(sim))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    heads = re.findall(r"^--- #(\d) /r1/laser1_scan \[mvsim_msgs.ObservationLidar2D\] (\d+) bytes$", out, re.M)
    assert [h[0] for h in heads] == ["1", "2"]
    assert int(heads[0][1]) > 181 * 5
    assert out.count('sourceObjectId: "laser1"') == 2
    assert out.count("aperture: 3.1415927\n") == 2
    assert out.count("ccw: true\n") == 2
    assert out.count("maxRange: 20\n") == 2
    assert len(re.findall(r"^scanRanges: \[[^\]]*, \.\.\.\] \(181 values\)$", out, re.M)) == 2
    assert "sensorPose:\n  x: 0.2\n  y: 0.0\n  z: 0.3" in out
    stamps = [float(x) for x in re.findall(r"^unixTimestamp: (\S+)$", out, re.M)]
    assert stamps[1] - stamps[0] == pytest.approx(0.1, abs=1e-5)


def test_mvsim_topic_echo_nothing_in_time(sim):
    r = mvsim("topic", "echo", "/nobody/publishes", "--duration", "0.5", "--port", str(sim))
    assert r.returncode == 1
    assert "topic '/nobody/publishes' has no publisher yet; waiting for one" in r.stderr
    assert "no message on '/nobody/publishes' within 0.5 s" in r.stderr


def test_mvsim_topic_hz(sim):
    r = mvsim("topic", "hz", "/r1/imu1", "--duration", "4", "--port", str(sim))
    assert r.returncode == 0, r.stderr
    last = r.stdout.strip().splitlines()[-1]
    m = re.fullmatch(r"average: /r1/imu1: (\S+) Hz \(message stamps\) \| (\S+) Hz \(arrival\) \| (\d+) messages", last)
    assert m, last
    assert float(m.group(1)) == pytest.approx(50.0, rel=0.10)  # sensor_period 0.02 s
    assert int(m.group(3)) >= 20


def test_mvsim_topic_pub(client, sim):
    q: queue.Queue = queue.Queue()
    client.subscribe("/test/cmd", lambda t, p: q.put((t, p)))
    text = 'unixTimestamp: 1.5 objectId: "r9" pose { x: 1 y: -2 z: 0 yaw: 0.25 pitch: 0 roll: 0 }'
    r = mvsim("topic", "pub", "/test/cmd", "mvsim_msgs.TimeStampedPose", text, "--count", "3", "--rate", "20",
              "--port", str(sim))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "published #3 on /test/cmd [mvsim_msgs.TimeStampedPose]"
    got = [q.get(timeout=30) for _ in range(3)]
    for type_name, payload in got:
        m = TimeStampedPose_pb2.TimeStampedPose.FromString(payload)
        assert type_name == "mvsim_msgs.TimeStampedPose"
        assert (m.unixTimestamp, m.objectId, m.pose.x, m.pose.y, m.pose.yaw) == (1.5, "r9", 1.0, -2.0, 0.25)
    bad = mvsim("topic", "pub", "/test/cmd", "mvsim_msgs.TimeStampedPose", "objectId: 3", "--port", str(sim))
    assert bad.returncode == 2
    assert bad.stderr.startswith("cannot read the fields of mvsim_msgs.TimeStampedPose from 'objectId: 3'")
    missing = mvsim("topic", "pub", "/t", "mvsim_msgs.Pose", "x: 1", "--port", str(sim))
    assert missing.returncode == 2
    assert missing.stderr == ("mvsim_msgs.Pose needs the required field(s) y, z, yaw, pitch, roll; e.g. "
                              "'x: 0 y: 0 z: 0 yaw: 0 pitch: 0 roll: 0'\n")
    unknown = mvsim("topic", "pub", "/t", "mvsim_msgs.Nope", "", "--port", str(sim))
    assert unknown.returncode == 2 and unknown.stderr.startswith("unknown message type 'mvsim_msgs.Nope'; known types:")


def test_mvsim_service_call(sim):
    r = mvsim("service", "call", "get_pose", "mvsim_msgs.SrvGetPose", 'objectId: "box1"', "--port", str(sim))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("[mvsim_msgs.SrvGetPoseAnswer]\nsuccess: true\npose:\n  x: 5.0\n  y: 0.0\n")
    r = mvsim("service", "call", "teleport", "mvsim_msgs.SrvGetPose", 'objectId: "box1"', "--port", str(sim))
    assert r.returncode == 2
    assert r.stderr == ("Error requesting information about service `teleport`: Could not find service "
                        "`teleport`\n")


def test_tools_without_a_server_fail_clearly():
    port = _free_port()
    r = mvsim("node", "list", "--port", str(port), "--timeout", "0.5")
    assert r.returncode == 2
    assert r.stderr == (f"no answer from the MVSim server at tcp://127.0.0.1:{port} within 0.5 s; is the simulator "
                        f"(mvsim launch) or `mvsim server` running, and on this port?\n")
    assert "Traceback" not in r.stderr


# ---------------------------------------------------------------------- wire compatibility, by hand
def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field_bytes(number: int, data: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _frame(type_name: str, payload: bytes) -> bytes:
    name = type_name.encode()
    return struct.pack("<I", len(name)) + name + struct.pack("<I", len(payload)) + payload


def _unframe(frame: bytes) -> tuple[str, bytes]:
    (n1,) = struct.unpack_from("<I", frame, 0)
    name = frame[4:4 + n1].decode()
    (n2,) = struct.unpack_from("<I", frame, 4 + n1)
    payload = frame[8 + n1:]
    assert len(payload) == n2
    return name, payload


def _fields(buf: bytes) -> dict[int, list]:
    """A tiny protobuf decoder: field number -> values (varint ints, 64-bit doubles, 32-bit raw, bytes)."""
    out: dict[int, list] = {}
    i = 0
    while i < len(buf):
        key, i = _read_varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _read_varint(buf, i)
        elif wire == 1:
            value = struct.unpack_from("<d", buf, i)[0]
            i += 8
        elif wire == 2:
            n, i = _read_varint(buf, i)
            value = buf[i:i + n]
            i += n
        elif wire == 5:
            value = buf[i:i + 4]
            i += 4
        else:
            raise AssertionError(f"unexpected wire type {wire}")
        out.setdefault(number, []).append(value)
    return out


def _read_varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def test_wire_compatibility_by_hand(sim):
    """Service discovery (GetServiceInfoRequest) and a CallService of get_pose, bytes written and read by hand."""
    ctx = zmq.Context()
    try:
        srv = ctx.socket(zmq.REQ)
        srv.setsockopt(zmq.LINGER, 0)
        srv.connect(f"tcp://127.0.0.1:{sim}")
        request = _frame("mvsim_msgs.GetServiceInfoRequest", b"\x0a\x08get_pose")
        assert request == (b"\x20\x00\x00\x00mvsim_msgs.GetServiceInfoRequest"
                           b"\x0a\x00\x00\x00\x0a\x08get_pose")
        srv.send(request)
        assert srv.poll(30000)
        type_name, payload = _unframe(srv.recv())
        assert type_name == "mvsim_msgs.GetServiceInfoAnswer"
        f = _fields(payload)
        assert f[1] == [1]  # success
        endpoint = f[3][0].decode()
        assert re.fullmatch(r"tcp://127\.0\.0\.1:\d+", endpoint)
        assert f[4] == [b"World"]  # serviceNodeName
        assert 2 not in f

        svc = ctx.socket(zmq.REQ)
        svc.setsockopt(zmq.LINGER, 0)
        svc.connect(endpoint)
        get_pose = _field_bytes(1, b"box1")  # SrvGetPose{objectId}
        call = _field_bytes(1, b"get_pose") + _field_bytes(2, get_pose)  # CallService{serviceName, serializedInput}
        svc.send(_frame("mvsim_msgs.CallService", call))
        assert svc.poll(30000)
        type_name, payload = _unframe(svc.recv())
        assert type_name == "mvsim_msgs.SrvGetPoseAnswer"
        f = _fields(payload)
        assert f[1] == [1]  # success
        assert f[4] == [0]  # objectIsInCollision
        pose = _fields(f[3][0])
        assert [pose[k][0] for k in range(1, 7)] == [5.0, 0.0, 0.0, 0.0, 0.0, 0.0]  # x y z yaw pitch roll
        twist = _fields(f[5][0])
        assert [twist[k][0] for k in range(1, 7)] == [0.0] * 6
        # an unknown service name at the provider: a GenericAnswer with upstream's text
        svc.send(_frame("mvsim_msgs.CallService", _field_bytes(1, b"teleport") + _field_bytes(2, b"")))
        assert svc.poll(30000)
        type_name, payload = _unframe(svc.recv())
        assert type_name == "mvsim_msgs.GenericAnswer"
        f = _fields(payload)
        assert f[1] == [0] and f[2] == [b"Requested unknown service `teleport`"]
        srv.close()
        svc.close()
    finally:
        ctx.term()


# ---------------------------------------------------------------------- stopping, ports, binding
def test_shutdown_service_stops_launch():
    port = _free_port()
    proc = spawn("launch", str(WORLD), "--headless", "--port", str(port), "--realtime-factor", "2")
    try:
        wait_ready(proc, port)
        with Client("stopper", port=port, timeout=60.0) as c:
            ans = c.call_service("shutdown", SrvShutdown_pb2.SrvShutdown())
            assert ans.accepted
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            stop(proc)
    assert proc.returncode == 0, err
    assert err.rstrip().endswith("mvsim: shutdown requested by a client")
    r = mvsim("node", "list", "--port", str(port), "--timeout", "0.5")
    assert r.returncode == 2 and "no answer from the MVSim server" in r.stderr  # the server went with it


def test_launch_joins_a_running_server_and_sigterm_stops_both():
    port = _free_port()
    server = spawn("server", "--port", str(port))
    sim = None
    try:
        assert server.stdout.readline() == f"mvsim server: listening on tcp://127.0.0.1:{port}; Ctrl-C to stop\n"
        sim = spawn("launch", str(WORLD), "--headless", "--join", f"tcp://127.0.0.1:{port}")
        wait_ready(sim, port)
        assert mvsim("node", "list", "--port", str(port)).stdout == "World\n"
        r = mvsim("launch", str(WORLD), "--headless", "--join", str(port))  # one world per server
        assert (r.returncode, r.stderr) == (2, f"--join {port}: that server already serves a world (node 'World'); "
                                               f"leave --join out to start this simulation's own server\n")
        out, err = stop(sim, signal.SIGTERM)
        assert sim.returncode == 0, err
        assert f"joining the MVSim server already running on tcp://127.0.0.1:{port}" in err
        assert mvsim("node", "list", "--port", str(port)).stdout == ""  # World unregistered on the way out
    finally:
        if sim is not None and sim.poll() is None:
            stop(sim)
        out, err = stop(server, signal.SIGTERM)
    assert server.returncode == 0, err
    assert out.startswith("mvsim server: stopped after")


def test_launch_on_a_port_taken_by_something_else():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = mvsim("launch", str(WORLD), "--headless", "--port", str(port), "--duration", "1", timeout=300)
    assert (r.returncode, r.stderr) == (2, (
        f"cannot listen on tcp://127.0.0.1:{port}: Address already in use (another simulation or MVSim server?); "
        f"choose another --port, or leave --port out to serve on a free one\n"))


def test_bind_elsewhere_is_said_loudly_and_works():
    port = _free_port()
    proc = spawn("launch", str(WORLD), "--headless", "--port", str(port), "--bind", "0.0.0.0")
    try:
        wait_ready(proc, port)
        r = mvsim("topic", "list", "--details", "--port", str(port))
        assert re.search(r"^    publisher: World at tcp://0\.0\.0\.0:\d+$", r.stdout, re.M), r.stdout
        with Client("remote-ish", port=port, timeout=60.0) as c:  # endpoints on 0.0.0.0 are reached via the server host
            assert _get(c, "box1").pose.x == 5.0
            assert len(_collect(c, "/r1/imu1", 3)) == 3
    finally:
        out, err = stop(proc)
    assert proc.returncode == 0, err
    assert (f"mvsim: WARNING: the ZMQ server listens on tcp://0.0.0.0:{port}, reachable from other machines: anyone "
            f"who can reach this port can read the sensors, move or teleport the vehicles and shut the simulation "
            f"down\n") in err


def test_bad_port_is_a_user_error():
    r = mvsim("server", "--port", "70000")
    assert (r.returncode, r.stderr) == (2, "--port must be in 0..65535 (got 70000)\n")
