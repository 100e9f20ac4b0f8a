"""``World.snapshot`` / ``World.restore``: a run restored from a snapshot goes on bit for bit as the run that was
captured, in the same process or another one.

Worlds: a small room (4 m × 4 m walls) with a twist_pid robot (the compiled PID batch: integrators matter) carrying a
181-ray noisy lidar and an IMU with noise and bias random walks, driven into a wall (touching it at step 500) and
away again; an Ackermann car (twist_front_steer_pid: steered wheels, rebuilt wheel boxes) pushing a block; and
``worlds/demo.world.xml`` (two vehicles, pallets on ground-friction joints, an occupancy grid). Every comparison is
``np.array_equal`` on everything observable at every step: poses, twists, odometry, wheel spins, spin angles and
yaws, block poses, lidar ranges, IMU readings, collision flags, the clock and the random generator.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.dynamics import box2d_state

REPO = Path(__file__).resolve().parents[2]

ROOM = """<mvsim_world version="1.0">
  <simul_timestep>0.005</simul_timestep>
  <walls>
    <shape>
      <pt>-2 -2</pt><pt>2 -2</pt> <pt>2 -2</pt><pt>2 2</pt> <pt>2 2</pt><pt>-2 2</pt> <pt>-2 2</pt><pt>-2 -2</pt>
    </shape>
    <height>0.5</height> <thickness>0.1</thickness>
  </walls>
  <vehicle name="r1">
    <init_pose>0 0 20</init_pose>
    <dynamics class="differential">
      <controller class="twist_pid"><KP>10</KP><KI>2</KI><max_torque>20</max_torque></controller>
    </dynamics>
    <sensor class="laser" name="laser1">
      <pose_3d>0.2 0 0.3 0 0 0</pose_3d> <nrays>181</nrays> <sensor_period>0.05</sensor_period>
      <range_std_noise>0.02</range_std_noise>
    </sensor>
    <sensor class="imu" name="imu1">
      <sensor_period>0.02</sensor_period>
      <angular_velocity_random_walk_std_noise>0.01</angular_velocity_random_walk_std_noise>
      <linear_acceleration_random_walk_std_noise>0.02</linear_acceleration_random_walk_std_noise>
    </sensor>
  </vehicle>
</mvsim_world>
"""
ROOM_COMMANDS = {0: {"r1": (1.0, 0.0, 0.0)}, 520: {"r1": (-0.5, 0.0, 0.8)}, 700: {"r1": (0.6, 0.0, -1.0)},
                 850: {"r1": (0.0, 0.0, 0.0)}}
"""Step -> twists given before it: into the wall (touching it from step ~300), back and round, stop."""

CAR = """<mvsim_world version="1.0">
  <simul_timestep>0.005</simul_timestep>
  <vehicle name="car1">
    <init_pose>0 0 0</init_pose>
    <dynamics class="ackermann">
      <controller class="twist_front_steer_pid"><KP>400</KP><KI>50</KI><max_torque>600</max_torque></controller>
    </dynamics>
    <sensor class="laser" name="laser1">
      <pose_3d>1.0 0 0.5 0 0 0</pose_3d> <nrays>91</nrays> <sensor_period>0.1</sensor_period>
      <range_std_noise>0.01</range_std_noise>
    </sensor>
  </vehicle>
  <block name="box1">
    <mass>20</mass> <init_pose>4 0.5 0</init_pose> <ground_friction>0.5</ground_friction>
    <shape><pt>-0.3 -0.3</pt><pt>0.3 -0.3</pt><pt>0.3 0.3</pt><pt>-0.3 0.3</pt></shape>
  </block>
</mvsim_world>
"""
CAR_COMMANDS = {0: {"car1": (2.0, 0.0, 0.1)}, 300: {"car1": (1.5, 0.0, -0.4)}, 600: {"car1": (2.5, 0.0, 0.5)},
                900: {"car1": (0.0, 0.0, 0.0)}}
DEMO_COMMANDS = {0: {"bot1": (1.0, 0.0, -0.45), "car1": (2.5, 0.0, 0.0)}, 520: {"bot1": (0.5, 0.0, 0.6),
                                                                                "car1": (-1.0, 0.0, 0.3)},
                 750: {"bot1": (1.0, 0.0, 0.3), "car1": (1.0, 0.0, -0.3)}}
"""bot1 curves into the map's wall (touching its grid squares at step 500) and away, car1 drives into the shelf row
before it and back."""

Record = list[np.ndarray]


@pytest.fixture
def room(tmp_path: Path) -> Path:
    p = tmp_path / "room.world.xml"
    p.write_text(ROOM)
    return p


@pytest.fixture
def car(tmp_path: Path) -> Path:
    p = tmp_path / "car.world.xml"
    p.write_text(CAR)
    return p


def observe(w: mv.World) -> Record:
    """Everything observable after a step, as arrays."""
    ph = w.physics
    out = [np.array([w.time, float(w.rng.generator.bit_generator.state["state"]["state"])]), ph.state, ph.twist,
           ph.odometry, ph.wheels.omega, ph.wheels.phi, ph.wheels.yaw, ph.z,
           np.array([b.pose for b in w.blocks.values()], dtype=float),
           np.array([o.collision for o in (*w.vehicles.values(), *w.blocks.values())], dtype=float)]
    for s in w.sensor_scheduler.sensors:
        last = s.last
        if last is not None:
            out += [np.array([last.stamp])] + [v for v in vars(last).values() if isinstance(v, np.ndarray)]
    return [np.array(a, dtype=float, copy=True).ravel() for a in out]


def drive(w: mv.World, commands: dict[int, dict[str, tuple[float, float, float]]], first: int,
          last: int) -> list[Record]:
    """Steps ``first``..``last - 1`` (counted from the start), giving the commands due before each."""
    out = []
    for i in range(first, last):
        for name, twist in commands.get(i, {}).items():
            w.vehicles[name].set_twist(*twist)
        w.step()
        out.append(observe(w))
    return out


def assert_identical(got: list[Record], want: list[Record]) -> None:
    assert len(got) == len(want)
    for i, (g, r) in enumerate(zip(got, want, strict=True)):
        assert len(g) == len(r), f"step {i}: other observations"
        for a, b in zip(g, r, strict=True):
            assert np.array_equal(a, b, equal_nan=True), f"step {i} after the snapshot differs"


def touching(state: mv.WorldState) -> int:
    """Touching Box2D contacts in a snapshot."""
    return int((state.physics["box2d"].contact_flags & 2).astype(bool).sum())


# ------------------------------------------------------------------------------------------------ exactness
@pytest.mark.parametrize("at", [200, 500])  # before the robot reaches the wall; pressed against it
def test_the_room_run_goes_on_bit_for_bit_in_a_new_world(room: Path, at: int) -> None:
    w = mv.load_world(room, seed=7)
    drive(w, ROOM_COMMANDS, 0, at)
    state = w.snapshot()
    assert touching(state) == (0 if at == 200 else 1)  # the contact case: r1 against a wall, impulses included
    want = drive(w, ROOM_COMMANDS, at, 1000)
    other = mv.load_world(room, seed=7)  # not started: restore starts it
    other.restore(state)
    assert other.time == w.timestep * at and other.vehicles["r1"].sensors["laser1"].last is not None
    assert_identical(drive(other, ROOM_COMMANDS, at, 1000), want)


def test_restoring_twice_gives_the_same_run_and_a_snapshot_does_not_change(room: Path) -> None:
    w = mv.load_world(room, seed=7)
    drive(w, ROOM_COMMANDS, 0, 500)
    state = w.snapshot()
    before = pickle.dumps(state)
    want = drive(w, ROOM_COMMANDS, 500, 1000)
    assert pickle.dumps(state) == before  # later steps left it alone
    w.restore(state)
    assert_identical(drive(w, ROOM_COMMANDS, 500, 1000), want)
    w.restore(state)  # restoring did not change it either
    assert pickle.dumps(state) == before
    assert_identical(drive(w, ROOM_COMMANDS, 500, 1000), want)


def test_a_pickled_state_restores_as_the_original(room: Path) -> None:
    w = mv.load_world(room, seed=7)
    drive(w, ROOM_COMMANDS, 0, 500)
    state = w.snapshot()
    want = drive(w, ROOM_COMMANDS, 500, 700)
    copy = pickle.loads(pickle.dumps(state))
    assert isinstance(copy, mv.WorldState)
    w.restore(copy)
    assert_identical(drive(w, ROOM_COMMANDS, 500, 700), want)


def test_a_snapshot_at_the_start_repeats_the_whole_run(room: Path) -> None:
    w = mv.load_world(room, seed=7)
    state = w.snapshot()  # starts the world
    want = drive(w, ROOM_COMMANDS, 0, 400)
    w.restore(state)
    assert w.time == 0.0 and w.vehicles["r1"].sensors["laser1"].last is None
    assert_identical(drive(w, ROOM_COMMANDS, 0, 400), want)
    assert_identical(drive(mv.load_world(room, seed=7), ROOM_COMMANDS, 0, 400), want)  # as a fresh load


def test_an_ackermann_car_pushing_a_block_goes_on_bit_for_bit(car: Path) -> None:
    w = mv.load_world(car, seed=2)
    drive(w, CAR_COMMANDS, 0, 500)
    state = w.snapshot()
    assert w.vehicles["car1"].wheels[2].yaw != 0.0  # steered: its front wheel boxes were rebuilt
    assert touching(state) > 0 and w.blocks["box1"].pose[:2] != (4.0, 0.5)  # pushing the block
    assert len(state.physics["box2d"].joint_types) == 2  # the block's ground-friction joints, impulses included
    want = drive(w, CAR_COMMANDS, 500, 1000)
    other = mv.load_world(car, seed=2)
    other.restore(state)
    assert_identical(drive(other, CAR_COMMANDS, 500, 1000), want)


def test_the_demo_world_goes_on_bit_for_bit() -> None:
    path = REPO / "worlds" / "demo.world.xml"
    w = mv.load_world(path, seed=4)
    drive(w, DEMO_COMMANDS, 0, 500)
    state = w.snapshot()
    b2 = state.physics["box2d"]
    assert touching(state) > 0 and w.physics.colliding == {"bot1"}  # against grid squares (a wall of the map)
    assert len(b2.joint_types) == 6  # the pallets' ground-friction joints
    want = drive(w, DEMO_COMMANDS, 500, 1000)
    other = mv.load_world(path, seed=4)
    other.start()
    drive(other, DEMO_COMMANDS, 0, 123)  # wherever it is: restore puts it where the snapshot was
    other.restore(state)
    assert_identical(drive(other, DEMO_COMMANDS, 500, 1000), want)


FRESH_PROCESS = textwrap.dedent("""
    import pickle, sys
    import numpy as np
    sys.path.insert(0, {tests!r})
    import mvsim_core as mv
    from test_world_snapshot import ROOM_COMMANDS, drive
    w = mv.load_world({world!r}, seed=7)
    w.start()
    with open({state!r}, "rb") as f:
        w.restore(pickle.load(f))
    with open({out!r}, "wb") as f:
        pickle.dump(drive(w, ROOM_COMMANDS, 500, 1000), f)
""")


def test_a_state_restored_in_another_process_goes_on_bit_for_bit(room: Path, tmp_path: Path) -> None:
    w = mv.load_world(room, seed=7)
    drive(w, ROOM_COMMANDS, 0, 500)
    (tmp_path / "state.pkl").write_bytes(pickle.dumps(w.snapshot()))
    want = drive(w, ROOM_COMMANDS, 500, 1000)
    script = FRESH_PROCESS.format(tests=str(Path(__file__).parent), world=str(room),
                                  state=str(tmp_path / "state.pkl"), out=str(tmp_path / "out.pkl"))
    subprocess.run([sys.executable, "-c", script], check=True, cwd=REPO, timeout=600)
    assert_identical(pickle.loads((tmp_path / "out.pkl").read_bytes()), want)


# ------------------------------------------------------------------------------------------------ refusals
def test_a_world_with_other_objects_is_refused_and_left_alone(room: Path, tmp_path: Path) -> None:
    w = mv.load_world(room, seed=7)
    drive(w, ROOM_COMMANDS, 0, 100)
    state = w.snapshot()
    other_file = tmp_path / "other.world.xml"
    other_file.write_text(ROOM.replace('name="r1"', 'name="robot"'))
    other = mv.load_world(other_file, seed=7)
    other.start()
    pose = other.vehicles["robot"].pose
    with pytest.raises(mv.SnapshotError, match=r"vehicles 'r1' in the snapshot but not in this world; vehicles "
                                               r"'robot' in this world but not in the snapshot"):
        other.restore(state)
    assert other.time == 0.0 and other.vehicles["robot"].pose == pose


def test_a_spawned_object_must_go_before_restoring(room: Path) -> None:
    w = mv.load_world(room, seed=7)
    drive(w, ROOM_COMMANDS, 0, 300)
    state = w.snapshot()
    want = drive(w, ROOM_COMMANDS, 300, 600)
    w.spawn('<block name="crate"><mass>3</mass><init_pose>-1 -1 0</init_pose></block>')
    with pytest.raises(mv.SnapshotError, match="blocks 'crate' in this world but not in the snapshot"):
        w.restore(state)
    w.remove_spawned()
    w.restore(state)
    assert_identical(drive(w, ROOM_COMMANDS, 300, 600), want)


def test_without_the_expected_box2d_layout_a_snapshot_is_refused(room: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    w = mv.load_world(room, seed=7)
    w.start()
    monkeypatch.setattr(box2d_state, "_layout", False)
    with pytest.raises(mv.SnapshotError, match="memory layout"):
        w.snapshot()


def test_snapshot_and_restore_inside_a_batch_are_refused(room: Path) -> None:
    w = mv.load_world(room, seed=7)
    state = w.snapshot()
    with w.batch():
        with pytest.raises(mv.MvsimError, match="inside world.batch"):
            w.snapshot()
        with pytest.raises(mv.MvsimError, match="inside world.batch"):
            w.restore(state)


def sensors_of(w: mv.World) -> dict[str, Any]:
    return {s.name: s for s in w.sensor_scheduler.sensors}


def test_the_imu_history_and_biases_come_back(room: Path) -> None:
    w = mv.load_world(room, seed=7)
    drive(w, ROOM_COMMANDS, 0, 300)
    imu = sensors_of(w)["imu1"]
    bias = imu.noise.gyro_bias.copy()
    state = w.snapshot()
    w.run(1.0)
    assert not np.array_equal(imu.noise.gyro_bias, bias)  # the random walk went on
    w.restore(state)
    assert np.array_equal(imu.noise.gyro_bias, bias) and imu._prev_t == pytest.approx(1.5)


def test_a_removed_object_comes_back_by_reset_of_the_objects_then_restore_is_exact(car: Path) -> None:
    w = mv.load_world(car, seed=2)
    drive(w, CAR_COMMANDS, 0, 400)
    state = w.snapshot()
    want = drive(w, CAR_COMMANDS, 400, 700)
    w.remove("box1")
    w.step()
    with pytest.raises(mv.SnapshotError, match="blocks 'box1' in the snapshot but not in this world"):
        w.restore(state)
    w.reset(objects=True, state=False, time=False)  # box1 back (the physics rebuilt)
    w.restore(state)
    assert_identical(drive(w, CAR_COMMANDS, 400, 700), want)
