"""Keyboard teleop: what each key does to the selected vehicle's setpoints (no window needed)."""

import math
from pathlib import Path

import pytest

import mvsim_core as mv
from mvsim_core.gui.teleop import Teleop


def world(tmp_path: Path, vehicles: str) -> mv.World:
    p = tmp_path / "t.world.xml"
    p.write_text(f'<mvsim_world version="1.0">{vehicles}</mvsim_world>')
    w = mv.load_world(p)
    w.step()  # physics attached (loggers)
    return w


def vehicle(name: str, dynamics: str, controller: str, y: float, extra: str = "") -> str:
    return (f'<vehicle name="{name}"><dynamics class="{dynamics}">{extra}<controller class="{controller}"/>'
            f'</dynamics><init_pose>0 {y} 0</init_pose></vehicle>')


DIFF_PID = vehicle("a", "differential", "twist_pid", 0.0)
DIFF_RAW = vehicle("b", "differential", "raw", 5.0)
ACK_STEER = vehicle("c", "ackermann", "front_steer_pid", 10.0, "<max_steer_ang_deg>3</max_steer_ang_deg>")
ACK_RAW = vehicle("d", "ackermann", "raw", 15.0)


def test_twist_keys_change_the_setpoint_and_space_stops(tmp_path):
    w = world(tmp_path, DIFF_PID)
    t = Teleop(w)
    for c in "wwwaD":
        assert t.key(c)
    sp = w.vehicles["a"].controller.setpoint
    assert sp.vx == pytest.approx(0.3) and sp.omega == pytest.approx(0.0)
    t.key("a")
    assert w.vehicles["a"].controller.setpoint.omega == pytest.approx(math.radians(2.0))
    assert "v=0.30 m/s" in t.last_message
    w.run(1.0)
    assert w.vehicles["a"].pose[0] > 0.1  # it drives
    t.key(" ")
    assert tuple(w.vehicles["a"].controller.setpoint) == (0.0, 0.0, 0.0)


def test_number_keys_select_vehicles_and_unknown_keys_do_nothing(tmp_path):
    w = world(tmp_path, DIFF_PID + DIFF_RAW + ACK_STEER)
    t = Teleop(w)
    assert t.vehicle.name == "a"
    assert t.key("3") and t.vehicle.name == "c"
    assert not t.key("9") and t.vehicle.name == "c"  # no 9th vehicle
    assert not t.key("x") and not t.key("F1")


def test_raw_differential_torques(tmp_path):
    w = world(tmp_path, DIFF_RAW)
    t = Teleop(w)
    ctrl = w.vehicles["b"].controller
    t.key("w")
    t.key("w")
    t.key("a")
    assert (ctrl.torque_l, ctrl.torque_r) == (pytest.approx(-0.05), pytest.approx(-0.15))
    t.key(" ")
    assert (ctrl.torque_l, ctrl.torque_r) == (0.0, 0.0)


def test_front_steer_pid_steering_is_clamped(tmp_path):
    w = world(tmp_path, ACK_STEER)
    t = Teleop(w)
    ctrl = w.vehicles["c"].controller
    for _ in range(5):
        t.key("a")
    t.key("w")
    assert ctrl.steer_angle == pytest.approx(math.radians(3.0))  # max_steer_ang_deg
    assert ctrl.speed == pytest.approx(0.1)
    t.key(" ")
    assert ctrl.speed == 0.0 and ctrl.steer_angle == pytest.approx(math.radians(3.0))


def test_raw_ackermann_torque_and_steer(tmp_path):
    w = world(tmp_path, ACK_RAW)
    t = Teleop(w)
    ctrl = w.vehicles["d"].controller
    t.key("s")
    t.key("d")
    assert (ctrl.torque_fl, ctrl.torque_fr) == (1.0, 1.0)
    assert ctrl.steer_angle == pytest.approx(-math.radians(1.0))


def test_logging_keys(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = world(tmp_path, DIFF_PID)
    t = Teleop(w)
    log = w.vehicles["a"].logger
    assert t.key("L") and log.recording
    w.run(0.05)
    assert t.key("n") and log.session == 2
    assert t.key("l") and not log.recording
    assert (tmp_path / "mvsim_a_pose.csv").read_text().count("\n") >= 2  # header + rows


# ---------------------------------------------------------------------- every controller class
DEG = math.radians(1.0)
TRAJ = '<waypoint t="0" x="0" y="0"/><waypoint t="10" x="10" y="0"/>'


def one(tmp_path: Path, dynamics: str, controller: str) -> mv.World:
    inner = TRAJ if controller == "trajectory" else ""
    p = tmp_path / "t.world.xml"
    p.write_text(f'<mvsim_world version="1.0"><vehicle name="v"><dynamics class="{dynamics}"><controller '
                 f'class="{controller}">{inner}</controller></dynamics><init_pose>0 0 0</init_pose></vehicle>'
                 f'</mvsim_world>')
    return mv.load_world(p)  # keys need no physics


def twist_state(c):
    return tuple(c.setpoint)


def drive_state(c):
    return (c.speed, c.steer_angle)


def torque_state(c):
    return (*c.torques, *((c.steer_angle,) if c.steering else ()))


# (dynamics, class) -> (state reader, state after "wwa", its message, state after a space, help word)
TELEOP_CASES = {
    ("differential", "raw"): (torque_state, (-0.05, -0.15), "torque l=-0.05 r=-0.15 N·m", (0.0, 0.0), "torques"),
    ("differential", "twist_pid"): (twist_state, (0.2, 0.0, 2 * DEG), "v=0.20 m/s, w=2.0 deg/s", (0.0, 0.0, 0.0),
                                    "speed"),
    ("differential", "twist_ideal"): (twist_state, (0.2, 0.0, 2 * DEG), "v=0.20 m/s, w=2.0 deg/s",
                                      (0.0, 0.0, 0.0), "speed"),
    ("ackermann", "raw"): (torque_state, (-2.0, -2.0, DEG), "torque=-2.00 N·m, steer=1.0 deg", (0.0, 0.0, DEG),
                           "torques"),
    ("ackermann", "front_steer_pid"): (drive_state, (0.2, DEG), "v=0.20 m/s, steer=1.0 deg", (0.0, DEG), "speed"),
    ("ackermann", "twist_front_steer_pid"): (twist_state, (0.2, 0.0, DEG), "v=0.20 m/s, w=1.0 deg/s",
                                             (0.0, 0.0, 0.0), "speed"),
    ("ackermann", "twist_ideal"): (twist_state, (0.2, 0.0, 2 * DEG), "v=0.20 m/s, w=2.0 deg/s", (0.0, 0.0, 0.0),
                                   "speed"),
    ("ackermann_drivetrain", "raw"): (torque_state, (-2.0, DEG), "torque=-2.00 N·m, steer=1.0 deg", (0.0, DEG),
                                      "torques"),
    ("ackermann_drivetrain", "front_steer_pid"): (drive_state, (0.2, DEG), "v=0.20 m/s, steer=1.0 deg", (0.0, DEG),
                                                  "speed"),
    ("ackermann_drivetrain", "twist_front_steer_pid"): (twist_state, (0.2, 0.0, DEG), "v=0.20 m/s, w=1.0 deg/s",
                                                        (0.0, 0.0, 0.0), "speed"),
}


def test_teleop_cases_cover_every_controller_class():
    from mvsim_core.dynamics.controllers import Controller

    covered = {(f.value, c) for f, c in Controller.registry} - set(TELEOP_CASES)
    assert covered == {("differential", "trajectory"), ("ackermann", "trajectory")}  # no commands: next test


@pytest.mark.parametrize("key", list(TELEOP_CASES), ids=[f"{d}-{c}" for d, c in TELEOP_CASES])
def test_teleop_on_each_controller_class(tmp_path, key):
    read, after, message, stopped, word = TELEOP_CASES[key]
    w = one(tmp_path, *key)
    t = Teleop(w)
    ctrl = w.vehicles["v"].controller
    for c in "wwa":
        assert t.key(c)
    assert read(ctrl) == pytest.approx(after, abs=1e-12)
    assert t.last_message == f"v: {message}"
    assert t.key(" ")
    assert read(ctrl) == pytest.approx(stopped, abs=1e-12)
    assert t.help_lines() == [f"[v: {key[1]}] 1-9 select, w/s {word}, a/d turn, space stop, L/C/N logs"]


@pytest.mark.parametrize("dynamics", ["differential", "ackermann"])
def test_teleop_keys_do_nothing_to_a_trajectory(tmp_path, dynamics):
    w = one(tmp_path, dynamics, "trajectory")
    t = Teleop(w)
    assert not any(t.key(c) for c in "wsad ")
    assert t.last_message == ""
    assert t.help_lines() == ["[v: trajectory] 1-9 select, L/C/N logs"]
