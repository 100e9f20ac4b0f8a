"""The bridge node in real time (realtime_factor 1), one vehicle: a separate rclpy process over DDS checks /clock,
frames, stamps, sensor contents, latched topics, type hashes, the ZMQ server beside it and the cmd_vel watchdog.

World ``data/single.world.xml``: robot r1 at (-2, 0) facing +x; a wall whose face is the plane x = 3.0 m; lidar 0.2 m
ahead of the robot origin, so its middle ray reads 3.0 − (x_robot + 0.2) m. One vehicle ⇒ no topic prefix.
One node process serves the whole module; tests that move the robot come last.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ros_harness import (
    FIRST_MESSAGE_TIMEOUT,
    Bool,
    Clock,
    Imu,
    LaserScan,
    MapMetaData,
    MarkerArray,
    NavSatFix,
    NavSatStatus,
    NodeProcess,
    OccupancyGrid,
    Odometry,
    Polygon,
    PoseArray,
    PoseWithCovarianceStamped,
    Probe,
    TFMessage,
    Twist,
    node_fixture,
    qos,
    qos_profile_sensor_data,
    secs,
    yaw_of,
)

DATA = Path(__file__).resolve().parent / "data"
WALL_X = 3.0  # m: the wall's face
LIDAR_X = 0.2  # m: lidar ahead of the robot origin
TF_PERIOD = 0.02  # s: period_ms_publish_tf default
TFMESSAGE_HASH = "RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087"

pytestmark = pytest.mark.slow


def _multiple_of(t: float, period: float) -> bool:
    k = round(t / period)
    return abs(t - k * period) < 1e-6


@pytest.fixture(scope="module")
def node(ros_context: Any, ros_domain: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    params = {"realtime_factor": 1.0, "base_watchdog_timeout": 1.0, "zmq_server": True, "zmq_port": 0}
    yield from node_fixture(DATA / "single.world.xml", params, tmp_path_factory.mktemp("rt"), ros_domain)


@pytest.fixture(scope="module")
def probe(ros_context: Any, node: NodeProcess) -> Iterator[Probe]:
    p = Probe(ros_context, "probe_realtime")
    p.watch = node
    p.subscribe(Clock, "/clock", qos(reliable=False, depth=10))
    p.subscribe(Odometry, "/odom")
    p.subscribe(Odometry, "/base_pose_ground_truth")
    p.subscribe(TFMessage, "/tf", qos(depth=100))
    p.subscribe(LaserScan, "/laser1", qos_profile_sensor_data)  # a SensorDataQoS (best effort) subscriber
    p.subscribe(Imu, "/imu1", qos_profile_sensor_data)
    p.subscribe(NavSatFix, "/gnss1")
    p.subscribe(Bool, "/collision")
    p.subscribe(PoseWithCovarianceStamped, "/amcl_pose", qos(transient_local=True, depth=1))
    p.subscribe(PoseArray, "/particlecloud")
    box = p.inbox["/odom"]
    p.spin_until(lambda: box, FIRST_MESSAGE_TIMEOUT, "the first odom message")
    yield p
    p.close()


def _gt_at(probe: Probe, t: float, timeout: float = 10.0) -> Odometry:
    box = probe.inbox["/base_pose_ground_truth"]
    return probe.next_message(box, lambda m: abs(secs(m.header.stamp) - t) < 1e-6, timeout,
                              f"ground truth stamped {t:.3f}", start=0)


# ---------------------------------------------------------------------- time
def test_clock_advances_in_real_time(probe: Probe) -> None:
    box = probe.inbox["/clock"]
    first = probe.next_message(box, what="a /clock message")
    w0, s0 = time.monotonic(), secs(first.clock)
    n0 = len(box)
    probe.spin_for(3.0)  # the measurement window
    s1 = secs(box[-1].clock)
    w1 = time.monotonic()
    ticks = [secs(m.clock) for m in box[n0 - 1:]]
    assert all(b >= a for a, b in zip(ticks, ticks[1:], strict=False)), "/clock went backwards"
    assert len(ticks) > 30, f"only {len(ticks)} /clock messages in 3 s (expected ~100 Hz)"
    ratio = (s1 - s0) / (w1 - w0)
    assert 0.5 < ratio < 1.1, f"simulated/wall = {ratio:.3f} at realtime_factor 1"


def test_odom_and_ground_truth_frames_and_stamps(probe: Probe) -> None:
    odom = probe.next_message(probe.inbox["/odom"], what="odom")
    assert (odom.header.frame_id, odom.child_frame_id) == ("odom", "base_link")
    t = secs(odom.header.stamp)
    assert t < 1000.0, "stamps must be simulated time, not wall-clock time"
    assert _multiple_of(t, TF_PERIOD)
    latest_clock = secs(probe.inbox["/clock"][-1].clock)
    assert t <= latest_clock + 0.05
    gt = _gt_at(probe, t)
    assert (gt.header.frame_id, gt.child_frame_id) == ("map", "base_link")
    assert gt.pose.pose.position.x == pytest.approx(-2.0, abs=0.01)
    assert gt.pose.pose.position.y == pytest.approx(0.0, abs=0.01)
    assert yaw_of(gt.pose.pose.orientation) == pytest.approx(0.0, abs=0.01)
    # odometry starts at 0 wherever the robot starts; at rest it stays there
    assert math.hypot(odom.pose.pose.position.x, odom.pose.pose.position.y) < 0.01
    # covariances: never all zero (Nav2, robot_localization); at rest the floor, 1e6 for z, roll, pitch
    for cov in (odom.pose.covariance, odom.twist.covariance, gt.pose.covariance):
        diag = [cov[i] for i in (0, 7, 14, 21, 28, 35)]
        assert all(v > 0 for v in diag) and sum(abs(v) for v in cov) == pytest.approx(sum(diag))
    assert [odom.pose.covariance[i] for i in (14, 21, 28)] == [1e6, 1e6, 1e6]
    assert odom.pose.covariance[0] < 1e-4 and odom.twist.covariance[0] < 1e-4
    # consecutive odom messages are one tf period apart
    nxt = probe.next_message(probe.inbox["/odom"], lambda m: secs(m.header.stamp) > t, what="the next odom")
    box = probe.inbox["/odom"]
    stamps = [secs(m.header.stamp) for m in box if secs(m.header.stamp) <= secs(nxt.header.stamp)]
    assert secs(nxt.header.stamp) - stamps[-2] == pytest.approx(TF_PERIOD, abs=1e-6)


def test_tf_and_fake_localization_agree_with_ground_truth(probe: Probe) -> None:
    box = probe.inbox["/tf"]
    msg = probe.next_message(box, lambda m: len(m.transforms) == 2, what="a /tf message")
    tfs = {(tf.header.frame_id, tf.child_frame_id): tf for tf in msg.transforms}
    assert set(tfs) == {("odom", "base_link"), ("map", "odom")}
    t = secs(msg.transforms[0].header.stamp)
    assert all(secs(tf.header.stamp) == pytest.approx(t, abs=1e-9) for tf in msg.transforms)
    gt = _gt_at(probe, t)
    # map->odom ⊕ odom->base_link must be the true pose (fake localization)
    a, b = tfs[("map", "odom")].transform, tfs[("odom", "base_link")].transform
    ya, yb = yaw_of(a.rotation), yaw_of(b.rotation)
    x = a.translation.x + math.cos(ya) * b.translation.x - math.sin(ya) * b.translation.y
    y = a.translation.y + math.sin(ya) * b.translation.x + math.cos(ya) * b.translation.y
    assert x == pytest.approx(gt.pose.pose.position.x, abs=1e-6)
    assert y == pytest.approx(gt.pose.pose.position.y, abs=1e-6)
    assert math.remainder(ya + yb - yaw_of(gt.pose.pose.orientation), 2 * math.pi) == pytest.approx(0, abs=1e-6)
    amcl = probe.next_message(probe.inbox["/amcl_pose"], what="amcl_pose", start=0)
    assert amcl.header.frame_id == "map"
    cloud = probe.next_message(probe.inbox["/particlecloud"], what="particlecloud", start=0)
    assert cloud.header.frame_id == "map" and len(cloud.poses) == 1


def test_tf_static_reaches_a_late_subscriber_in_one_message(probe: Probe) -> None:
    box = probe.subscribe(TFMessage, "/tf_static", qos(transient_local=True, depth=1), key="tf_static_late")
    msg = probe.next_message(box, what="the latched /tf_static", start=0)
    tfs = {(tf.header.frame_id, tf.child_frame_id): tf.transform for tf in msg.transforms}
    assert set(tfs) == {("base_link", "base_footprint"), ("base_link", "chassis"), ("base_link", "laser1"),
                        ("base_link", "imu1"), ("base_link", "gnss1")}
    laser = tfs[("base_link", "laser1")]
    assert (laser.translation.x, laser.translation.y, laser.translation.z) == pytest.approx((0.2, 0.0, 0.3))
    assert laser.rotation.w == pytest.approx(1.0)
    assert tfs[("base_link", "gnss1")].translation.z == pytest.approx(0.5)


# ---------------------------------------------------------------------- sensors
def test_scan_geometry_stamps_and_wall_distance(probe: Probe) -> None:
    scan = probe.next_message(probe.inbox["/laser1"], what="a LaserScan")
    assert scan.header.frame_id == "laser1"
    assert len(scan.ranges) == 181
    assert scan.angle_min == pytest.approx(-math.pi / 2, abs=1e-6)
    assert scan.angle_max == pytest.approx(math.pi / 2, abs=1e-6)
    assert scan.angle_increment == pytest.approx(math.pi / 180, abs=1e-7)
    assert scan.angle_min + 180 * scan.angle_increment == pytest.approx(scan.angle_max, abs=1e-5)
    assert scan.range_max == pytest.approx(10.0) and scan.range_min == pytest.approx(0.01)  # the sensor's min_range
    assert scan.scan_time == pytest.approx(0.1)
    t = secs(scan.header.stamp)
    assert _multiple_of(t, 0.1), f"scan stamp {t} is not a multiple of the sensor period"
    gt = _gt_at(probe, t)  # the robot's true pose at the scan's time
    x, yaw = gt.pose.pose.position.x, yaw_of(gt.pose.pose.orientation)
    expected = (WALL_X - (x + LIDAR_X * math.cos(yaw))) / math.cos(yaw)
    assert expected == pytest.approx(4.8, abs=0.02)
    assert scan.ranges[90] == pytest.approx(expected, abs=0.01)  # σ = 2 mm range noise
    # a ray 20° to the left hits the wall too (at y = 1.75 m < 2 m), farther by 1/cos
    assert scan.ranges[90 + 20] == pytest.approx(expected / math.cos(math.radians(20)), abs=0.02)


def test_imu_covariances_and_gravity(probe: Probe) -> None:
    imu = probe.next_message(probe.inbox["/imu1"], what="an Imu message")
    assert imu.header.frame_id == "imu1"
    assert _multiple_of(secs(imu.header.stamp), 0.05)
    assert imu.linear_acceleration.z == pytest.approx(9.81, abs=0.2)
    assert list(imu.angular_velocity_covariance) == pytest.approx([4e-8, 0, 0, 0, 4e-8, 0, 0, 0, 4e-8])
    assert list(imu.linear_acceleration_covariance) == pytest.approx([0.017 ** 2, 0, 0, 0, 0.017 ** 2, 0, 0, 0,
                                                                      0.017 ** 2])
    assert imu.orientation_covariance[0] == -1.0  # REP 145: no orientation measured


def test_gnss_fix_with_status_and_covariance(probe: Probe) -> None:
    fix = probe.next_message(probe.inbox["/gnss1"], timeout=20.0, what="a NavSatFix", start=0)
    assert fix.header.frame_id == "gnss1"
    assert _multiple_of(secs(fix.header.stamp), 0.5)
    assert fix.status.status == NavSatStatus.STATUS_FIX
    assert fix.status.service == NavSatStatus.SERVICE_GPS
    assert fix.latitude == pytest.approx(36.72, abs=1e-4)  # the robot is 2 m west of the reference; σh 0.5 m
    assert fix.longitude == pytest.approx(-4.42, abs=1e-4)
    assert fix.altitude == pytest.approx(50.5, abs=6.0)
    assert fix.position_covariance_type == NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
    assert list(fix.position_covariance) == pytest.approx([0.25, 0, 0, 0, 0.25, 0, 0, 0, 1.0])


# ---------------------------------------------------------------------- latched topics
def test_simul_map_reaches_a_late_subscriber(probe: Probe) -> None:
    grid_box = probe.subscribe(OccupancyGrid, "/simul_map", qos(transient_local=True, depth=1))
    meta_box = probe.subscribe(MapMetaData, "/simul_map_metadata", qos(transient_local=True, depth=1))
    grid = probe.next_message(grid_box, what="the latched simul_map", start=0)
    assert grid.header.frame_id == "map"
    assert (grid.info.width, grid.info.height) == (80, 60)
    assert grid.info.resolution == pytest.approx(0.1)
    assert (grid.info.origin.position.x, grid.info.origin.position.y) == pytest.approx((-4.0, -3.0))
    data = list(grid.data)
    assert len(data) == 80 * 60
    assert data[0] == 100 and data[79] == 100 and data[30 * 80 + 40] == 0  # border occupied, centre free
    assert sum(1 for v in data if v == 100) == 2 * 80 + 2 * 58
    meta = probe.next_message(meta_box, what="the latched simul_map_metadata", start=0)
    assert (meta.width, meta.height) == (80, 60)


def test_chassis_polygon_markers_and_collision(probe: Probe) -> None:
    poly_box = probe.subscribe(Polygon, "/chassis_polygon", qos(transient_local=True, depth=1))
    mk_box = probe.subscribe(MarkerArray, "/chassis_markers", qos(transient_local=True, depth=5))
    poly = probe.next_message(poly_box, what="chassis_polygon", start=0)
    xy = [v for p in poly.points for v in (p.x, p.y)]
    assert xy == pytest.approx([-0.15, -0.30, 0.30, -0.30, 0.35, -0.20, 0.35, 0.20, 0.30, 0.30, -0.15, 0.30])
    markers = probe.next_message(mk_box, what="chassis_markers", start=0).markers
    assert [m.ns for m in markers] == ["mvsim.chassis_shape", "mvsim.chassis_shape.wheel1",
                                       "mvsim.chassis_shape.wheel2"]
    assert all(m.header.frame_id == "base_link" and m.frame_locked for m in markers)  # RViz moves them with r1
    assert len(markers[0].points) == 7  # closed outline
    col = probe.next_message(probe.inbox["/collision"], what="a collision flag")
    assert col.data is False


def test_tf_message_type_hash_on_the_wire(probe: Probe) -> None:
    infos = probe.spin_until(lambda: [i for i in probe.node.get_publishers_info_by_topic("/tf")
                                      if i.node_name == "mvsim"], 20.0, "the node's /tf publisher in the graph")
    h = infos[0].topic_type_hash
    assert infos[0].topic_type == "tf2_msgs/msg/TFMessage"
    assert f"RIHS01_{h.value.hex()}" == TFMESSAGE_HASH and h.version == 1


def test_zmq_server_serves_the_same_simulation(probe: Probe, node: NodeProcess) -> None:
    comms = pytest.importorskip("mvsim_core.comms", reason="the ZMQ interface is not in this build")
    from mvsim_core.comms.proto import SrvGetPose_pb2, SrvGetPoseAnswer_pb2

    m = probe.spin_until(lambda: re.search(r"ZMQ: world served as node 'World' on tcp://([\d.]+):(\d+)", node.log()),
                         20.0, "the ZMQ announcement in the node's log")
    client = comms.Client("ros_test_client", m.group(1), int(m.group(2)), timeout=10.0).connect(register=False)
    try:
        ans = client.call_service("get_pose", SrvGetPose_pb2.SrvGetPose(objectId="r1"),
                                  SrvGetPoseAnswer_pb2.SrvGetPoseAnswer)
    finally:
        client.shutdown()
    assert ans.success
    gt = probe.inbox["/base_pose_ground_truth"][-1]
    assert ans.pose.x == pytest.approx(gt.pose.pose.position.x, abs=0.02)
    assert ans.pose.y == pytest.approx(gt.pose.pose.position.y, abs=0.02)


# ---------------------------------------------------------------------- commands (move the robot: keep last)
def test_cmd_vel_in_real_time_then_watchdog_stops(probe: Probe) -> None:
    pub = probe.publisher(Twist, "/cmd_vel")
    probe.wait_matched(pub)
    gt_box = probe.inbox["/base_pose_ground_truth"]
    cmd = Twist()
    cmd.linear.x = 0.4
    last_sent = [0.0]

    def drive() -> Any:  # publish at ~20 Hz (wall) until the robot has driven at speed for a while
        now = time.monotonic()
        if now - last_sent[0] >= 0.05:
            pub.publish(cmd)
            last_sent[0] = now
        fast = [m for m in gt_box if m.twist.twist.linear.x > 0.38]
        return fast and secs(gt_box[-1].header.stamp) - secs(fast[0].header.stamp) > 1.0

    probe.spin_until(drive, 40.0, "the robot driving at 0.4 m/s")
    # steady state: the distance between two ground-truth samples 0.5 s apart is v·Δt
    end = gt_box[-1]
    t1 = secs(end.header.stamp)
    start = next(m for m in gt_box if abs(secs(m.header.stamp) - (t1 - 0.5)) < 1e-6)
    dist = end.pose.pose.position.x - start.pose.pose.position.x
    assert dist == pytest.approx(0.2, rel=0.05)
    # stop publishing: the watchdog (1 s of simulated time) stops the robot
    t_stop = secs(probe.inbox["/clock"][-1].clock)
    stopped = probe.next_message(gt_box, lambda m: secs(m.header.stamp) > t_stop + 1.0 + 1.5, timeout=30.0,
                                 what="ground truth 2.5 s after the last command")
    assert abs(stopped.twist.twist.linear.x) < 0.02
    still_moving = [m for m in gt_box if t_stop + 0.3 < secs(m.header.stamp) < t_stop + 0.5]
    assert still_moving and all(m.twist.twist.linear.x > 0.3 for m in still_moving), \
        "the watchdog stopped the robot before its timeout"
