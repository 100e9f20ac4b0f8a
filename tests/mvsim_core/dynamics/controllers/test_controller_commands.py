"""The commands of every controller class: which kinds each declares, what each method sets, what it refuses, and the
vehicle-level conveniences (``Vehicle.set_twist/drive/set_torques/stop``) that the ROS node, ZMQ and teleop use."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

import mvsim_core as mv
from mvsim_core.dynamics.controllers import Command, Controller, Family, Twist2D

TWIST, DRIVE, TORQUES = Command.TWIST, Command.DRIVE, Command.TORQUES
DIFF, ACK, ACKDT = Family.DIFFERENTIAL, Family.ACKERMANN, Family.ACKERMANN_DRIVETRAIN
DYNAMICS = {DIFF: "differential", ACK: "ackermann", ACKDT: "ackermann_drivetrain"}
WHEELBASE = 1.3  # default Ackermann geometry: rear axle at x = 0, front axle at f_wheels_x = 1.3 m
TRAJECTORY = '<waypoint t="0" x="0" y="0"/><waypoint t="10" x="10" y="0"/>'

EXPECTED = {  # (family, class) -> commands, native first
    (DIFF, "raw"): (TORQUES,),
    (DIFF, "twist_pid"): (TWIST,),
    (DIFF, "twist_ideal"): (TWIST,),
    (DIFF, "trajectory"): (),
    (ACK, "raw"): (TORQUES,),
    (ACK, "front_steer_pid"): (DRIVE,),
    (ACK, "twist_front_steer_pid"): (TWIST, DRIVE),
    (ACK, "twist_ideal"): (TWIST, DRIVE),
    (ACK, "trajectory"): (),
    (ACKDT, "raw"): (TORQUES,),
    (ACKDT, "front_steer_pid"): (DRIVE,),
    (ACKDT, "twist_front_steer_pid"): (TWIST, DRIVE),
}
IDS = [f"{f.value}-{c}" for f, c in EXPECTED]


def vehicle(tmp_path: Path, family: Family, ctrl: str, inner: str = "") -> Any:
    if ctrl == "trajectory" and not inner:
        inner = TRAJECTORY
    p = tmp_path / "w.world.xml"
    p.write_text(f'<mvsim_world version="1.0"><vehicle name="v"><dynamics class="{DYNAMICS[family]}">'
                 f'<controller class="{ctrl}">{inner}</controller></dynamics><init_pose>0 0 0</init_pose>'
                 f'</vehicle></mvsim_world>')
    return mv.load_world(p).vehicles["v"]


def test_every_registered_class_is_covered():
    assert set(Controller.registry) == set(EXPECTED)


@pytest.mark.parametrize("key", list(EXPECTED), ids=IDS)
def test_declared_commands(tmp_path, key):
    family, ctrl = key
    c = vehicle(tmp_path, family, ctrl).controller
    assert c.commands == EXPECTED[key]
    for kind in Command:
        assert c.accepts(kind) is (kind in EXPECTED[key])
    assert c.accepts_twist is (TWIST in EXPECTED[key])


@pytest.mark.parametrize("key", list(EXPECTED), ids=IDS)
def test_set_twist_sets_the_setpoint_or_refuses(tmp_path, key):
    v = vehicle(tmp_path, *key)
    if TWIST in EXPECTED[key]:
        v.set_twist(0.5, 0.25, -0.125)
        assert v.controller.setpoint == Twist2D(0.5, 0.25, -0.125)
    else:
        with pytest.raises(mv.ControllerError, match=f"vehicle 'v': controller \"{key[1]}\" does not accept twist"):
            v.set_twist(0.5, 0.0, 0.0)


@pytest.mark.parametrize("key", list(EXPECTED), ids=IDS)
def test_drive(tmp_path, key):
    """front_steer_pid stores (speed, steer) as given; a steering angle beyond max_steer is clamped to it (the
    vehicle's command limits); the twist controllers of Ackermann vehicles take v, ω = v·tan δ / wheelbase; everything
    else refuses."""
    v = vehicle(tmp_path, *key)
    c = v.controller
    if EXPECTED[key] == (DRIVE,):
        v.drive(2.0, 0.5)
        assert (c.speed, c.steer_angle) == (2.0, 0.5)
        assert v.drive(2.0, 0.75) == (2.0, math.radians(30.0))  # beyond max_steer (30°): clamped
        assert (c.speed, c.steer_angle) == (2.0, math.radians(30.0))
    elif DRIVE in EXPECTED[key]:
        v.drive(2.0, 0.3)
        assert c.setpoint == Twist2D(2.0, 0.0, 2.0 * math.tan(0.3) / WHEELBASE)
        assert c.setpoint.omega == pytest.approx(0.475902, abs=1e-6)
        with pytest.raises(mv.ControllerError, match="wheelbase"):
            c.drive(1.0, 0.1)  # the controller alone does not know the vehicle's wheelbase
    else:
        with pytest.raises(mv.ControllerError, match=f"vehicle 'v': controller \"{key[1]}\" .* does not accept "
                                                     f"speed and steering"):
            v.drive(1.0, 0.1)


@pytest.mark.parametrize("key, torques, steering", [
    ((DIFF, "raw"), (-1.5, 2.0), False),
    ((ACK, "raw"), (-3.0, -4.0), True),
    ((ACKDT, "raw"), (-20.0,), True),
], ids=["differential", "ackermann", "ackermann_drivetrain"])
def test_set_torques_of_raw_controllers(tmp_path, key, torques, steering):
    v = vehicle(tmp_path, *key)
    c = v.controller
    v.set_torques(torques)
    assert c.torques == torques
    assert c.steering is steering
    bad = (*torques, 1.0)
    with pytest.raises(mv.ControllerError, match=f"takes {len(torques)} torques"):
        v.set_torques(bad)
    if steering:
        v.set_torques(torques, 0.2)
        assert c.steer_angle == 0.2
        v.set_torques(torques)  # None keeps the angle
        assert c.steer_angle == 0.2
    else:
        with pytest.raises(mv.ControllerError, match="no steering angle"):
            v.set_torques(torques, 0.2)
    v.stop()
    assert c.torques == (0.0,) * len(torques)
    if steering:
        assert c.steer_angle == 0.2  # stop keeps the steering angle


def test_raw_differential_torques_attributes(tmp_path):
    c = vehicle(tmp_path, DIFF, "raw").controller
    c.set_torques((-0.5, 0.25))
    assert (c.torque_l, c.torque_r) == (-0.5, 0.25)
    a = vehicle(tmp_path, ACK, "raw").controller
    a.set_torques((1.0, 2.0))
    assert (a.torque_fl, a.torque_fr) == (1.0, 2.0)
    d = vehicle(tmp_path, ACKDT, "raw").controller
    d.set_torques((7.0,))
    assert d.torque == 7.0


@pytest.mark.parametrize("key", [k for k, cmds in EXPECTED.items() if TORQUES not in cmds], ids=[
    i for i, (k, cmds) in zip(IDS, EXPECTED.items(), strict=True) if TORQUES not in cmds])
def test_set_torques_refused_by_other_controllers(tmp_path, key):
    with pytest.raises(mv.ControllerError, match=f"\"{key[1]}\" does not accept raw torque commands"):
        vehicle(tmp_path, *key).set_torques((0.0, 0.0))


@pytest.mark.parametrize("key", list(EXPECTED), ids=IDS)
def test_stop(tmp_path, key):
    """Twist controllers: (0, 0, 0); front_steer_pid: speed 0, steering kept (what the watchdog relies on); raw:
    torques 0, steering kept; a controller without commands refuses."""
    v = vehicle(tmp_path, *key)
    c = v.controller
    cmds = EXPECTED[key]
    if not cmds:
        with pytest.raises(mv.ControllerError, match=f"vehicle 'v': controller \"{key[1]}\" takes no commands"):
            v.stop()
        return
    native = cmds[0]
    if native is TWIST:
        v.set_twist(1.0, 0.5, 0.2)
        v.stop()
        assert c.setpoint == Twist2D(0.0, 0.0, 0.0)
    elif native is DRIVE:
        v.drive(1.5, -0.25)
        v.stop()
        assert (c.speed, c.steer_angle) == (0.0, -0.25)
    else:
        v.set_torques((-1.0,) * len(c.torques))
        v.stop()
        assert c.torques == (0.0,) * len(c.torques)


def test_front_steer_pid_set_command_is_drive(tmp_path):
    c = vehicle(tmp_path, ACK, "front_steer_pid").controller
    c.set_command(1.25, -0.1)
    assert (c.speed, c.steer_angle) == (1.25, -0.1)


def test_teleop_steps_are_class_attributes():
    r = Controller.registry
    assert r[(DIFF, "twist_pid")].SPEED_STEP == 0.1
    assert r[(DIFF, "twist_pid")].OMEGA_STEP == math.radians(2.0)
    assert r[(ACK, "twist_ideal")].OMEGA_STEP == math.radians(2.0)
    assert r[(ACK, "twist_front_steer_pid")].OMEGA_STEP == math.radians(1.0)
    assert r[(ACKDT, "twist_front_steer_pid")].OMEGA_STEP == math.radians(1.0)
    assert r[(ACK, "front_steer_pid")].STEER_STEP == math.radians(1.0)
    assert r[(DIFF, "raw")].TORQUE_STEP == 0.05
    assert r[(ACK, "raw")].TORQUE_STEP == 1.0 and r[(ACKDT, "raw")].TORQUE_STEP == 1.0
