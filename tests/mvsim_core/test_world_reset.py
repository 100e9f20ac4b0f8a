"""``World.reset``: back to the start in its three parts (objects, state, time), bit for bit where it promises so.

World (written below): r1, a twist_pid robot (the compiled batch) with a noisy lidar and an IMU with noise and bias
random walk, pushing the dynamic block box1; r2, a twist_pid robot with a reference filter (controlled one by one, its
PID pair built on the first step); car1, an Ackermann car (twist_front_steer_pid: steered wheels); a static wall and
an actor. Every run drives all three with the same command schedule.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mvsim_core as mv

WORLD = """<mvsim_world version="1.0">
  <simul_timestep>0.005</simul_timestep>
  <vehicle name="r1">
    <init_pose>0 0 0</init_pose>
    <dynamics class="differential">
      <controller class="twist_pid"><KP>10</KP><KI>2</KI><max_torque>20</max_torque></controller>
    </dynamics>
    <sensor class="laser" name="laser1">
      <pose_3d>0.2 0 0.3 0 0 0</pose_3d> <nrays>61</nrays> <sensor_period>0.05</sensor_period>
      <range_std_noise>0.02</range_std_noise>
    </sensor>
    <sensor class="imu" name="imu1">
      <sensor_period>0.02</sensor_period>
      <angular_velocity_random_walk_std_noise>0.01</angular_velocity_random_walk_std_noise>
    </sensor>
  </vehicle>
  <vehicle name="r2">
    <init_pose>0 -4 0</init_pose>
    <dynamics class="differential">
      <controller class="twist_pid"><KP>10</KP><KI>2</KI><max_torque>20</max_torque>
        <enable_reference_filter>true</enable_reference_filter><reference_filter_tau>0.05</reference_filter_tau>
      </controller>
    </dynamics>
  </vehicle>
  <vehicle name="car1">
    <init_pose>-6 5 0</init_pose>
    <dynamics class="ackermann">
      <controller class="twist_front_steer_pid"><KP>400</KP><KI>50</KI><max_torque>600</max_torque></controller>
    </dynamics>
  </vehicle>
  <block name="box1">
    <mass>5</mass> <init_pose>1.2 0 0</init_pose>
    <shape><pt>-0.2 -0.3</pt><pt>0.2 -0.3</pt><pt>0.2 0.3</pt><pt>-0.2 0.3</pt></shape>
  </block>
  <block name="wall">
    <static>true</static> <init_pose>8 0 0</init_pose>
    <shape><pt>-0.1 -3</pt><pt>0.1 -3</pt><pt>0.1 3</pt><pt>-0.1 3</pt></shape>
  </block>
  <actor name="walker"><init_pose>-3 -3 90</init_pose></actor>
</mvsim_world>
"""
STEPS = 300  # 1.5 s


@pytest.fixture
def world_file(tmp_path: Path) -> Path:
    p = tmp_path / "reset.world.xml"
    p.write_text(WORLD)
    return p


def drive(w: mv.World, steps: int = STEPS) -> dict[str, Any]:
    """The command schedule, then everything that evolves: poses, twists, odometry, wheel spins, block poses, the
    latest lidar and IMU readings (noise included) and the random generator's next draw (not consumed)."""
    for i in range(steps):
        if i == 5:
            w.vehicles["r1"].set_twist(0.8, 0.0, 0.0)
            w.vehicles["r2"].set_twist(0.5, 0.0, 0.6)
            w.vehicles["car1"].set_twist(2.0, 0.0, 0.3)
        if i == 150:
            w.vehicles["r2"].set_twist(-0.3, 0.0, -0.2)
        w.step()
    r1 = w.vehicles["r1"]
    return {
        "time": w.time,
        "vehicles": [(v.pose, v.twist, v.odometry, tuple(v.omega), tuple(v.phi), tuple(w.yaw for w in v.wheels))
                     for v in w.vehicles.values()],
        "blocks": [b.pose for b in w.blocks.values()],
        "laser": r1.sensors["laser1"].last.ranges.tolist(),
        "laser_stamp": r1.sensors["laser1"].last.stamp,
        "imu": r1.sensors["imu1"].last.angular_velocity.tolist(),
        "rng": w.rng.generator.bit_generator.state["state"]["state"],
        "collided": sorted(n for n, o in [*w.vehicles.items(), *w.blocks.items()] if o.had_collision),
    }


def test_reset_then_the_same_commands_repeat_the_run_bit_for_bit(world_file: Path) -> None:
    fresh = drive(mv.load_world(world_file, seed=3))
    w = mv.load_world(world_file, seed=3)
    first = drive(w)
    assert first == fresh
    assert first["collided"] == ["box1", "r1"]  # r1 pushed the box: contacts were part of the run
    assert first["vehicles"][2][5][2] != 0.0  # the car's front wheels were steered
    w.reset()
    assert w.time == 0.0
    assert drive(w) == fresh
    w.reset()  # and again (a reset does not depend on what came before it)
    assert drive(w) == fresh


def test_reset_puts_every_object_back_and_clears_what_was_measured(world_file: Path) -> None:
    w = mv.load_world(world_file, seed=3)
    declared = {n: o.pose for n, o in [*w.vehicles.items(), *w.blocks.items(), *w.actors.items()]}
    drive(w)
    w.set_pose("walker", 1.0, 2.0, 0.5)
    w.set_pose("wall", 9.0, 1.0, 0.0)
    w.vehicles["r1"].sensors["laser1"].last.ranges  # noqa: B018 - there is an observation before the reset
    w.reset()
    for name, pose in declared.items():
        assert w.object(name).pose == pose, name
    for v in w.vehicles.values():
        assert v.twist == (0.0, 0.0, 0.0) and v.odometry == (0.0, 0.0, 0.0)
        assert not v.omega.any() and not v.phi.any()
        assert all(s.last is None for s in v.sensors.values())
        assert not v.collision and not v.had_collision
    assert w.vehicles["r2"].controller.setpoint == (0.0, 0.0, 0.0)
    assert w.velocity("box1") == (0.0, 0.0, 0.0)
    assert [wh.yaw for wh in w.vehicles["car1"].wheels] == [0.0] * 4
    assert w.sensor_scheduler.due_at.tolist() == pytest.approx([0.05, 0.02], abs=1e-5)


def test_reset_keeps_what_is_not_simulation_state(world_file: Path) -> None:
    w = mv.load_world(world_file, seed=3)
    seen: list[float] = []
    w.add_step_listener(lambda world: seen.append(world.time))
    w.start()
    w.sensor_scheduler.enabled = False
    r1 = w.vehicles["r1"]
    w.run(0.5)
    w.reset()
    assert w.vehicles["r1"] is r1 and w.step_listeners and not w.sensor_scheduler.enabled
    w.step()
    assert seen[-1] == pytest.approx(w.timestep) and r1.sensors["laser1"].last is None
    assert w.rebuilds == 1


def test_a_reset_before_the_start_does_nothing(world_file: Path) -> None:
    w = mv.load_world(world_file, seed=3)
    w.reset()
    assert not w.started and w.time == 0.0


def test_state_without_time_keeps_the_clock_and_restarts_the_sensors_from_now(world_file: Path) -> None:
    w = mv.load_world(world_file, seed=3)
    drive(w, 100)
    t = w.time
    w.reset(objects=False, state=True, time=False)
    assert w.time == t
    assert w.vehicles["r1"].pose[:2] == (0.0, 0.0)
    assert w.sensor_scheduler.last.tolist() == [t, t]
    w.run(0.05)
    assert w.vehicles["r1"].sensors["laser1"].last.stamp == pytest.approx(t + 0.05)


def test_time_without_state_moves_the_clock_only(world_file: Path) -> None:
    w = mv.load_world(world_file, seed=3)
    drive(w, 101)  # 0.505 s: the lidar (20 Hz) last sampled at 0.5 s, the IMU (50 Hz) too
    poses = [v.pose for v in w.vehicles.values()]
    due = w.sensor_scheduler.due_at.copy()
    w.reset(objects=False, state=False, time=True)
    assert w.time == 0.0 and [v.pose for v in w.vehicles.values()] == poses
    assert w.sensor_scheduler.due_at.tolist() == pytest.approx((due - 0.505).tolist())
    w.run(0.045)  # the lidar keeps its phase: next sample 0.05 s after its last one
    assert w.vehicles["r1"].sensors["laser1"].last.stamp == pytest.approx(0.045)
    imu = w.vehicles["r1"].sensors["imu1"].last
    assert np.isfinite(imu.linear_acceleration).all() and abs(imu.linear_acceleration[0]) < 20.0


def test_objects_part_removes_spawned_and_brings_back_removed(world_file: Path) -> None:
    w = mv.load_world(world_file, seed=3)
    w.start()
    box1, r2 = w.blocks["box1"], w.vehicles["r2"]
    w.run(0.2)
    w.remove("box1")
    w.remove("r2")
    w.spawn('<block name="extra"><init_pose>3 3 0</init_pose></block>')
    w.spawn('<vehicle name="r2"><init_pose>-2 2 0</init_pose><dynamics class="differential"/></vehicle>')
    w.run(0.2)
    r1_pose = w.vehicles["r1"].pose
    w.reset(objects=True, state=False, time=False)
    assert list(w.vehicles) == ["r1", "r2", "car1"] and w.vehicles["r2"] is r2
    assert list(w.blocks) == ["box1", "wall"] and w.blocks["box1"] is box1
    assert r2.pose[:2] == (0.0, -4.0) and box1.pose[:2] == (1.2, 0.0)  # back in their initial state
    assert w.vehicles["r1"].pose == pytest.approx(r1_pose, abs=1e-5)  # the others went on
    assert w.time == pytest.approx(0.4)
    w.run(0.1)
    assert r2.pose[:2] == pytest.approx((0.0, -4.0), abs=1e-3)


def test_the_clock_after_a_full_reset_is_exactly_steps_times_dt(world_file: Path) -> None:
    w = mv.load_world(world_file, seed=3)
    w.run(0.3)
    w.reset()
    for _ in range(7):
        w.step()
    assert w.time == 7 * w.timestep
    assert math.isclose(w.time, 0.035)
