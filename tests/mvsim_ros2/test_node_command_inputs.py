"""Commands into the node across processes (rclpy over DDS), in lockstep so that every number is deterministic:
cmd_vel as Twist and as TwistStamped (``cmd_vel_type`` auto follows the publishers' type), and NaN, ±inf, 1e9 and
±1e30 in every field of Twist, TwistStamped and AckermannDriveStamped — the node keeps running, the poses stay finite,
the last good command stays in force, 1e9 and 1e30 are clamped to ``max_linear_speed`` / ``max_angular_speed``, and
a vehicle nobody touches drives on exactly as commanded. A vehicle that blows up by itself (``wreck``) is reset and
logged as an error, and the node goes on.

World ``data/commands.world.xml``: bot1 (differential, twist_pid) at (0, 0); bot2 (differential, twist_ideal) at
(0, 6), commanded once at 0.3 m/s; car1 (Ackermann, twist_front_steer_pid) at (0, -10). Watchdog off, so that a
command stays in force until the next good one. Tests run in file order on one node.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from geometry_msgs.msg import TwistStamped  # noqa: E402  (after ros_harness: it skips without ROS)
from ros_harness import (
    FIRST_MESSAGE_TIMEOUT,
    AckermannDriveStamped,
    Clock,
    NodeProcess,
    Odometry,
    Probe,
    Trigger,
    Twist,
    node_fixture,
    qos,
    secs,
    yaw_of,
)

DATA = Path(__file__).resolve().parent / "data"
STEP = 0.05  # s: lockstep_step, so one message per step is 20 Hz of simulated time
MAX_LINEAR, MAX_ANGULAR = 2.0, 3.0  # m/s, rad/s: the node's max_linear_speed / max_angular_speed
BOT2_SPEED = 0.3  # m/s
BAD = (math.nan, math.inf, -math.inf)
HUGE = (1e9, 1e30, -1e30)
TWIST_FIELDS = (("linear", "x"), ("linear", "y"), ("linear", "z"), ("angular", "x"), ("angular", "y"),
                ("angular", "z"))
DRIVE_FIELDS = ("speed", "steering_angle", "steering_angle_velocity", "acceleration", "jerk")
VEHICLES = ("bot1", "bot2", "car1")

pytestmark = pytest.mark.slow


class Session:
    """The probe, a persistent ``/mvsim/step`` client and the publishers of the tests."""

    def __init__(self, probe: Probe) -> None:
        self.probe = probe
        self.step_client = probe.node.create_client(Trigger, "/mvsim/step")
        probe.spin_until(self.step_client.service_is_ready, FIRST_MESSAGE_TIMEOUT, "the /mvsim/step service")
        self.pubs: dict[str, Any] = {}
        self.bot2_since: tuple[float, float] = (math.nan, math.nan)  # (t, x) once its command is in force

    def step(self, n: int = 1, before: Callable[[], None] | None = None) -> float:
        """Call ``/mvsim/step`` ``n`` times (``before()`` ahead of each call); the simulated time after the last."""
        t = math.nan
        for _ in range(n):
            if before is not None:
                before()
            fut = self.step_client.call_async(Trigger.Request())
            self.probe.spin_until(fut.done, 20.0, "the answer of /mvsim/step")
            ans = fut.result()
            assert ans.success, ans.message
            assert float(ans.message) > t or math.isnan(t), "the clock did not advance"
            t = float(ans.message)
        return t

    def gt_at(self, vehicle: str, t: float) -> Odometry:
        box = self.probe.inbox[f"/{vehicle}/base_pose_ground_truth"]
        return self.probe.next_message(box, lambda m: abs(secs(m.header.stamp) - t) < 1e-6, 20.0,
                                       f"{vehicle} ground truth at t={t:.3f}", start=0)

    def publisher(self, msg_type: Any, topic: str) -> Any:
        """A publisher of ``topic`` matched by the node (replacing this probe's publisher of another type there)."""
        old = self.pubs.pop(topic, None)
        if old is not None:
            self.probe.node.destroy_publisher(old)
        pub = self.pubs[topic] = self.probe.publisher(msg_type, topic)
        self.probe.wait_matched(pub)
        return pub


@pytest.fixture(scope="module")
def node(ros_context: Any, ros_domain: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    params = {"lockstep": True, "lockstep_step": STEP, "period_ms_publish_tf": 1000 * STEP,
              "base_watchdog_timeout": 0.0, "max_linear_speed": MAX_LINEAR, "max_angular_speed": MAX_ANGULAR}
    yield from node_fixture(DATA / "commands.world.xml", params, tmp_path_factory.mktemp("cmds"), ros_domain)


@pytest.fixture(scope="module")
def s(ros_context: Any, node: NodeProcess) -> Iterator[Session]:
    p = Probe(ros_context, "probe_commands")
    p.watch = node
    p.subscribe(Clock, "/clock", qos(reliable=False, depth=10))
    for v in (*VEHICLES, "wreck"):
        p.subscribe(Odometry, f"/{v}/base_pose_ground_truth", qos(depth=1000))
        p.subscribe(Odometry, f"/{v}/odom", qos(depth=1000))
    session = Session(p)
    pub = session.publisher(Twist, "/bot2/cmd_vel")  # bot2: one command, for the whole module
    cmd = Twist()
    cmd.linear.x = BOT2_SPEED
    t = session.step(2, before=lambda: pub.publish(cmd))
    session.bot2_since = (t, session.gt_at("bot2", t).pose.pose.position.x)
    yield session
    p.close()


# ---------------------------------------------------------------------- helpers
def twist(vx: float = 0.0, wz: float = 0.0) -> Twist:
    m = Twist()
    m.linear.x, m.angular.z = vx, wz
    return m


def stamped(vx: float = 0.0, wz: float = 0.0) -> TwistStamped:
    m = TwistStamped()
    m.header.frame_id = "base_link"
    m.twist = twist(vx, wz)
    return m


def drive(speed: float = 0.0, steer: float = 0.0) -> AckermannDriveStamped:
    m = AckermannDriveStamped()
    m.drive.speed, m.drive.steering_angle = speed, steer
    return m


def finite(m: Odometry) -> bool:
    p, t = m.pose.pose, m.twist.twist
    return all(math.isfinite(v) for v in (p.position.x, p.position.y, p.position.z, p.orientation.x,
                                          p.orientation.y, p.orientation.z, p.orientation.w, t.linear.x,
                                          t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z))


def check_everything_finite_and_bot2_undisturbed(s: Session, t: float) -> None:
    """Every ground truth and odometry message so far is finite; bot2 drove on at exactly 0.3 m/s along +x."""
    for v in VEHICLES:
        for kind in ("base_pose_ground_truth", "odom"):
            box = s.probe.inbox[f"/{v}/{kind}"]
            assert box and all(finite(m) for m in box), f"/{v}/{kind} has NaN/inf"
    t0, x0 = s.bot2_since
    b = s.gt_at("bot2", t)
    # Box2D keeps positions in float32: adding 1.5 mm per physics step to x ≈ 4 m rounds by up to 1e-4 of it
    assert b.pose.pose.position.x - x0 == pytest.approx(BOT2_SPEED * (t - t0), rel=2e-3)
    assert b.pose.pose.position.y == pytest.approx(6.0, abs=1e-4)
    assert yaw_of(b.pose.pose.orientation) == pytest.approx(0.0, abs=1e-4)
    assert b.twist.twist.linear.x == pytest.approx(BOT2_SPEED, abs=1e-4)
    clock = s.probe.next_message(s.probe.inbox["/clock"], lambda m: abs(secs(m.clock) - t) < 1e-9, 10.0,
                                 f"/clock at {t:.3f}", start=0)
    assert secs(clock.clock) == pytest.approx(t)


def distance_at_half_a_metre_per_second(s: Session, send: Callable[[float], None]) -> float:
    """bot1 driven by ``send(vx)`` at 20 Hz (one message per step) at 0.5 m/s for 2 s, then 0: the distance (m)
    from the first command to 1 s after the stop command."""
    t0 = s.step()
    start = s.gt_at("bot1", t0)
    t = s.step(40, before=lambda: send(0.5))
    assert t - t0 == pytest.approx(2.0, abs=1e-9)
    assert s.gt_at("bot1", t).twist.twist.linear.x == pytest.approx(0.5, abs=0.03)
    t = s.step(20, before=lambda: send(0.0))
    end = s.gt_at("bot1", t)
    assert abs(end.twist.twist.linear.x) < 0.05  # twist_pid's stop threshold: below it the wheels coast
    return math.hypot(end.pose.pose.position.x - start.pose.pose.position.x,
                      end.pose.pose.position.y - start.pose.pose.position.y)


def log_has(s: Session, node: NodeProcess, *texts: str) -> None:
    s.probe.spin_until(lambda: all(x in node.log() for x in texts), 10.0, f"{texts} in the node's log")


# ---------------------------------------------------------------------- cmd_vel as Twist, then TwistStamped
def test_twist_at_20_hz_moves_the_robot_a_metre(s: Session) -> None:
    pub = s.publisher(Twist, "/bot1/cmd_vel")
    dist = distance_at_half_a_metre_per_second(s, lambda vx: pub.publish(twist(vx)))
    assert 0.8 <= dist <= 1.1


def test_non_finite_and_huge_twists(s: Session, node: NodeProcess) -> None:
    pub = s.pubs["/bot1/cmd_vel"]
    good = twist(0.2)
    s.step(20, before=lambda: pub.publish(good))
    for part, axis in TWIST_FIELDS:
        for bad in (*BAD, *HUGE):
            m = twist(0.2)
            setattr(getattr(m, part), axis, bad)
            s.step(before=lambda m=m: pub.publish(m))
            if bad == -math.inf and (part, axis) == ("linear", "x"):  # after NaN, inf, -inf: the good one stays
                t = s.step()
                assert s.gt_at("bot1", t).twist.twist.linear.x == pytest.approx(0.2, abs=0.02)
        s.step(before=lambda: pub.publish(good))
    t = s.step(20, before=lambda: pub.publish(good))
    assert s.gt_at("bot1", t).twist.twist.linear.x == pytest.approx(0.2, abs=0.02)
    check_everything_finite_and_bot2_undisturbed(s, t)
    log_has(s, node, "/bot1/cmd_vel: linear.x is nan; command ignored, the last good one stays",
            "/bot1/cmd_vel: linear.x = 1e+09 m/s is beyond the limit of vehicle 'bot1', 2 m/s; clamped (parameter "
            "max_linear_speed; said once)",
            "/bot1/cmd_vel: angular.z = 1e+09 rad/s is beyond the limit of vehicle 'bot1', 3 rad/s; clamped "
            "(parameter max_angular_speed; said once)")


def test_twist_stamped_at_20_hz_moves_the_robot_a_metre(s: Session, node: NodeProcess) -> None:
    pub = s.publisher(TwistStamped, "/bot1/cmd_vel")  # the node follows: Nav2 on Kilted sends TwistStamped
    log_has(s, node, "/bot1/cmd_vel: subscribed as geometry_msgs/msg/TwistStamped")
    dist = distance_at_half_a_metre_per_second(s, lambda vx: pub.publish(stamped(vx)))
    assert 0.8 <= dist <= 1.1


def test_non_finite_and_huge_twist_stamped(s: Session) -> None:
    pub = s.pubs["/bot1/cmd_vel"]
    good = stamped(0.2)
    s.step(20, before=lambda: pub.publish(good))
    for part, axis in TWIST_FIELDS:
        for bad in (*BAD, *HUGE):
            m = stamped(0.2)
            setattr(getattr(m.twist, part), axis, bad)
            s.step(before=lambda m=m: pub.publish(m))
        s.step(before=lambda: pub.publish(good))
    t = s.step(20, before=lambda: pub.publish(good))
    assert s.gt_at("bot1", t).twist.twist.linear.x == pytest.approx(0.2, abs=0.02)
    check_everything_finite_and_bot2_undisturbed(s, t)


def test_non_finite_and_huge_ackermann_commands(s: Session, node: NodeProcess) -> None:
    pub = s.publisher(AckermannDriveStamped, "/car1/ackermann_cmd")
    good = drive(1.0, 0.0)
    s.step(30, before=lambda: pub.publish(good))
    for name in DRIVE_FIELDS:
        for bad in (*BAD, *HUGE):
            m = drive(1.0, 0.0)
            setattr(m.drive, name, bad)
            s.step(before=lambda m=m: pub.publish(m))
        s.step(before=lambda: pub.publish(good))
    t = s.step(30, before=lambda: pub.publish(good))
    car = s.gt_at("car1", t)
    assert 0.7 < car.twist.twist.linear.x < 1.1  # still following the good command
    check_everything_finite_and_bot2_undisturbed(s, t)
    log_has(s, node, "/car1/ackermann_cmd: drive.speed is nan; command ignored, the last good one stays",
            "/car1/ackermann_cmd: drive.speed = 1e+09 m/s is beyond the limit of vehicle 'car1', 2 m/s; clamped")


def test_a_huge_speed_is_clamped_to_the_limit(s: Session) -> None:
    bot, car = s.pubs["/bot1/cmd_vel"], s.pubs["/car1/ackermann_cmd"]

    def send() -> None:
        bot.publish(stamped(1e9))
        car.publish(drive(1e9, 0.0))

    t = s.step(40, before=send)  # 2 s
    b, c = s.gt_at("bot1", t), s.gt_at("car1", t)
    assert b.twist.twist.linear.x == pytest.approx(MAX_LINEAR, abs=0.05)
    assert 1.5 < c.twist.twist.linear.x < MAX_LINEAR + 0.05
    t = s.step(20, before=lambda: (bot.publish(stamped(0.0)), car.publish(drive(0.0, 0.0))))
    check_everything_finite_and_bot2_undisturbed(s, t)


def test_a_vehicle_that_blows_up_is_reset_and_logged_as_an_error(s: Session, node: NodeProcess) -> None:
    """wreck blew up at step 72 and was reset, once; the node is still serving and the others are undisturbed."""
    log_has(s, node, "vehicle 'wreck' blew up at t=0.3600 s (step 72): wheel 3 spin became NaN/inf")
    lines = [line for line in node.log().splitlines() if "blew up" in line]
    assert len(lines) == 1 and "[ERROR]" in lines[0] and lines[0].endswith("at rest, its controller reset with a zero "
                                                                           "command")
    t = s.step(5)
    assert finite(s.gt_at("wreck", t)) and all(finite(m) for m in s.probe.inbox["/wreck/base_pose_ground_truth"])
    check_everything_finite_and_bot2_undisturbed(s, t)
