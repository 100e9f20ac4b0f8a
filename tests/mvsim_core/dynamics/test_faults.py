"""Blow-ups are per-object events (mvsim_core.dynamics.faults): a vehicle or block that goes NaN/inf or runs away is
put back at its last finite pose, at rest, with its controller reset, the fault is recorded and logged (throttled),
and every other vehicle goes on bit-identically to a run without the blow-up; a strict world raises instead."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.dynamics.bodies import BoundBodies
from mvsim_core.dynamics.controllers import Twist2D
from mvsim_core.dynamics.faults import KEEP, Fault
from mvsim_core.dynamics.physics import SimulationError

DT = 0.005
BODY = """<element class="horizontal_plane"><x_min>-100</x_min><y_min>-100</y_min><x_max>100</x_max>
<y_max>100</y_max></element>
<vehicle name="a"><dynamics class="differential"><controller class="twist_pid"/></dynamics>
  <init_pose>0 0 0</init_pose></vehicle>
<vehicle name="wrecked"><dynamics class="differential"><controller class="twist_pid"/></dynamics>
  <init_pose>0 20 0</init_pose></vehicle>
<vehicle name="c"><dynamics class="differential"><controller class="twist_ideal"/></dynamics>
  <init_pose>0 -20 0</init_pose></vehicle>
<vehicle name="car"><dynamics class="ackermann"><controller class="front_steer_pid"/></dynamics>
  <init_pose>20 0 0</init_pose></vehicle>
<block name="crate"><init_pose>-20 0 0</init_pose><mass>5</mass>
  <shape><pt>-0.5 -0.5</pt><pt>0.5 -0.5</pt><pt>0.5 0.5</pt><pt>-0.5 0.5</pt></shape></block>
"""
OTHERS = ("a", "c", "car")


def world(tmp_path: Path, body: str = BODY) -> mv.World:
    p = tmp_path / "faults.world.xml"
    p.write_text(f'<mvsim_world version="1.0"><simul_timestep>{DT}</simul_timestep>{body}</mvsim_world>')
    return mv.load_world(p)


def drive_all(w: mv.World) -> None:
    w.vehicles["a"].set_twist(0.8, 0.0, 0.3)
    w.vehicles["wrecked"].set_twist(0.5, 0.0, -0.2)
    w.vehicles["c"].set_twist(0.4, 0.0, 0.1)
    w.vehicles["car"].drive(1.0, 0.2)
    w.set_velocity("crate", 0.3, 0.0, 0.0)


def logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "mvsim_core.faults"]


def trace(w: mv.World, steps: int, at: dict[int, object] | None = None) -> list[tuple]:
    """Pose, twist and odometry of the other vehicles after each step; ``at[i]()`` runs before step i."""
    out = []
    for i in range(steps):
        if at and i in at:
            at[i]()
        w.step()
        out.append(tuple((w.vehicles[n].pose, w.vehicles[n].twist, w.vehicles[n].odometry) for n in OTHERS))
    return out


def test_a_vehicle_with_nan_state_is_reset_and_the_others_go_on_bit_identically(tmp_path, caplog):
    ref = world(tmp_path)
    drive_all(ref)
    reference = trace(ref, 300)

    w = world(tmp_path)
    drive_all(w)
    seen: list[Fault] = []
    w.faults.add_listener(seen.append)
    before: dict[str, tuple] = {}

    def wreck() -> None:
        before["pose"] = w.vehicles["wrecked"].pose
        w.physics.bodies.vehicle_bodies["wrecked"].linearVelocity = (math.nan, 0.0)

    caplog.set_level(logging.WARNING, logger="mvsim_core.faults")
    got = trace(w, 300, {100: wreck})
    assert got == reference  # every other vehicle, every step, bit for bit
    assert len(w.faults) == 1 and w.faults.counts == {"wrecked": 1} and seen == list(w.faults)
    f = seen[0]
    x, y, _, yaw, _, _ = before["pose"]
    assert (f.name, f.kind, f.step, f.time, f.reset_to, f.reported) == ("wrecked", "vehicle", 101, 101 * DT,
                                                                       (x, y, yaw), True)
    assert f.what == "NaN/inf in its state" and math.isnan(f.state[0]) and math.isnan(f.state[3])
    assert logged(caplog) == [f.message()]
    assert f.message().startswith("vehicle 'wrecked' blew up at t=0.5050 s (step 101): NaN/inf in its state (x, y, "
                                  "yaw, vx, vy, ω = [nan, ")
    assert f.message().endswith(f"reset to (x, y, yaw) = ({x:.6g}, {y:.6g}, {yaw:.6g}), at rest, its controller "
                                f"reset with a zero command")
    v = w.vehicles["wrecked"]
    # its command was zeroed (the PID batch row with it): it braked where it was put back and stays there
    assert v.controller.setpoint == Twist2D(0.0, 0.0, 0.0)
    batch = w.physics.pid_batch
    assert batch is not None
    row = [j for j, (_, veh) in enumerate(batch.members) if veh is v][0]
    assert batch.sp[row].tolist() == [0.0, 0.0]
    assert math.hypot(v.pose[0] - x, v.pose[1] - y) < 0.01 and max(map(abs, v.twist)) < 1e-6
    # and it takes commands again
    v.set_twist(0.5, 0.0, 0.0)
    w.run(1.0)
    assert v.twist[0] == pytest.approx(0.5, abs=0.02)
    assert all(math.isfinite(c) for n in w.vehicles for c in (*w.vehicles[n].pose, *w.vehicles[n].odometry))


def test_non_finite_friction_forces_never_reach_box2d_and_repeated_faults_are_logged_once_per_second(
        tmp_path, caplog, monkeypatch):
    w = world(tmp_path)
    drive_all(w)
    w.run(0.1)
    ph = w.physics
    k = ph.names.index("wrecked")
    a, b = ph.wheels.start[k], ph.wheels.start[k + 1]
    ph.wheels.params[a:b] = math.nan  # friction parameters gone bad: every step blows it up again
    applied: list[np.ndarray] = []
    apply = BoundBodies.apply

    def recording_apply(self: BoundBodies) -> None:  # the physics' forces as they go into Box2D: fx, fy, torque
        applied.append(ph.forces.T.copy())
        apply(self)

    monkeypatch.setattr(BoundBodies, "apply", recording_apply)
    caplog.set_level(logging.WARNING, logger="mvsim_core.faults")
    w.run(2.5)
    assert len(applied) == 500 and all(np.isfinite(f).all() for f in applied)
    assert all(row[:, k].tolist() == [0.0, 0.0, 0.0] for row in applied)  # it got no force at all
    assert len(w.faults) == 500 and w.faults.counts == {"wrecked": 500}
    reported = [f for f in w.faults if f.reported]
    assert [f.step for f in reported] == [21, 221, 421]
    assert [f.unreported for f in reported] == [0, 199, 199]
    assert logged(caplog) == [f.message() for f in reported]
    assert reported[0].what == "wheel 1 spin became NaN/inf"
    assert logged(caplog)[1].endswith("(199 more times since the last report)")
    v = w.vehicles["wrecked"]
    assert all(math.isfinite(c) for c in (*v.pose, *v.twist, *v.odometry))
    assert w.vehicles["a"].twist[0] == pytest.approx(0.8, abs=0.05)


def test_an_unstable_wheel_is_reset_with_a_zero_torque_and_stays_put(tmp_path):
    """Wheel inertia 1e-307 kg·m², no axle damping, the largest torque the vehicle takes: the slipping wheel gains
    dt·(τ − R·F_max)/I ~ 1e307 rad/s per step, and its spin overflows to inf within a few dozen steps; the raw
    controller is then reset to zero torques and nothing happens again."""
    body = BODY.replace('<vehicle name="wrecked"><dynamics class="differential"><controller class="twist_pid"/>'
                        '</dynamics>',
                        '<vehicle name="wrecked"><dynamics class="differential"><l_wheel pos="0 0.5" '
                        'inertia="1e-307"/><r_wheel pos="0 -0.5" inertia="1e-307"/><controller class="raw"/>'
                        '</dynamics><friction class="default"><C_damping>0</C_damping></friction>')
    w = world(tmp_path, body)
    v = w.vehicles["wrecked"]
    v.set_torques((-1e6, -1e6))  # clamped to its limit (50 g · mass · radius)
    w.run(1.0)
    assert len(w.faults) == 1
    f = w.faults.last
    assert f is not None and f.what == "wheel 1 spin became NaN/inf" and 1 < f.step < 100
    assert v.controller.torques == (0.0, 0.0)
    assert v.pose[:2] == pytest.approx(f.reset_to[:2], abs=1e-6) and v.twist == (0.0, 0.0, 0.0)


def test_a_runaway_vehicle_and_a_nan_block_are_reset(tmp_path):
    w = world(tmp_path)
    drive_all(w)
    w.run(0.1)
    crate = w.blocks["crate"].pose
    c = w.vehicles["c"]
    c.command_limits = mv.CommandLimits()  # no limits: its ideal twist is imposed as commanded
    c.set_twist(0.0, 0.0, 5000.0)  # rad/s: beyond RUNAWAY_SPEED (Box2D caps rotation per step, not this)
    w.physics.bodies.block_bodies["crate"].linearVelocity = (math.inf, 0.0)
    w.step()
    assert [(f.name, f.kind, f.what) for f in w.faults] == [
        ("c", "vehicle", "a runaway velocity (beyond 1000 m/s or rad/s)"), ("crate", "block", "NaN/inf in its state")]
    assert w.faults.last is not None and w.faults.last.reset_to == (crate[0], crate[1], crate[3])
    w.run(0.5)
    assert w.blocks["crate"].pose[:2] == pytest.approx(crate[:2], abs=1e-6)  # at rest where it was
    assert w.velocity("crate") == (0.0, 0.0, 0.0)
    assert w.vehicles["c"].twist == (0.0, 0.0, 0.0)  # twist_ideal: its command was zeroed
    assert w.faults.counts == {"c": 1, "crate": 1}


def test_a_strict_world_raises_and_names_the_object(tmp_path):
    w = world(tmp_path)
    w.strict = True
    w.run(0.05)
    w.physics.bodies.block_bodies["crate"].linearVelocity = (math.nan, 0.0)
    with pytest.raises(SimulationError) as e:
        w.step()
    assert str(e.value).startswith("block 'crate' has NaN/inf in its state at step 11 (t = 0.0550 s): x, y, yaw, vx, "
                                   "vy, ω = [nan, ")
    assert len(w.faults) == 0


def test_the_fault_log_keeps_the_latest_and_counts_all(tmp_path):
    w = world(tmp_path)
    ph = w.start().physics
    k = ph.names.index("wrecked")
    ph.wheels.params[ph.wheels.start[k]:ph.wheels.start[k + 1]] = math.nan
    w.run((KEEP + 5) * DT)
    assert len(w.faults) == KEEP + 5 and len(list(w.faults)) == KEEP
    assert [f.step for f in w.faults][:2] == [6, 7] and bool(w.faults)
    w.faults.remove_listener(print)  # not registered: nothing happens
