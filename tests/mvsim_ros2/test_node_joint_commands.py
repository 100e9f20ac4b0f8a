"""ros2_control-style joint commands into the node across processes (rclpy over DDS), in lockstep: sensor_msgs/
JointState wheel velocities on ``<vehicle>/joint_commands`` (what topic_based_ros2_control publishes) drive the robot
as the wheel speeds say; a NaN command is refused and the previous one holds; malformed messages are warned about
once per cause and change nothing; cmd_vel after joint_commands takes over, and the node says so once.

World ``data/joint_commands.world.xml``: bot1 and bot2 (differential, twist_pid, wheel radius 0.1 m, track 0.5 m).
Watchdog off. Tests run in file order on one node.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from ros_harness import (
    FIRST_MESSAGE_TIMEOUT,
    NodeProcess,
    Odometry,
    Probe,
    Trigger,
    Twist,
    node_fixture,
    qos,
    secs,
)
from sensor_msgs.msg import JointState  # noqa: E402  (after ros_harness: it skips without ROS)

DATA = Path(__file__).resolve().parent / "data"
STEP = 0.05  # s: lockstep_step; one message per step
RADIUS, TRACK = 0.1, 0.5  # m
WHEELS = ["l_wheel_joint", "r_wheel_joint"]

pytestmark = pytest.mark.slow


class Session:
    def __init__(self, probe: Probe) -> None:
        self.probe = probe
        self.step_client = probe.node.create_client(Trigger, "/mvsim/step")
        probe.spin_until(self.step_client.service_is_ready, FIRST_MESSAGE_TIMEOUT, "the /mvsim/step service")
        self.joints = probe.publisher(JointState, "/bot1/joint_commands")
        self.cmd_vel = probe.publisher(Twist, "/bot1/cmd_vel")
        probe.wait_matched(self.joints)
        probe.wait_matched(self.cmd_vel)

    def step(self, n: int = 1, before: Callable[[], None] | None = None) -> float:
        t = math.nan
        for _ in range(n):
            if before is not None:
                before()
            fut = self.step_client.call_async(Trigger.Request())
            self.probe.spin_until(fut.done, 20.0, "the answer of /mvsim/step")
            assert fut.result().success
            t = float(fut.result().message)
        return t

    def twist_at(self, t: float) -> Any:
        box = self.probe.inbox["/bot1/base_pose_ground_truth"]
        m = self.probe.next_message(box, lambda m: abs(secs(m.header.stamp) - t) < 1e-6, 20.0,
                                    f"bot1 ground truth at t={t:.3f}", start=0)
        return m.twist.twist

    def send(self, names: list[str], velocity: list[float], position: list[float] | None = None) -> Callable[[], None]:
        msg = JointState()
        msg.name, msg.velocity, msg.position = names, velocity, position or []
        return lambda: self.joints.publish(msg)


@pytest.fixture(scope="module")
def node(ros_context: Any, ros_domain: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    params = {"lockstep": True, "lockstep_step": STEP, "period_ms_publish_tf": 1000 * STEP,
              "base_watchdog_timeout": 0.0}
    yield from node_fixture(DATA / "joint_commands.world.xml", params, tmp_path_factory.mktemp("joints"), ros_domain)


@pytest.fixture(scope="module")
def s(ros_context: Any, node: NodeProcess) -> Iterator[Session]:
    p = Probe(ros_context, "probe_joint_commands")
    p.watch = node
    p.subscribe(Odometry, "/bot1/base_pose_ground_truth", qos(depth=1000))
    yield Session(p)
    p.close()


def log_count(node: NodeProcess, text: str) -> int:
    return node.log().count(text)


def test_equal_wheel_rates_drive_forward_at_rate_times_radius(s: Session) -> None:
    t = s.step(40, before=s.send(WHEELS, [5.0, 5.0]))  # 2 s
    tw = s.twist_at(t)
    assert tw.linear.x == pytest.approx(5.0 * RADIUS, rel=0.03) and abs(tw.angular.z) < 0.01


def test_opposite_wheel_rates_turn_at_2wr_over_track(s: Session) -> None:
    t = s.step(40, before=s.send(WHEELS, [-2.0, 2.0]))
    tw = s.twist_at(t)
    assert tw.angular.z == pytest.approx(2 * 2.0 * RADIUS / TRACK, rel=0.03) and abs(tw.linear.x) < 0.02


def test_nan_is_refused_and_the_previous_command_holds(s: Session, node: NodeProcess) -> None:
    s.step(before=s.send(WHEELS, [math.nan, 1.0]))
    t = s.step(10)
    assert s.twist_at(t).angular.z == pytest.approx(0.8, rel=0.03)
    s.probe.spin_until(lambda: "/bot1/joint_commands: l_wheel_joint velocity is nan; command ignored, the last good "
                               "one stays" in node.log(), 10.0, "the NaN warning")


def test_malformed_messages_are_warned_once_per_cause(s: Session, node: NodeProcess) -> None:
    short = "vehicle 'bot1': /bot1/joint_commands: 1 velocity values for 2 names (expected 2, one per name, or 2, " \
            "one per velocity-commanded joint named, or none); message ignored (said once)"
    unknown = "vehicle 'bot1': /bot1/joint_commands: unknown joint 'front_joint' (commandable joints: " \
              "l_wheel_joint, r_wheel_joint); message ignored (said once)"
    for _ in range(2):
        s.step(before=s.send(WHEELS, [3.0]))
        s.step(before=s.send(["front_joint"], [3.0]))
    s.probe.spin_until(lambda: short in node.log() and unknown in node.log(), 10.0, "the malformed warnings")
    t = s.step(10)
    assert s.twist_at(t).angular.z == pytest.approx(0.8, rel=0.03)
    assert (log_count(node, short), log_count(node, unknown)) == (1, 1)
    assert node.alive()


def test_cmd_vel_after_joint_commands_takes_over_said_once(s: Session, node: NodeProcess) -> None:
    cmd = Twist()
    cmd.linear.x = 0.3
    t = s.step(40, before=lambda: s.cmd_vel.publish(cmd))
    tw = s.twist_at(t)
    assert tw.linear.x == pytest.approx(0.3, rel=0.03) and abs(tw.angular.z) < 0.02
    said = ("vehicle 'bot1': commands arrive on both /bot1/joint_commands and /bot1/cmd_vel; the newest wins "
            "(said once)")
    s.probe.spin_until(lambda: said in node.log(), 10.0, "the both-inputs warning")
    t = s.step(40, before=s.send(WHEELS, [4.0, 4.0]))  # and back: the joints win again, not said again
    assert s.twist_at(t).linear.x == pytest.approx(0.4, rel=0.03)
    s.step(2, before=lambda: s.cmd_vel.publish(cmd))
    assert log_count(node, said) == 1
