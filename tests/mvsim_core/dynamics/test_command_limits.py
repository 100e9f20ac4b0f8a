"""Command limits (mvsim_core.dynamics.command_limits) through the Python API: NaN/inf refused with a typed error
that names the field while the last good command stays; finite values clamped to the limits each vehicle class
declares (logged once per vehicle and field), which a user may change; and simulations that stay finite under the
largest commands."""

from __future__ import annotations

import logging
import math
import pickle
from pathlib import Path
from typing import Any

import pytest

import mvsim_core as mv
from mvsim_core.dynamics.command_limits import CommandGate, CommandLimits
from mvsim_core.dynamics.controllers import Twist2D

BAD = (math.nan, math.inf, -math.inf)
PLANE = ('<element class="horizontal_plane"><x_min>-500</x_min><y_min>-500</y_min><x_max>500</x_max>'
         '<y_max>500</y_max></element>')


def world(tmp_path: Path, *vehicles: tuple[str, str, str]) -> mv.World:
    """A flat world with one vehicle per (name, dynamics class, controller class), 10 m apart."""
    body = "".join(f'<vehicle name="{n}"><dynamics class="{d}"><controller class="{c}"/></dynamics>'
                   f'<init_pose>0 {10 * i} 0</init_pose></vehicle>' for i, (n, d, c) in enumerate(vehicles))
    p = tmp_path / "w.world.xml"
    p.write_text(f'<mvsim_world version="1.0"><simul_timestep>0.005</simul_timestep>{PLANE}{body}</mvsim_world>')
    return mv.load_world(p)


def test_default_limits_of_each_class(tmp_path):
    w = world(tmp_path, ("d", "differential", "twist_pid"), ("d4", "differential_4_wheels", "twist_pid"),
              ("c", "ackermann", "twist_front_steer_pid"), ("t", "ackermann_drivetrain", "front_steer_pid"))
    d = w.vehicles["d"]
    track = d.wheels[0].y - d.wheels[1].y  # 1 m with the default wheels
    mass = d.chassis.mass + sum(wh.mass for wh in d.wheels)
    assert d.command_limits == CommandLimits(max_speed=10.0, max_omega=2 * 10.0 / track, max_steer=math.inf,
                                             max_torque=50.0 * mass * d.wheels[0].radius)
    assert d.command_limits.max_omega == 20.0
    assert w.vehicles["d4"].command_limits.max_speed == 10.0
    for name in ("c", "t"):
        v = w.vehicles[name]
        lim = v.command_limits
        assert (lim.max_speed, lim.max_steer) == (50.0, pytest.approx(math.radians(30.0)))
        assert lim.max_omega == pytest.approx(50.0 * math.tan(math.radians(30.0)) / 1.3)
        assert lim.max_torque == pytest.approx(50.0 * (v.chassis.mass + sum(wh.mass for wh in v.wheels))
                                               * max(wh.radius for wh in v.wheels))


@pytest.mark.parametrize("bad", BAD, ids=["nan", "inf", "-inf"])
def test_non_finite_commands_are_refused_and_the_last_good_one_stays(tmp_path, bad):
    w = world(tmp_path, ("d", "differential", "twist_pid"), ("c", "ackermann", "front_steer_pid"),
              ("r", "ackermann", "raw"))
    d, c, r = w.vehicles["d"], w.vehicles["c"], w.vehicles["r"]
    d.set_twist(0.5, 0.0, 0.2)
    c.drive(1.0, 0.1)
    r.set_torques((-1.0, -2.0), 0.05)
    cases: list[tuple[Any, str, tuple[Any, ...]]] = [
        (d.set_twist, "vx", (bad, 0.0, 0.0)), (d.set_twist, "vy", (0.1, bad, 0.0)),
        (d.set_twist, "wz", (0.1, 0.0, bad)),
        (c.drive, "speed", (bad, 0.0)), (c.drive, "steer", (1.0, bad)),
        (r.set_torques, "torques[0]", ((bad, 1.0), 0.0)), (r.set_torques, "torques[1]", ((1.0, bad), None)),
        (r.set_torques, "steer", ((1.0, 1.0), bad)),
    ]
    for verb, field, args in cases:
        with pytest.raises(mv.CommandValueError) as info:
            verb(*args)
        e = info.value
        assert isinstance(e, mv.ControllerError) and isinstance(e, ValueError)
        assert (e.field, math.isnan(e.value) if math.isnan(bad) else e.value == bad) == (field, True)
        veh = verb.__self__.name
        assert str(e) == f"vehicle '{veh}': {field} is {bad}; command ignored, the last good one stays"
        assert str(pickle.loads(pickle.dumps(e))) == str(e)
    assert d.controller.setpoint == Twist2D(0.5, 0.0, 0.2)
    assert (c.controller.speed, c.controller.steer_angle) == (1.0, 0.1)
    assert (r.controller.torques, r.controller.steer_angle) == ((-1.0, -2.0), 0.05)
    w.run(0.5)
    assert all(math.isfinite(x) for v in (d, c, r) for x in (*v.pose, *v.twist))


def test_large_values_are_clamped_and_logged_once_per_vehicle_and_field(tmp_path, caplog):
    w = world(tmp_path, ("d", "differential", "twist_pid"), ("e", "differential", "twist_ideal"),
              ("c", "ackermann", "front_steer_pid"), ("r", "differential", "raw"))
    d, e, c, r = (w.vehicles[n] for n in "decr")
    caplog.set_level(logging.WARNING, logger="mvsim_core.commands")
    assert d.set_twist(1e9, -1e9, -1e9) == (10.0, -10.0, -20.0)
    assert d.controller.setpoint == Twist2D(10.0, -10.0, -20.0)
    assert d.set_twist(2e9, 0.0, 0.0) == (10.0, 0.0, 0.0)  # vx again: not logged again
    assert e.set_twist(11.0, 0.0, 0.0) == (10.0, 0.0, 0.0)  # another vehicle: logged
    assert d.set_twist(0.5, 0.0, 0.3) == (0.5, 0.0, 0.3)  # within the limits: as given
    assert c.drive(-1e9, 1e9) == (-50.0, pytest.approx(math.radians(30)))
    lim = r.command_limits.max_torque
    assert r.set_torques((1e9, -1e9)) == ((lim, -lim), None)
    msgs = [rec.getMessage() for rec in caplog.records if rec.name == "mvsim_core.commands"]
    assert msgs[:2] == [
        "vehicle 'd': vx = 1e+09 m/s is beyond its limit of 10 m/s; clamped (Vehicle.command_limits; said once per "
        "vehicle and field)",
        "vehicle 'd': vy = -1e+09 m/s is beyond its limit of 10 m/s; clamped (Vehicle.command_limits; said once per "
        "vehicle and field)"]
    assert [m.split(" is beyond")[0] for m in msgs] == [
        "vehicle 'd': vx = 1e+09 m/s", "vehicle 'd': vy = -1e+09 m/s", "vehicle 'd': wz = -1e+09 rad/s",
        "vehicle 'e': vx = 11 m/s", "vehicle 'c': speed = -1e+09 m/s", "vehicle 'c': steer = 1e+09 rad",
        "vehicle 'r': torques[0] = 1e+09 N·m", "vehicle 'r': torques[1] = -1e+09 N·m"]


def test_limits_can_be_changed(tmp_path):
    w = world(tmp_path, ("e", "differential", "twist_ideal"))
    e = w.vehicles["e"]
    e.command_limits = e.command_limits.replace(max_speed=1.5, max_omega=0.5)
    assert e.set_twist(3.0, 0.0, -2.0) == (1.5, 0.0, -0.5)
    e.command_limits = CommandLimits()  # no limits at all
    assert e.set_twist(30.0, 0.0, 0.0) == (30.0, 0.0, 0.0)
    for bad in (0.0, -1.0, math.nan):
        with pytest.raises(ValueError, match="command limit max_speed must be a number > 0"):
            CommandLimits(max_speed=bad)
    with pytest.raises(TypeError):
        e.command_limits = (1.0, 1.0)  # type: ignore[assignment]


def test_gate_alone():
    g = CommandGate("v", CommandLimits(max_speed=1.0, max_steer=0.5, max_torque=2.0))
    assert g.twist(-3, 0.5, 100.0) == (-1.0, 0.5, 100.0)  # max_omega inf: ω as given
    assert g.drive(0.5, -0.7) == (0.5, -0.5)
    assert g.torques([3.0, -1.0], None) == ((2.0, -1.0), None)
    assert g.torques([], 1.0) == ((), 0.5)


@pytest.mark.parametrize("dyn, ctrl", [
    ("differential", "twist_pid"), ("differential", "twist_ideal"), ("differential_4_wheels", "twist_pid"),
    ("ackermann", "twist_front_steer_pid"), ("ackermann", "twist_ideal"),
    ("ackermann_drivetrain", "twist_front_steer_pid"),
])
def test_the_largest_twists_keep_the_simulation_finite(tmp_path, dyn, ctrl):
    """1e9 in every field (clamped), for 3 simulated seconds: no NaN, no runaway (World.run would raise)."""
    w = world(tmp_path, ("v", dyn, ctrl))
    v = w.vehicles["v"]
    for cmd in ((1e9, 1e9, 1e9), (-1e9, -1e9, -1e9), (1e9, 0.0, 0.0)):
        v.set_twist(*cmd)
        w.run(1.0)
        assert all(math.isfinite(x) for x in (*v.pose, *v.twist, *v.odometry))
    if ctrl == "twist_ideal":
        assert v.twist[0] == pytest.approx(v.command_limits.max_speed, rel=1e-5)


@pytest.mark.parametrize("dyn, ctrl, args", [
    ("ackermann", "front_steer_pid", ((1e9, 1e9), (-1e9, -1e9))),
    ("ackermann_drivetrain", "front_steer_pid", ((1e9, 1e9), (-1e9, -1e9))),
])
def test_the_largest_drives_keep_the_simulation_finite(tmp_path, dyn, ctrl, args):
    w = world(tmp_path, ("v", dyn, ctrl))
    v = w.vehicles["v"]
    for cmd in args:
        v.drive(*cmd)
        w.run(1.5)
        assert all(math.isfinite(x) for x in (*v.pose, *v.twist, *v.odometry))


@pytest.mark.parametrize("dyn, n, steer", [("differential", 2, None), ("ackermann", 2, 1e9),
                                           ("ackermann_drivetrain", 1, -1e9)])
def test_the_largest_torques_keep_the_simulation_finite(tmp_path, dyn, n, steer):
    w = world(tmp_path, ("v", dyn, "raw"))
    v = w.vehicles["v"]
    v.set_torques((-1e9,) * n, steer)
    w.run(2.0)
    assert all(math.isfinite(x) for x in (*v.pose, *v.twist, *v.odometry))
