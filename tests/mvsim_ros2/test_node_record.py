"""``mvsim_node`` with ``record:=FILE.mcap``: while the node publishes, the same messages go into an MCAP file that
rosbags reads; each recorded scan, odometry, IMU and GNSS message equals, field for field, the one a ROS subscriber
received at the same stamp (so the recorder, which builds its own CDR without ROS, writes what the node publishes)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ros_cli_harness import Session, assert_clean_exit, cli_env, make_prefix
from ros_harness import FIRST_MESSAGE_TIMEOUT, Clock, Imu, LaserScan, NavSatFix, Odometry, Probe, qos, secs

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def node_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_prefix(tmp_path_factory.mktemp("ament") / "prefix") / "lib" / "mvsim_ros2" / "mvsim_node"


def _recorded(path: Path) -> dict[str, dict[int, Any]]:
    """topic -> {header stamp ns: decoded message} of an MCAP file (rosbags, the independent reader)."""
    from rosbags.highlevel import AnyReader

    out: dict[str, dict[int, Any]] = {}
    with AnyReader([path]) as reader:
        for conn, _t, raw in reader.messages():
            msg = reader.deserialize(raw, conn.msgtype)
            box = out.setdefault(conn.topic, {})
            st = getattr(getattr(msg, "header", None), "stamp", None)
            if st is not None:
                box[st.sec * 10**9 + st.nanosec] = msg
    return out


def _ns(stamp: Any) -> int:
    return int(stamp.sec) * 10**9 + int(stamp.nanosec)


@pytest.mark.slow
def test_recording_holds_what_the_node_publishes(node_script: Path, ros_context: Any, ros_domain: int,
                                                 tmp_path: Path) -> None:
    mcap = tmp_path / "run.mcap"
    args = [str(node_script), "--ros-args", "-p", f"world_file:={DATA / 'single.world.xml'}", "-p", "headless:=true",
            "-p", "zmq_server:=false", "-p", f"record:={mcap}"]
    node = Session(args, cli_env(ros_domain, None, tmp_path), tmp_path / "node.log")
    probe = Probe(ros_context, "record_probe")
    probe.watch = node  # type: ignore[assignment]  # a Session: alive(), proc and log() as a NodeProcess
    clock = probe.subscribe(Clock, "/clock", qos(reliable=False))
    live = {"/laser1": probe.subscribe(LaserScan, "/laser1", qos()), "/odom": probe.subscribe(Odometry, "/odom", qos()),
            "/imu1": probe.subscribe(Imu, "/imu1", qos()), "/gnss1": probe.subscribe(NavSatFix, "/gnss1", qos())}
    try:
        probe.spin_until(lambda: clock and secs(clock[-1].clock) >= 2.0 and all(live.values()),
                         FIRST_MESSAGE_TIMEOUT, "2 s of /clock and a message on every watched topic")
        node.proc.send_signal(signal.SIGINT)
        probe.watch = None
        code = node.wait(30.0, "SIGINT")
    finally:
        probe.close()
        if node.alive():
            node.kill()
    assert_clean_exit(code, node.log(), "mvsim_node")
    rec = _recorded(mcap)
    assert {"/laser1", "/odom", "/imu1", "/gnss1", "/base_pose_ground_truth", "/tf"} <= set(rec)
    for topic, msgs in live.items():
        matched = [(m, rec[topic][_ns(m.header.stamp)]) for m in msgs if _ns(m.header.stamp) in rec[topic]]
        assert len(matched) >= max(1, len(msgs) - 2), (topic, len(msgs), len(matched))
        for m, r in matched:
            assert r.header.frame_id == m.header.frame_id
            if topic == "/laser1":
                np.testing.assert_array_equal(np.asarray(r.ranges), np.asarray(m.ranges, dtype=np.float32))
                for f in ("angle_min", "angle_max", "angle_increment", "time_increment", "scan_time", "range_min",
                          "range_max"):
                    assert getattr(r, f) == pytest.approx(getattr(m, f), rel=1e-6, abs=1e-9), f
            elif topic == "/odom":
                assert r.child_frame_id == m.child_frame_id
                p, q = r.pose.pose, m.pose.pose
                assert (p.position.x, p.position.y, p.orientation.z, p.orientation.w) == pytest.approx(
                    (q.position.x, q.position.y, q.orientation.z, q.orientation.w), abs=1e-12)
                np.testing.assert_allclose(r.pose.covariance, m.pose.covariance, rtol=1e-12, atol=1e-15)
                np.testing.assert_allclose(r.twist.covariance, m.twist.covariance, rtol=1e-12, atol=1e-15)
                assert r.twist.twist.linear.x == pytest.approx(m.twist.twist.linear.x, abs=1e-12)
            elif topic == "/imu1":
                assert r.linear_acceleration.z == pytest.approx(m.linear_acceleration.z, abs=1e-12)
                assert r.angular_velocity.z == pytest.approx(m.angular_velocity.z, abs=1e-12)
                np.testing.assert_allclose(r.linear_acceleration_covariance, m.linear_acceleration_covariance)
                np.testing.assert_allclose(r.orientation_covariance, m.orientation_covariance)
            else:
                assert (r.latitude, r.longitude, r.altitude) == pytest.approx((m.latitude, m.longitude, m.altitude),
                                                                              abs=1e-12)
                assert (r.status.status, r.status.service) == (m.status.status, m.status.service)
                np.testing.assert_allclose(r.position_covariance, m.position_covariance)
                assert r.position_covariance_type == m.position_covariance_type
