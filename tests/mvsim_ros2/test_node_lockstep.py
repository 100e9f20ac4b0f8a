"""The bridge node in lockstep (simulated time advances only through ``/mvsim/step``), four vehicles: ``<V>/…``
naming and per-vehicle tf, cmd_vel distance, the watchdog, Ackermann commands, warnings, runtime parameters and the
AckermannDriveStamped type hash — deterministic whatever the machine's load.

World ``data/multi.world.xml``, all facing +x: r1 (differential, twist_ideal: follows cmd_vel exactly) at (0, 0);
car1 (Ackermann, twist_front_steer_pid) at (0, 8); car2 (Ackermann, front_steer_pid) at (0, -8); r2 (differential,
raw controller) at (-8, 0).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from ros_harness import (
    FIRST_MESSAGE_TIMEOUT,
    AckermannDriveStamped,
    Clock,
    LaserScan,
    NodeProcess,
    Odometry,
    Parameter,
    ParameterType,
    ParameterValue,
    Probe,
    SetParameters,
    TFMessage,
    Trigger,
    Twist,
    node_fixture,
    qos,
    secs,
    yaw_of,
)

DATA = Path(__file__).resolve().parent / "data"
STEP = 0.1  # s: lockstep_step
ACKERMANN_HASH = "RIHS01_48ca7612a08d3bb72744fd98b71b7cf2ea24c6ad50fa4e1aa0bbad963c90d8cf"
VEHICLES = ("r1", "car1", "car2", "r2")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def node(ros_context: Any, ros_domain: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    params = {"lockstep": True, "lockstep_step": STEP, "base_watchdog_timeout": 1.0}
    yield from node_fixture(DATA / "multi.world.xml", params, tmp_path_factory.mktemp("lockstep"), ros_domain)


@pytest.fixture(scope="module")
def probe(ros_context: Any, node: NodeProcess) -> Iterator[Probe]:
    p = Probe(ros_context, "probe_lockstep")
    p.watch = node
    p.subscribe(Clock, "/clock", qos(reliable=False, depth=10))
    for v in VEHICLES:
        p.subscribe(Odometry, f"/{v}/base_pose_ground_truth", qos(depth=500))
        p.subscribe(Odometry, f"/{v}/odom", qos(depth=500))
        p.subscribe(TFMessage, f"/{v}/tf", qos(depth=100))
    p.subscribe(LaserScan, "/r1/laser1")
    yield p
    p.close()


def step(probe: Probe, n: int = 1, before: Callable[[], None] | None = None) -> float:
    """Call ``/mvsim/step`` ``n`` times (running ``before()`` ahead of each call); the final simulated time."""
    t = math.nan
    for _ in range(n):
        if before is not None:
            before()
        ans = probe.call(Trigger, "/mvsim/step", Trigger.Request())
        assert ans.success, ans.message
        t = float(ans.message)
    return t


def gt_at(probe: Probe, vehicle: str, t: float) -> Odometry:
    box = probe.inbox[f"/{vehicle}/base_pose_ground_truth"]
    return probe.next_message(box, lambda m: abs(secs(m.header.stamp) - t) < 1e-6, 20.0,
                              f"{vehicle} ground truth at t={t:.3f}", start=0)


def test_vehicle_topics_are_namespaced(probe: Probe) -> None:
    expected = {f"/{v}/{name}" for v in VEHICLES
                for name in ("cmd_vel", "ackermann_cmd", "odom", "base_pose_ground_truth", "collision", "tf",
                             "tf_static", "chassis_markers", "chassis_polygon", "amcl_pose", "particlecloud")}
    expected.add("/r1/laser1")

    def published() -> set[str]:
        return {name for name, _ in probe.node.get_topic_names_and_types()}

    probe.spin_until(lambda: expected <= published(), FIRST_MESSAGE_TIMEOUT, "every <V>/… topic in the graph")
    names = published()
    for bare in ("/odom", "/tf_static", "/cmd_vel", "/laser1", "/base_pose_ground_truth"):
        assert bare not in names, f"{bare} must not exist with several vehicles"
    assert all(i.node_name != "mvsim" for i in probe.node.get_publishers_info_by_topic("/tf"))


def test_lockstep_advances_only_when_asked(probe: Probe) -> None:
    t0 = step(probe)
    clock = probe.next_message(probe.inbox["/clock"], lambda m: abs(secs(m.clock) - t0) < 1e-9, what="/clock",
                               start=0)
    assert secs(clock.clock) == pytest.approx(t0)
    t1 = step(probe, 3)
    assert t1 == pytest.approx(t0 + 3 * STEP, abs=1e-9)
    # without calls, the time stands still: no /clock beyond t1 and no newer odom, while we wait
    probe.next_message(probe.inbox["/clock"], lambda m: abs(secs(m.clock) - t1) < 1e-9, what="/clock at t1",
                       start=0)
    probe.spin_for(1.0)  # a window in which nothing may happen
    assert max(secs(m.clock) for m in probe.inbox["/clock"]) == pytest.approx(t1, abs=1e-9)
    newest = max(secs(m.header.stamp) for m in probe.inbox["/r1/odom"])
    assert newest <= t1 + 1e-9


def test_per_vehicle_tf_and_tf_static(probe: Probe) -> None:
    step(probe)
    for v in VEHICLES:
        msg = probe.next_message(probe.inbox[f"/{v}/tf"], what=f"/{v}/tf", start=0)
        pairs = {(tf.header.frame_id, tf.child_frame_id) for tf in msg.transforms}
        assert ("odom", "base_link") in pairs and ("map", "odom") in pairs
    box = probe.subscribe(TFMessage, "/r1/tf_static", qos(transient_local=True, depth=1))
    static = probe.next_message(box, what="/r1/tf_static", start=0)
    assert {(tf.header.frame_id, tf.child_frame_id) for tf in static.transforms} == {
        ("base_link", "base_footprint"), ("base_link", "chassis"), ("base_link", "laser1")}
    box2 = probe.subscribe(TFMessage, "/car1/tf_static", qos(transient_local=True, depth=1))
    static2 = probe.next_message(box2, what="/car1/tf_static", start=0)
    assert [(tf.header.frame_id, tf.child_frame_id) for tf in static2.transforms] == [("base_link", "base_footprint"),
                                                                                      ("base_link", "chassis")]
    scan = probe.next_message(probe.inbox["/r1/laser1"], what="/r1/laser1", start=0)
    assert scan.header.frame_id == "laser1" and len(scan.ranges) == 91


def test_cmd_vel_moves_the_robot_the_expected_distance(probe: Probe) -> None:
    pub = probe.publisher(Twist, "/r1/cmd_vel")
    probe.wait_matched(pub)
    cmd = Twist()
    cmd.linear.x = 0.5

    def send() -> None:
        pub.publish(cmd)

    t_start = step(probe, 2, before=send)  # the command is surely in effect from here on
    t_end = step(probe, 20, before=send)  # 2 s at 0.5 m/s
    a, b = gt_at(probe, "r1", t_start), gt_at(probe, "r1", t_end)
    gt_dist = math.hypot(b.pose.pose.position.x - a.pose.pose.position.x,
                         b.pose.pose.position.y - a.pose.pose.position.y)
    assert t_end - t_start == pytest.approx(2.0, abs=1e-9)
    assert gt_dist == pytest.approx(1.0, rel=0.005)
    assert b.twist.twist.linear.x == pytest.approx(0.5, abs=0.005)
    assert abs(b.pose.pose.position.y) < 0.05 and abs(yaw_of(b.pose.pose.orientation)) < 0.05
    odo = {secs(m.header.stamp): m for m in probe.inbox["/r1/odom"]}
    oa = min(odo.items(), key=lambda kv: abs(kv[0] - t_start))[1]
    ob = min(odo.items(), key=lambda kv: abs(kv[0] - t_end))[1]
    odo_dist = math.hypot(ob.pose.pose.position.x - oa.pose.pose.position.x,
                          ob.pose.pose.position.y - oa.pose.pose.position.y)
    assert odo_dist == pytest.approx(gt_dist, rel=0.06)  # odometry multipliers: σ 1 % (x), 2 % (yaw)
    assert ob.twist.twist.linear.x == pytest.approx(0.5, rel=0.06)


def test_watchdog_stops_the_robot_after_its_timeout(probe: Probe) -> None:
    pub = probe.publisher(Twist, "/r1/cmd_vel")
    probe.wait_matched(pub)
    cmd = Twist()
    cmd.linear.x = 0.5

    def send() -> None:
        pub.publish(cmd)

    t_last = step(probe, 10, before=send)  # the last command reaches the node at most one step before t_last
    t = step(probe, 5)  # t_last + 0.5 s: within the 1 s timeout, still driving
    assert t == pytest.approx(t_last + 0.5, abs=1e-9)
    assert gt_at(probe, "r1", t).twist.twist.linear.x > 0.4
    t = step(probe, 10)  # t_last + 1.5 s: stopped at t_last + 1 s (an ideal controller stops at once)
    end = gt_at(probe, "r1", t)
    assert abs(end.twist.twist.linear.x) < 1e-3
    # it drove on at 0.5 m/s until the watchdog fired 1 s after the last command, which the node applied at
    # t_last - 0.1 or t_last (before or after the last step call of the 10): so 0.45 .. 0.5 m, plus one physics step
    at_last = gt_at(probe, "r1", t_last)
    dist = end.pose.pose.position.x - at_last.pose.pose.position.x
    assert 0.45 - 1e-3 <= dist <= 0.5 + 0.0025 + 1e-3


def _drive(speed: float, steer: float) -> AckermannDriveStamped:
    m = AckermannDriveStamped()
    m.drive.speed = speed
    m.drive.steering_angle = steer
    return m


@pytest.mark.parametrize("car", ["car1", "car2"], ids=["twist_front_steer_pid", "front_steer_pid"])
def test_positive_steering_turns_an_ackermann_car_left(probe: Probe, car: str) -> None:
    pub = probe.publisher(AckermannDriveStamped, f"/{car}/ackermann_cmd")
    probe.wait_matched(pub)
    t0 = step(probe)
    start = gt_at(probe, car, t0)
    msg = _drive(2.0, 0.3)
    t1 = step(probe, 40, before=lambda: pub.publish(msg))
    end = gt_at(probe, car, t1)
    yaw0, yaw1 = yaw_of(start.pose.pose.orientation), yaw_of(end.pose.pose.orientation)
    dx = end.pose.pose.position.x - start.pose.pose.position.x
    dy = end.pose.pose.position.y - start.pose.pose.position.y
    left = -math.sin(yaw0) * dx + math.cos(yaw0) * dy  # displacement along the car's initial left
    assert math.remainder(yaw1 - yaw0, 2 * math.pi) > 0.3, "the car did not turn left (counter-clockwise)"
    assert left > 0.5
    # v·tan(δ)/L with wheelbase 2.5 m: 0.247 rad/s at 2 m/s
    assert end.twist.twist.angular.z == pytest.approx(2.0 * math.tan(0.3) / 2.5, rel=0.25)
    assert end.twist.twist.linear.x == pytest.approx(2.0, rel=0.15)
    # stop it again (the watchdog would too)
    stop = _drive(0.0, 0.0)
    step(probe, 2, before=lambda: pub.publish(stop))


def test_commands_a_vehicle_cannot_take_warn_once(probe: Probe, node: NodeProcess) -> None:
    twist_pub = probe.publisher(Twist, "/r2/cmd_vel")
    ack_pub = probe.publisher(AckermannDriveStamped, "/r2/ackermann_cmd")
    probe.wait_matched(twist_pub)
    probe.wait_matched(ack_pub)
    cmd = Twist()
    cmd.linear.x = 1.0

    def send() -> None:
        twist_pub.publish(cmd)
        ack_pub.publish(_drive(1.0, 0.2))

    t = step(probe, 5, before=send)

    def warnings() -> tuple[list[str], list[str]]:
        text = node.log()
        return (re.findall(r"WARN.*vehicle 'r2'.*does not take cmd_vel", text),
                re.findall(r"WARN.*vehicle 'r2'.*cannot take ackermann_cmd", text))

    probe.spin_until(lambda: all(warnings()), 10.0, "the two warnings about r2 in the node's log")
    twist_w, ack_w = warnings()
    assert len(twist_w) == 1 and len(ack_w) == 1, (twist_w, ack_w)
    assert "raw" in twist_w[0]
    assert abs(gt_at(probe, "r2", t).twist.twist.linear.x) < 1e-3  # ignored: r2 did not move


def test_parameters_change_at_run_time(probe: Probe) -> None:
    def set_param(name: str, value: ParameterValue) -> Any:
        req = SetParameters.Request(parameters=[Parameter(name=name, value=value)])
        return probe.call(SetParameters, "/mvsim/set_parameters", req).results[0]

    res = set_param("lockstep_step", ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=0.5))
    assert res.successful, res.reason
    t0 = step(probe)
    t1 = step(probe)
    assert t1 - t0 == pytest.approx(0.5, abs=1e-9)
    bad = set_param("realtime_factor", ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=-1.0))
    assert not bad.successful and "realtime_factor" in bad.reason
    fixed = set_param("world_file", ParameterValue(type=ParameterType.PARAMETER_STRING, string_value="x.xml"))
    assert not fixed.successful and "restart" in fixed.reason
    assert set_param("lockstep_step", ParameterValue(type=ParameterType.PARAMETER_DOUBLE,
                                                     double_value=STEP)).successful


def test_ackermann_drive_stamped_type_hash_on_the_wire(probe: Probe) -> None:
    infos = probe.spin_until(lambda: [i for i in probe.node.get_subscriptions_info_by_topic("/car1/ackermann_cmd")
                                      if i.node_name == "mvsim"], 20.0, "the node's ackermann_cmd subscription")
    h = infos[0].topic_type_hash
    assert infos[0].topic_type == "ackermann_msgs/msg/AckermannDriveStamped"
    assert f"RIHS01_{h.value.hex()}" == ACKERMANN_HASH and h.version == 1
