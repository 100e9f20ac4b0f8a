"""Reproducibility and robustness of the step loop: seeded worlds replay bit for bit, every shipped world runs,
blow-ups are reported by name and step, ``raw`` refuses twists, and the CSV loggers write upstream's files
(reference §1.3, §1.11, §1.16, §2.1, §2.5)."""

from __future__ import annotations

import csv
import math
import time
from pathlib import Path

import pytest

import mvsim_core as mv
from mvsim_core.dynamics.physics import SimulationError


def make_world(tmp_path: Path, body: str, *, dt: float, seed: int = 0, name: str = "w.xml") -> mv.World:
    path = tmp_path / name
    path.write_text(f'<mvsim_world version="1.0">\n<simul_timestep>{dt}</simul_timestep>\n{body}\n</mvsim_world>\n')
    return mv.load_world(path, seed=seed)


# ---------------------------------------------------------------------------------------------- 8. determinism
TWO_ROBOTS = """<vehicle:class name="bot">
  <dynamics class="differential">
    <controller class="twist_pid"><KP>10</KP><KI>3</KI><max_torque>20</max_torque></controller>
  </dynamics>
</vehicle:class>
<vehicle name="a" class="bot"><init_pose>{a}</init_pose></vehicle>
<vehicle name="b" class="bot"><init_pose>{b}</init_pose></vehicle>"""
RANDOM_POSES = TWO_ROBOTS.format(a="$f{-5+2*rand()} $f{-5+2*rand()} $f{360*rand()}",
                                 b="$f{3+2*rand()} $f{3+2*rand()} $f{360*rand()}")
FIXED_POSES = TWO_ROBOTS.format(a="-5 -5 30", b="5 5 200")


def drive(tmp_path: Path, text: str, seed: int):
    """2 s of a demo-like world (two robots, default random odometry multipliers ~N(1, 0.02)) at dt = 5 ms."""
    w = make_world(tmp_path, text, dt=0.005, seed=seed, name=f"w{seed}.xml")
    init = {n: v.pose for n, v in w.vehicles.items()}
    w.vehicles["a"].set_twist(1.0, 0.0, 0.5)
    w.vehicles["b"].set_twist(0.5, 0.0, -0.3)
    w.run(2.0)
    return w, init


def test_same_seed_replays_bit_for_bit(tmp_path):
    w1, init1 = drive(tmp_path, RANDOM_POSES, 7)
    w2, init2 = drive(tmp_path, RANDOM_POSES, 7)
    assert init1 == init2
    for name in ("a", "b"):
        v1, v2 = w1.vehicles[name], w2.vehicles[name]
        assert v1.pose == v2.pose and v1.twist == v2.twist and v1.odometry == v2.odometry
    w3, init3 = drive(tmp_path, RANDOM_POSES, 8)
    assert init3["a"] != init1["a"] and init3["b"] != init1["b"]  # the seed does reach rand()


def test_demo_many_robots_replays_bit_for_bit(worlds_dir):
    """The shipped 25-robot demo (random poses via $f{rand()}, an occupancy grid, twist_pid small_robots), every
    robot driving a circle for 2 s: two loads with one seed agree exactly; collisions between robots included."""
    path = worlds_dir / "mvsim_tutorial" / "demo_many_robots.world.xml"
    runs = []
    for _ in range(2):
        w = mv.load_world(path, seed=3)
        for v in w.vehicles.values():
            v.set_twist(0.8, 0.0, 0.6)
        w.run(2.0)
        runs.append([(v.pose, v.twist, v.odometry, v.had_collision) for v in w.vehicles.values()])
    assert len(runs[0]) == 25
    assert runs[0] == runs[1]
    assert sum(math.hypot(*odo[:2]) for _, _, odo, _ in runs[0]) > 5.0  # they did move
    assert sum(hit for *_, hit in runs[0]) > 10  # and bumped into each other and the grid


def test_other_seed_changes_only_the_odometry_noise(tmp_path):
    """Fixed initial poses: the seed only draws the odometry multipliers, which do not touch the physics, so the
    poses are identical and the odometry differs. Odometry composes increments of the true motion scaled by the
    multipliers, and yaw increments simply add: odo_yaw = yaw_multiplier·(yaw_end − yaw_start)."""
    w1, _ = drive(tmp_path, FIXED_POSES, 1)
    w2, _ = drive(tmp_path, FIXED_POSES, 2)
    for name, yaw0 in (("a", math.radians(30)), ("b", math.radians(200) - 2 * math.pi)):
        v1, v2 = w1.vehicles[name], w2.vehicles[name]
        assert v1.pose == v2.pose
        assert v1.odometry_multipliers != v2.odometry_multipliers
        assert v1.odometry != v2.odometry
        for v in (v1, v2):
            turned = v.pose[3] - math.remainder(yaw0, 2 * math.pi)
            assert abs(turned) > 0.3  # both robots turn
            assert v.odometry[2] == pytest.approx(v.odometry_multipliers[2] * math.remainder(turned, 2 * math.pi),
                                                  abs=1e-6)


# ---------------------------------------------------------------------------------------------- 10. shipped worlds
def test_every_shipped_world_runs_five_seconds(worlds_dir):
    paths = sorted(worlds_dir.glob("**/*.world.xml"))
    assert len(paths) >= 13
    t0 = time.perf_counter()
    bad = []
    for p in paths:
        w = mv.load_world(p)
        w.run(5.0)
        assert w.time == pytest.approx(5.0)
        bad += [(p.name, n, v.pose) for n, v in w.vehicles.items() if not all(map(math.isfinite, v.pose))]
    print(f"{len(paths)} worlds x 5 s simulated in {time.perf_counter() - t0:.2f} s")
    assert not bad


# ---------------------------------------------------------------------------------------------- 11. blow-ups
BOT = """<vehicle name="{name}">
  <dynamics class="differential">
    <l_wheel pos="0 0.5" {inertia}/><r_wheel pos="0 -0.5" {inertia}/>
  </dynamics>
  <init_pose>{x} 0 0</init_pose>
</vehicle>"""


def test_nan_velocity_is_reported_with_vehicle_and_step(tmp_path):
    """A strict world stops at the step (the default resets the vehicle: test_vehicle_faults.py)."""
    w = make_world(tmp_path, BOT.format(name="good", inertia="", x=0) + BOT.format(name="wrecked", inertia="", x=5),
                   dt=0.005)
    w.strict = True
    w.run(0.05)  # 10 fine steps
    w.start().physics.bodies.vehicle_bodies["wrecked"].linearVelocity = (math.nan, 0.0)
    with pytest.raises(SimulationError) as ei:
        w.step()
    msg = str(ei.value)
    assert "'wrecked'" in msg and "step 11" in msg and "NaN" in msg and "good" not in msg


def test_unstable_wheel_spin_is_reported_with_vehicle_and_step(tmp_path):
    """Strict world. Wheel inertia 1e-307 kg·m², no axle damping, 1e6 N·m: the slipping wheel gains
    dt·(τ − R·F_max)/I ~ 5e308 rad/s, so ω overflows to inf in the first step; the step that does it
    raises, naming the vehicle, the wheel and the step."""
    bot = BOT.format(name="spinner", inertia='inertia="1e-307"', x=0).replace(
        "</dynamics>", '</dynamics><friction class="default"><C_damping>0</C_damping></friction>')
    w = make_world(tmp_path, bot, dt=0.005)
    w.strict = True
    v = w.vehicles["spinner"]
    v.controller.torque_l = v.controller.torque_r = -1e6
    done = 0
    with pytest.raises(SimulationError) as ei:
        for _ in range(1000):
            w.step()
            done += 1
    msg = str(ei.value)
    assert 0 <= done < 10
    assert "'spinner'" in msg and f"step {done + 1}" in msg and "wheel 1" in msg


# ---------------------------------------------------------------------------------------------- 12. raw and twists
def test_raw_controller_refuses_twists(tmp_path):
    w = make_world(tmp_path, BOT.format(name="manual", inertia="", x=0), dt=0.005)
    with pytest.raises(mv.ControllerError) as ei:
        w.vehicles["manual"].set_twist(1.0, 0.0, 0.0)
    assert "'manual'" in str(ei.value) and "raw" in str(ei.value)


# ---------------------------------------------------------------------------------------------- 13. CSV loggers
POSE_HEADER = "Timestamp,q0x,q1y,q2z,q3yaw,q4pitch,q5roll,dqx,dqy,dqw,odo_x,odo_y,odo_yaw"
WHEEL_HEADER = "Timestamp,wheel_pos_x,wheel_pos_y,torque,force_z,velocity_x,velocity_y,friction_x,friction_y"


def read_csv(path: Path) -> tuple[str, list[list[float]]]:
    lines = path.read_text().splitlines()
    return lines[0], [[float(x) for x in row] for row in csv.reader(lines[1:])]


def test_csv_loggers(tmp_path):
    """A 3-wheel robot logging from the start, dt = 10 ms: after 10 steps the pose file has 10 rows, t = 0.01 …
    0.10 s, the last one the vehicle's state bit for bit (%.17g round-trips), and one file per wheel (load
    Fz = 15·g/3 = 49.05 N). ``stop()`` stops rows; ``new_session()`` continues in ``_session2`` files."""
    log = tmp_path / "logs"
    body = (f'<vehicle name="bot"><dynamics class="differential_3_wheels"><controller class="twist_pid"><V>0.5</V>'
            f'<W>20</W></controller></dynamics><log_path>{log}</log_path>'
            f'<auto_start_recording>true</auto_start_recording><init_pose>1 2 0</init_pose></vehicle>')
    w = make_world(tmp_path, body, dt=0.01)
    v = w.vehicles["bot"]
    w.run(0.1)
    v.logger.stop()
    names = {"mvsim_bot_pose.csv", "mvsim_bot_wheel_1.csv", "mvsim_bot_wheel_2.csv", "mvsim_bot_wheel_3.csv"}
    assert {p.name for p in log.iterdir()} == names
    header, rows = read_csv(log / "mvsim_bot_pose.csv")
    assert header == POSE_HEADER
    assert [r[0] for r in rows] == pytest.approx([0.01 * k for k in range(1, 11)], abs=1e-12)
    assert tuple(rows[-1][1:]) == (*v.pose, *v.twist, *v.odometry)
    wh = w.start().physics.wheels
    for i in range(3):
        header, rows = read_csv(log / f"mvsim_bot_wheel_{i + 1}.csv")
        assert header == WHEEL_HEADER and len(rows) == 10
        assert rows[-1][1:] == [wh.x[i], wh.y[i], wh.torque[i], wh.fz[i], wh.vx[i], wh.vy[i], wh.fx[i], wh.fy[i]]
        assert rows[-1][4] == pytest.approx(15.0 * 9.81 / 3)
    assert rows[-1][3] == 0.0  # the caster gets no torque

    w.run(0.05)  # stopped: no rows
    assert len(read_csv(log / "mvsim_bot_pose.csv")[1]) == 10
    v.logger.start()
    v.logger.new_session()
    w.run(0.03)
    v.logger.stop()
    assert len(read_csv(log / "mvsim_bot_pose.csv")[1]) == 10
    header, rows = read_csv(log / "mvsim_bot_pose_session2.csv")
    assert header == POSE_HEADER and [r[0] for r in rows] == pytest.approx([0.16, 0.17, 0.18], abs=1e-12)
    for i in range(1, 4):
        assert len(read_csv(log / f"mvsim_bot_wheel_{i}_session2.csv")[1]) == 3
