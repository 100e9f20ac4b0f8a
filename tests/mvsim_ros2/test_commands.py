"""cmd_vel / ackermann_cmd handling and the watchdog (mvsim_ros2.commands), in process with a stand-in node: what each
controller class takes, the exact setpoints, the one-time warnings and what the watchdog leaves."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from ackermann_msgs.msg import AckermannDriveStamped
from geometry_msgs.msg import Twist, TwistStamped
from rclpy._rclpy_pybind11 import RCLError

import mvsim_core as mv
from mvsim_core.dynamics.controllers import Twist2D
from mvsim_ros2.commands import POLL_PERIOD, WARN_PERIOD, CommandInputs
from mvsim_ros2.params import ConfigError, Options
from mvsim_ros2.vehicle_publishers import VehicleLink

TRAJ = '<waypoint t="0" x="0" y="0"/><waypoint t="10" x="10" y="0"/>'
VEHICLES = {  # name -> (dynamics, controller)
    "diff_pid": ("differential", "twist_pid"),
    "diff_raw": ("differential", "raw"),
    "car_twist": ("ackermann", "twist_front_steer_pid"),
    "car_ideal": ("ackermann", "twist_ideal"),
    "car_steer": ("ackermann", "front_steer_pid"),
    "truck_steer": ("ackermann_drivetrain", "front_steer_pid"),
    "car_raw": ("ackermann", "raw"),
    "bot_traj": ("differential", "trajectory"),
}
WHEELBASE = 1.3  # default Ackermann geometry


class Log:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def warning(self, text: str) -> None:
        self.lines.append(("WARN", text))

    def info(self, text: str) -> None:
        self.lines.append(("INFO", text))


class StandInSub:
    def __init__(self, msg_type: Any, topic: str, callback: Any) -> None:
        self.msg_type, self.topic_name, self.callback = msg_type, "/" + topic, callback


class StandInNode:
    def __init__(self) -> None:
        self.log = Log()
        self.subscriptions: list[tuple[str, str]] = []
        self.subs: list[StandInSub] = []
        self.timers: list[tuple[float, Any]] = []
        self.publishers: dict[str, list[str]] = {}  # topic -> type names, as the ROS graph would tell
        self.defer_destroy = False
        self.dying: list[StandInSub] = []

    def create_subscription(self, msg_type: Any, topic: str, callback: Any, qos: Any) -> StandInSub:
        if any(d.topic_name == "/" + topic and d.msg_type is not msg_type for d in self.dying):
            raise RCLError(f"create_subscription() called for existing topic name rt/{topic} with incompatible type")
        self.subscriptions.append((msg_type.__name__, topic))
        sub = StandInSub(msg_type, topic, callback)
        self.subs.append(sub)
        return sub

    def destroy_subscription(self, sub: StandInSub) -> None:
        self.subs.remove(sub)
        if self.defer_destroy:  # as the EventsExecutor does inside a callback: gone only after it
            self.dying.append(sub)

    def create_timer(self, period: float, callback: Any, clock: Any = None) -> str:
        self.timers.append((period, callback))
        return "timer"

    def get_publishers_info_by_topic(self, topic: str) -> list[Any]:
        return [SimpleNamespace(topic_type=t) for t in self.publishers.get(topic, [])]

    def get_logger(self) -> Log:
        return self.log


@pytest.fixture
def setup(tmp_path: Path) -> tuple[mv.World, StandInNode, CommandInputs, dict[str, VehicleLink]]:
    return make_setup(tmp_path)


def make_setup(tmp_path: Path, opts: Options | None = None
               ) -> tuple[mv.World, StandInNode, CommandInputs, dict[str, VehicleLink]]:
    body = "".join(f'<vehicle name="{n}"><dynamics class="{d}"><controller class="{c}">'
                   f'{TRAJ if c == "trajectory" else ""}</controller></dynamics><init_pose>0 {10 * i} 0</init_pose>'
                   f'</vehicle>' for i, (n, (d, c)) in enumerate(VEHICLES.items()))
    p = tmp_path / "c.world.xml"
    p.write_text(f'<mvsim_world version="1.0">{body}</mvsim_world>')
    w = mv.load_world(p)
    node = StandInNode()
    cmds = CommandInputs(node, w, opts)
    links = {n: VehicleLink(v, f"{n}/") for n, v in w.vehicles.items()}
    for link in links.values():
        cmds.subscribe(link)
    return w, node, cmds, links


def twist(vx: float, vy: float, wz: float) -> Twist:
    m = Twist()
    m.linear.x, m.linear.y, m.angular.z = vx, vy, wz
    return m


def drive(speed: float, steer: float) -> AckermannDriveStamped:
    m = AckermannDriveStamped()
    m.drive.speed, m.drive.steering_angle = speed, steer
    return m


def test_two_subscriptions_per_vehicle(setup):
    _, node, _, _ = setup
    assert node.subscriptions[:2] == [("Twist", "diff_pid/cmd_vel"),
                                      ("AckermannDriveStamped", "diff_pid/ackermann_cmd")]
    assert len(node.subscriptions) == 2 * len(VEHICLES)
    assert [p for p, _ in node.timers] == [POLL_PERIOD]  # cmd_vel_type auto: one timer looks at the publishers


def test_cmd_vel(setup):
    w, node, cmds, links = setup
    for name in ("diff_pid", "car_twist", "car_ideal"):
        cmds.on_cmd_vel(links[name], twist(0.5, 0.25, -0.2))
        assert w.vehicles[name].controller.setpoint == Twist2D(0.5, 0.25, -0.2)
    assert [lk.vehicle.name for lk in cmds.commanded] == ["diff_pid", "car_twist", "car_ideal"]
    for name in ("car_steer", "diff_raw", "bot_traj", "car_steer"):
        cmds.on_cmd_vel(links[name], twist(1.0, 0.0, 0.0))
    assert node.log.lines == [  # once per vehicle; the hint for controllers that take ackermann_cmd
        ("WARN", "vehicle 'car_steer': its controller 'front_steer_pid' does not take cmd_vel (Twist) commands; "
                 "ignored (use ackermann_cmd)"),
        ("WARN", "vehicle 'diff_raw': its controller 'raw' does not take cmd_vel (Twist) commands; ignored"),
        ("WARN", "vehicle 'bot_traj': its controller 'trajectory' does not take cmd_vel (Twist) commands; ignored"),
    ]
    assert len(cmds.commanded) == 3


def test_ackermann_cmd(setup):
    w, node, cmds, links = setup
    cmds.on_ackermann(links["car_steer"], drive(2.0, 0.9))  # beyond max steer (30°): clamped
    cmds.on_ackermann(links["truck_steer"], drive(-1.0, -0.1))
    assert (w.vehicles["car_steer"].controller.speed,
            w.vehicles["car_steer"].controller.steer_angle) == (2.0, math.radians(30))
    assert (w.vehicles["truck_steer"].controller.speed,
            w.vehicles["truck_steer"].controller.steer_angle) == (-1.0, pytest.approx(-0.1))
    for name in ("car_twist", "car_ideal"):  # v, ω = v·tan δ / L
        cmds.on_ackermann(links[name], drive(2.0, 0.3))
        assert w.vehicles[name].controller.setpoint == Twist2D(2.0, 0.0, 2.0 * math.tan(0.3) / WHEELBASE)
    for name in ("diff_pid", "diff_raw", "car_raw", "bot_traj", "diff_pid"):
        cmds.on_ackermann(links[name], drive(1.0, 0.2))
    assert w.vehicles["diff_pid"].controller.setpoint == Twist2D()  # ignored
    assert node.log.lines == [
        ("WARN", "/car_steer/ackermann_cmd: drive.steering_angle = 0.9 rad is beyond the limit of vehicle "
                 "'car_steer', 0.523599 rad; clamped (the vehicle's command_limits; said once)"),
        ("WARN", "vehicle 'diff_pid': cannot take ackermann_cmd: it has no wheelbase (not an Ackermann vehicle); "
                 "ignored"),
        ("WARN", "vehicle 'diff_raw': cannot take ackermann_cmd: its controller 'raw' takes neither steering nor "
                 "twist commands; ignored"),
        ("WARN", "vehicle 'car_raw': cannot take ackermann_cmd: its controller 'raw' takes neither steering nor "
                 "twist commands; ignored"),
        ("WARN", "vehicle 'bot_traj': cannot take ackermann_cmd: its controller 'trajectory' takes neither steering "
                 "nor twist commands; ignored"),
    ]
    assert [lk.vehicle.name for lk in cmds.commanded] == ["car_steer", "truck_steer", "car_twist", "car_ideal"]


def test_watchdog_stops_each_vehicle_once_keeping_the_steering_angle(setup):
    w, node, cmds, links = setup
    cmds.on_cmd_vel(links["diff_pid"], twist(0.5, 0.0, 0.1))
    cmds.on_ackermann(links["car_steer"], drive(1.5, 0.2))
    cmds.on_ackermann(links["car_twist"], drive(1.5, 0.2))
    cmds.watchdog(1.0, 1.0)  # commands at t = 0: exactly 1 s old is not stale yet
    assert len(cmds.commanded) == 3
    cmds.watchdog(1.5, 0.0)  # ≤ 0: disabled
    assert len(cmds.commanded) == 3
    cmds.watchdog(1.001, 1.0)
    assert cmds.commanded == []
    assert w.vehicles["diff_pid"].controller.setpoint == Twist2D(0.0, 0.0, 0.0)
    assert w.vehicles["car_twist"].controller.setpoint == Twist2D(0.0, 0.0, 0.0)
    c = w.vehicles["car_steer"].controller
    assert (c.speed, c.steer_angle) == (0.0, 0.2)
    assert [t for level, t in node.log.lines if level == "INFO"] == [
        f"vehicle '{n}': no command for 1 s: stopped" for n in ("diff_pid", "car_steer", "car_twist")]
    assert all(lk.last_cmd is None for lk in links.values())


# ---------------------------------------------------------------------- values: NaN/inf refused, large ones clamped
def stamped(vx: float, vy: float, wz: float) -> TwistStamped:
    m = TwistStamped()
    m.twist = twist(vx, vy, wz)
    return m


def deliver(node: StandInNode, topic: str, msg: Any) -> None:
    """Hand ``msg`` to the current subscription of ``topic`` (as the executor would)."""
    (sub,) = [s for s in node.subs if s.topic_name == topic]
    assert isinstance(msg, sub.msg_type)
    sub.callback(msg)


TWIST_FIELDS = (("linear", "x"), ("linear", "y"), ("linear", "z"), ("angular", "x"), ("angular", "y"),
                ("angular", "z"))
DRIVE_FIELDS = ("speed", "steering_angle", "steering_angle_velocity", "acceleration", "jerk")


def test_non_finite_messages_are_ignored_with_a_throttled_warning(setup, monkeypatch):
    w, node, cmds, links = setup
    now = [100.0]
    monkeypatch.setattr("mvsim_ros2.commands.time.monotonic", lambda: now[0])
    cmds.on_cmd_vel(links["diff_pid"], twist(0.5, 0.0, 0.1))
    cmds.on_ackermann(links["car_steer"], drive(1.5, 0.2))
    good_pid, good_steer = w.vehicles["diff_pid"].controller.setpoint, (1.5, 0.2)
    for part, axis in TWIST_FIELDS:
        for bad in (math.nan, math.inf, -math.inf):
            m = twist(0.1, 0.0, 0.0)
            setattr(getattr(m, part), axis, bad)
            deliver(node, "/diff_pid/cmd_vel", m)
    for name in DRIVE_FIELDS:
        m = drive(0.3, 0.0)
        setattr(m.drive, name, math.inf)
        cmds.on_ackermann(links["car_steer"], m)
    assert w.vehicles["diff_pid"].controller.setpoint == good_pid  # the last good commands stay
    c = w.vehicles["car_steer"].controller
    assert (c.speed, c.steer_angle) == good_steer
    assert node.log.lines == [  # one per topic within WARN_PERIOD
        ("WARN", "/diff_pid/cmd_vel: linear.x is nan; command ignored, the last good one stays"),
        ("WARN", "/car_steer/ackermann_cmd: drive.speed is inf; command ignored, the last good one stays"),
    ]
    now[0] += WARN_PERIOD
    m = twist(0.1, 0.0, 0.0)
    m.angular.y = -math.inf
    deliver(node, "/diff_pid/cmd_vel", m)
    assert node.log.lines[-1] == ("WARN", "/diff_pid/cmd_vel: angular.y is -inf; command ignored, the last good one "
                                          "stays (17 more ignored since the last warning)")
    m = stamped(0.1, 0.0, 0.0)  # TwistStamped: the fields are named as in that message
    m.twist.linear.z = math.nan
    cmds.poll_cmd_vel_types()
    node.publishers["/car_twist/cmd_vel"] = ["geometry_msgs/msg/TwistStamped"]
    cmds.poll_cmd_vel_types()
    deliver(node, "/car_twist/cmd_vel", m)
    assert node.log.lines[-1] == ("WARN", "/car_twist/cmd_vel: twist.linear.z is nan; command ignored, the last good "
                                          "one stays")
    cmds.on_cmd_vel(links["diff_pid"], twist(0.2, 0.0, 0.0))  # a good one is taken again
    assert w.vehicles["diff_pid"].controller.setpoint == Twist2D(0.2, 0.0, 0.0)


def test_large_values_are_clamped_and_said_once(tmp_path):
    w, node, cmds, links = make_setup(tmp_path, Options(max_linear_speed=1.5, max_angular_speed=0.5))
    for _ in range(2):
        cmds.on_cmd_vel(links["diff_pid"], twist(1e9, -2.0, -1e9))
    assert w.vehicles["diff_pid"].controller.setpoint == Twist2D(1.5, -1.5, -0.5)
    cmds.on_cmd_vel(links["car_ideal"], twist(0.5, 0.0, 0.25))  # within the limits: as given, nothing said
    assert w.vehicles["car_ideal"].controller.setpoint == Twist2D(0.5, 0.0, 0.25)
    cmds.on_ackermann(links["car_steer"], drive(-1e9, 0.1))
    assert w.vehicles["car_steer"].controller.speed == -1.5
    assert w.vehicles["truck_steer"].command_limits.max_speed == 1.5  # every vehicle
    assert node.log.lines == [
        ("WARN", "/diff_pid/cmd_vel: linear.x = 1e+09 m/s is beyond the limit of vehicle 'diff_pid', 1.5 m/s; clamped "
                 "(parameter max_linear_speed; said once)"),
        ("WARN", "/diff_pid/cmd_vel: linear.y = -2 m/s is beyond the limit of vehicle 'diff_pid', 1.5 m/s; clamped "
                 "(parameter max_linear_speed; said once)"),
        ("WARN", "/diff_pid/cmd_vel: angular.z = -1e+09 rad/s is beyond the limit of vehicle 'diff_pid', 0.5 rad/s; "
                 "clamped (parameter max_angular_speed; said once)"),
        ("WARN", "/car_steer/ackermann_cmd: drive.speed = -1e+09 m/s is beyond the limit of vehicle 'car_steer', "
                 "1.5 m/s; clamped (parameter max_linear_speed; said once)"),
    ]


def test_vehicle_limits_stay_without_the_parameters(setup):
    w, _, _, _ = setup
    assert w.vehicles["diff_pid"].command_limits.max_speed == 10.0
    assert w.vehicles["car_twist"].command_limits.max_speed == 50.0
    for bad in ({"max_linear_speed": -1.0}, {"max_angular_speed": math.inf}, {"cmd_vel_type": "stamped"}):
        with pytest.raises(ConfigError):
            Options.from_values(bad)


# ---------------------------------------------------------------------- cmd_vel as Twist or TwistStamped
@pytest.mark.parametrize("kind, msg_type", [("twist", Twist), ("twist_stamped", TwistStamped)])
def test_cmd_vel_type_picks_one_type_for_good(tmp_path, kind, msg_type):
    w, node, cmds, _ = make_setup(tmp_path, Options(cmd_vel_type=kind))
    assert [t for t, topic in node.subscriptions if topic.endswith("cmd_vel")] == [msg_type.__name__] * len(VEHICLES)
    assert node.timers == []  # nobody looks at the publishers
    deliver(node, "/diff_pid/cmd_vel", stamped(0.5, 0.0, 0.1) if kind == "twist_stamped" else twist(0.5, 0.0, 0.1))
    assert w.vehicles["diff_pid"].controller.setpoint == Twist2D(0.5, 0.0, 0.1)


def test_auto_follows_the_type_of_the_publishers(setup):
    w, node, cmds, _ = setup
    topic = "/diff_pid/cmd_vel"
    poll = node.timers[0][1]
    ctl = w.vehicles["diff_pid"].controller

    def current() -> str:
        (sub,) = [s for s in node.subs if s.topic_name == topic]
        return sub.msg_type.__name__

    poll()
    assert current() == "Twist"  # nobody publishes: Twist, as upstream
    node.publishers[topic] = ["geometry_msgs/msg/TwistStamped"]  # Nav2 (Kilted)
    poll()
    assert current() == "TwistStamped"
    deliver(node, topic, stamped(0.4, 0.0, -0.2))
    assert ctl.setpoint == Twist2D(0.4, 0.0, -0.2)
    node.publishers[topic].append("geometry_msgs/msg/Twist")  # then teleop_twist_keyboard: the newest wins
    poll()
    assert current() == "Twist"
    poll()
    assert current() == "Twist"  # no new publisher: stays
    node.publishers[topic] = ["geometry_msgs/msg/TwistStamped"]  # teleop gone: back to the one left
    poll()
    assert current() == "TwistStamped"
    node.publishers[topic] = []  # nobody: stays
    poll()
    assert current() == "TwistStamped"
    infos = [t for level, t in node.log.lines if level == "INFO"]
    assert infos[:2] == [
        "/diff_pid/cmd_vel: subscribed as geometry_msgs/msg/TwistStamped (its publishers send "
        "geometry_msgs/msg/TwistStamped; parameter cmd_vel_type picks one type for good)",
        "/diff_pid/cmd_vel: subscribed as geometry_msgs/msg/Twist (a geometry_msgs/msg/Twist publisher appeared; the "
        "publishers of the other type are not heard now; parameter cmd_vel_type picks one type for good)"]
    assert len(infos) == 3
    assert sum(1 for s in node.subs if s.topic_name == topic) == 1


def test_auto_switch_waits_for_the_old_subscription_to_go(setup):
    """With the EventsExecutor a subscription destroyed in a callback goes only after it, and the participant
    refuses the other type meanwhile: the new subscription is made at the next look."""
    w, node, cmds, _ = setup
    topic = "/diff_pid/cmd_vel"
    node.defer_destroy = True
    node.publishers[topic] = ["geometry_msgs/msg/TwistStamped"]
    cmds.poll_cmd_vel_types()
    assert [sub for sub in node.subs if sub.topic_name == topic] == []  # none for a moment
    assert not [t for level, t in node.log.lines if level == "INFO"]
    node.dying.clear()
    cmds.poll_cmd_vel_types()
    (sub,) = [sub for sub in node.subs if sub.topic_name == topic]
    assert sub.msg_type is TwistStamped
    assert [t for level, t in node.log.lines if level == "INFO"] == [
        "/diff_pid/cmd_vel: subscribed as geometry_msgs/msg/TwistStamped (its publishers send "
        "geometry_msgs/msg/TwistStamped; parameter cmd_vel_type picks one type for good)"]
    deliver(node, topic, stamped(0.3, 0.0, 0.0))
    assert w.vehicles["diff_pid"].controller.setpoint == Twist2D(0.3, 0.0, 0.0)
