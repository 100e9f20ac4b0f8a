"""cmd_vel / ackermann_cmd handling and the watchdog (mvsim_ros2.commands), in process with a stand-in node: what each
controller class takes, the exact setpoints, the one-time warnings and what the watchdog leaves."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from ackermann_msgs.msg import AckermannDriveStamped
from geometry_msgs.msg import Twist

import mvsim_core as mv
from mvsim_core.dynamics.controllers import Twist2D
from mvsim_ros2.commands import CommandInputs
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


class StandInNode:
    def __init__(self) -> None:
        self.log = Log()
        self.subscriptions: list[tuple[str, str]] = []

    def create_subscription(self, msg_type: Any, topic: str, callback: Any, qos: Any) -> str:
        self.subscriptions.append((msg_type.__name__, topic))
        return topic

    def get_logger(self) -> Log:
        return self.log


@pytest.fixture
def setup(tmp_path: Path) -> tuple[mv.World, StandInNode, CommandInputs, dict[str, VehicleLink]]:
    body = "".join(f'<vehicle name="{n}"><dynamics class="{d}"><controller class="{c}">'
                   f'{TRAJ if c == "trajectory" else ""}</controller></dynamics><init_pose>0 {10 * i} 0</init_pose>'
                   f'</vehicle>' for i, (n, (d, c)) in enumerate(VEHICLES.items()))
    p = tmp_path / "c.world.xml"
    p.write_text(f'<mvsim_world version="1.0">{body}</mvsim_world>')
    w = mv.load_world(p)
    node = StandInNode()
    cmds = CommandInputs(node, w)
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
    cmds.on_ackermann(links["car_steer"], drive(2.0, 0.9))  # beyond max steer: the control law clamps it
    cmds.on_ackermann(links["truck_steer"], drive(-1.0, -0.1))
    assert (w.vehicles["car_steer"].controller.speed, w.vehicles["car_steer"].controller.steer_angle) == (2.0, 0.9)
    assert (w.vehicles["truck_steer"].controller.speed,
            w.vehicles["truck_steer"].controller.steer_angle) == (-1.0, pytest.approx(-0.1))
    for name in ("car_twist", "car_ideal"):  # v, ω = v·tan δ / L
        cmds.on_ackermann(links[name], drive(2.0, 0.3))
        assert w.vehicles[name].controller.setpoint == Twist2D(2.0, 0.0, 2.0 * math.tan(0.3) / WHEELBASE)
    for name in ("diff_pid", "diff_raw", "car_raw", "bot_traj", "diff_pid"):
        cmds.on_ackermann(links[name], drive(1.0, 0.2))
    assert w.vehicles["diff_pid"].controller.setpoint == Twist2D()  # ignored
    assert node.log.lines == [
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
