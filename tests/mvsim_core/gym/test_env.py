"""MvsimEnv on any world: what the observation holds (the vehicle's sensors as sampled, its odometry), how actions
become commands (bounds, normalization, clipping, twist or Ackermann), the control period, tasks made of functions,
episode seeds, and the arguments it refuses."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from gym_checks import REPO, same

import mvsim_core as mv
from mvsim_core.errors import MvsimError, SnapshotError
from mvsim_core.gym.env import MvsimEnv
from mvsim_core.gym.task import CallableTask

DEMO = REPO / "worlds" / "demo.world.xml"

SENSORS_WORLD = """<mvsim_world version="1.0">
  <simul_timestep>0.01</simul_timestep>
  <block name="wall"><static>true</static><init_pose>3 0 0</init_pose><zmin>0</zmin><zmax>1</zmax>
    <shape><pt>0 -5</pt><pt>0.2 -5</pt><pt>0.2 5</pt><pt>0 5</pt></shape></block>
  <vehicle name="bot">
    <init_pose>0 0 0</init_pose>
    <dynamics class="differential">
      <l_wheel pos="0 0.2" mass="1" width="0.05" diameter="0.2"/>
      <r_wheel pos="0 -0.2" mass="1" width="0.05" diameter="0.2"/>
      <chassis mass="10" zmin="0.05" zmax="0.3"/>
      <controller class="twist_ideal"/>
    </dynamics>
    <sensor class="laser" name="scan"><pose_3d>0 0 0.2 0 0 0</pose_3d><nrays>3</nrays><fov_degrees>90</fov_degrees>
      <sensor_period>0.1</sensor_period><max_range>10</max_range><range_std_noise>0</range_std_noise>
      <angle_std_noise_deg>0</angle_std_noise_deg></sensor>
    <sensor class="imu" name="imu"><sensor_period>0.05</sensor_period></sensor>
    <sensor class="lidar3d" name="velo"><pose_3d>0 0 0.5 0 0 0</pose_3d><vert_nrays>2</vert_nrays>
      <vert_fov_degrees>10</vert_fov_degrees><horz_nrays>8</horz_nrays><max_range>10</max_range>
      <range_std_noise>0</range_std_noise><sensor_period>0.1</sensor_period></sensor>
    <sensor class="gnss" name="gps"/>
  </vehicle>
</mvsim_world>
"""


@pytest.fixture
def sensors_world(tmp_path: Path) -> Path:
    p = tmp_path / "sensors.world.xml"
    p.write_text(SENSORS_WORLD)
    return p


def test_default_observation_of_the_demo_robot_is_its_scan_and_odometry():
    env = MvsimEnv(DEMO, "bot1")
    assert list(env.observation_space.spaces) == ["laser1", "odometry"]
    scan = env.observation_space["laser1"]
    assert scan.shape == (541,) and scan.high.max() == 20.0
    obs, info = env.reset(seed=3)
    laser = env.world.vehicles["bot1"].sensors["laser1"]
    assert laser.last.stamp == 0.0 and info == {"time": 0.0}  # sampled at the reset, not 0.1 s later
    np.testing.assert_array_equal(obs["laser1"], laser.last.ranges)
    assert (obs["laser1"] < 20.0).sum() > 100  # the warehouse's shelves and walls are in reach
    np.testing.assert_array_equal(obs["odometry"], np.zeros(5, np.float32))
    for _ in range(10):
        obs, reward, terminated, truncated, info = env.step(np.float32([0.5, 0.0]))
    assert (reward, terminated, truncated) == (0.0, False, False)  # no task: nothing asked
    assert laser.last.stamp == pytest.approx(1.0)  # 10 Hz, sampled at the end of every 0.1 s step
    np.testing.assert_array_equal(obs["laser1"], laser.last.ranges)
    assert obs["laser1"] is not laser.last.ranges  # a copy: the caller may keep or change it
    x, y, yaw = env.world.vehicles["bot1"].odometry
    np.testing.assert_array_equal(obs["odometry"][:3], np.float32([x, y, math.atan2(math.sin(yaw), math.cos(yaw))]))
    v, _, w = env.world.vehicles["bot1"].odometry_velocity()
    np.testing.assert_array_equal(obs["odometry"][3:], np.float32([v, w]))
    assert 0.44 < x < 0.49 and obs["odometry"][3] == pytest.approx(0.5, abs=0.02)  # 1 s at 0.5 m/s from rest


def test_twist_actions_in_physical_units_are_clipped_to_the_vehicle_limits():
    env = MvsimEnv(DEMO, "bot1", max_speed=1.0, max_omega=0.5)
    np.testing.assert_array_equal(env.action_space.high, np.float32([1.0, 0.5]))
    env.reset(seed=0)
    ctrl = env.world.vehicles["bot1"].controller
    env.step(np.float32([3.0, -2.0]))
    assert (ctrl.setpoint.vx, ctrl.setpoint.vy, ctrl.setpoint.omega) == (1.0, 0.0, -0.5)
    assert env.agent.command(np.float32([0.25, 0.125])) == (0.25, 0.125)
    with pytest.raises(MvsimError, match="an action is 2 numbers"):
        env.step(np.float32([0.1]))


def test_normalized_actions_scale_by_the_bounds():
    env = MvsimEnv(DEMO, "bot1", normalize_actions=True, max_speed=1.2, max_omega=0.8)
    assert (env.action_space.low == -1).all() and (env.action_space.high == 1).all()
    assert env.agent.command([0.5, -0.25]) == (pytest.approx(0.6), pytest.approx(-0.2))
    assert env.agent.command([4.0, -4.0]) == (pytest.approx(1.2), pytest.approx(-0.8))


def test_ackermann_vehicle_takes_speed_and_steering_by_default():
    env = MvsimEnv(DEMO, "car1", max_speed=5.0)
    assert env.agent.kind == "ackermann"
    steer = env.world.vehicles["car1"].command_limits.max_steer
    np.testing.assert_allclose(env.action_space.high, [5.0, steer], rtol=1e-6)
    env_twist = MvsimEnv(DEMO, "car1", action="twist", max_speed=5.0, max_omega=1.0)  # its controller takes twists
    assert env_twist.agent.kind == "twist"


def test_imu_and_3d_lidar_observations(sensors_world):
    env = MvsimEnv(sensors_world, observations=("scan", "imu", "velo", "pose"))
    spaces = env.observation_space
    assert spaces["imu"].shape == (6,) and spaces["velo"].shape == (2, 8) and spaces["pose"].shape == (3,)
    obs, _ = env.reset(seed=0)
    np.testing.assert_allclose(obs["scan"], [3 * math.sqrt(2), 3.0, 3 * math.sqrt(2)], rtol=1e-6)  # the wall at 3 m
    np.testing.assert_allclose(obs["imu"][3:], [0, 0, 9.8], atol=0.1)  # at rest: +g on z
    velo = obs["velo"]
    assert velo[:, 4] == pytest.approx(3.0 / math.cos(math.radians(5)), rel=1e-3)  # azimuth 0 (index 4): the wall
    assert velo[1, 0] == 10.0  # behind, the upper ring (+5°): nothing within reach
    assert velo[0, 0] == pytest.approx(0.5 / math.sin(math.radians(5)), rel=1e-3)  # the lower one (−5°): the floor
    np.testing.assert_array_equal(obs["pose"], np.float32([0, 0, 0]))


def test_the_agent_reads_the_sensors_of_its_observations_and_no_others(sensors_world):
    """The env's agent wants the sensors it observes (reader ``gym``): in a world that samples on demand they are
    sampled, the others not."""
    env = MvsimEnv(sensors_world, observations=("scan", "imu", "pose"))
    sensors = env.world.vehicles["bot"].sensors
    assert {n: s.readers for n, s in sensors.items()} == {
        "scan": frozenset({"gym"}), "imu": frozenset({"gym"}), "velo": frozenset(), "gps": frozenset()}
    env.world.sensors_on_demand = True
    env.reset(seed=0)
    for _ in range(5):
        env.step(np.zeros(2, dtype=np.float32))
    assert sensors["scan"].last is not None and sensors["imu"].last is not None
    assert sensors["velo"].last is None and sensors["gps"].last is None


def test_sensors_that_cannot_be_observed_are_named(sensors_world):
    assert list(MvsimEnv(sensors_world).observation_space.spaces) == ["imu", "odometry", "scan", "velo"]
    with pytest.raises(MvsimError, match="sensor 'gps' is of class gnss, which cannot be observed; observations: "
                                         "scan, imu, velo, odometry, velocity, pose"):
        MvsimEnv(sensors_world, observations=("gps",))
    with pytest.raises(MvsimError, match="no observation 'camera'"):
        MvsimEnv(sensors_world, observations=("camera",))


def test_callable_task_gives_reward_and_termination(sensors_world):
    task = CallableTask(reward=lambda world, agent: world.vehicles[agent].pose[0],
                        terminated=lambda world, agent: world.vehicles[agent].pose[0] > 0.45)
    env = MvsimEnv(sensors_world, task=task, max_speed=1.0, max_omega=1.0)
    env.reset(seed=0)
    rewards, done = [], False
    while not done:
        _, reward, done, truncated, _ = env.step(np.float32([1.0, 0.0]))  # ideal controller: 1 m/s at once
        rewards.append(reward)
    assert len(rewards) == 5 and 0.08 < rewards[0] < 0.1  # the command acts from the step after it is given
    np.testing.assert_allclose(np.diff(rewards), 0.1, atol=1e-3)  # then 1 m/s: 0.1 m per control period


def test_episodes_without_a_seed_go_on_drawing_and_a_seed_repeats_them(make):
    env = make().unwrapped
    starts = []
    for seed in (7, None, None, 7, None):
        env.reset(seed=seed)
        starts.append(env.world.vehicles["robot"].pose[:2] + env.task.goals["robot"])
    assert starts[0] == starts[3] and starts[1] == starts[4]
    assert len({starts[0], starts[1], starts[2]}) == 3


def test_first_reset_without_a_seed_takes_one_from_gymnasiums_generator(make):
    a, b = make().unwrapped, make().unwrapped
    a.reset()
    b.reset()
    assert a.world.rng.seed != b.world.rng.seed  # entropy
    c = make().unwrapped
    c.np_random, _ = __import__("gymnasium").utils.seeding.np_random(5)
    d = make().unwrapped
    d.np_random, _ = __import__("gymnasium").utils.seeding.np_random(5)
    c.reset()
    d.reset()
    assert c.world.rng.seed == d.world.rng.seed


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"vehicle": "tractor"}, "no vehicle 'tractor' in .*demo.world.xml; vehicles: bot1, car1"),
    ({"vehicle": "bot1", "control_period": 0.0123}, r"control_period = 0.0123 s is not a whole number of physics "
                                                    r"steps of 0.005 s"),
    ({"vehicle": "bot1", "action": "ackermann"}, "vehicle 'bot1' \\(differential\\) does not steer"),
    ({"vehicle": "bot1", "action": "tank"}, "unknown action kind 'tank'"),
    ({"vehicle": "bot1", "render_mode": "ascii"}, "unknown render_mode 'ascii'"),
    ({"vehicle": "bot1", "max_episode_steps": 0}, "max_episode_steps must be at least 1"),
    ({"vehicle": "bot1", "observations": ("laser1", "laser1")}, "an observation is named twice"),
])
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(MvsimError, match=message):
        MvsimEnv(DEMO, **kwargs)


def test_a_started_world_is_refused():
    world = mv.load_world(DEMO).start()
    with pytest.raises(MvsimError, match="the world has started already"):
        MvsimEnv(world)


def test_reset_by_world_restore_gives_the_episodes_of_world_reset(make, monkeypatch):
    """reset() restores the snapshot taken when the world started (World.restore); without World.snapshot it goes
    goes back by World.reset where the world cannot take a snapshot. Both give the same first observations, seeded
    and unseeded."""
    env = make().unwrapped
    assert env.reset_method == "World.restore"
    got = [env.reset(seed=s)[0] for s in (3, None)]
    env.action_space.seed(0)
    for _ in range(30):
        env.step(env.action_space.sample())
    got.append(env.reset(seed=5)[0])
    def cannot(self):
        raise SnapshotError("no snapshot here")

    monkeypatch.setattr(mv.World, "snapshot", cannot)
    plain = make().unwrapped
    assert plain.reset_method == "World.reset"
    expected = [plain.reset(seed=s)[0] for s in (3, None)]
    plain.action_space.seed(0)
    for _ in range(30):
        plain.step(plain.action_space.sample())
    expected.append(plain.reset(seed=5)[0])
    assert all(same(a, b) for a, b in zip(got, expected, strict=True))


def test_step_before_reset_is_refused():
    env = MvsimEnv(DEMO, "bot1")
    with pytest.raises(MvsimError, match=r"call reset\(\) before step\(\)"):
        env.step(np.zeros(2, np.float32))


def test_camera_observation_is_its_image(offscreen_gl):
    """r2 of the viewer's test world carries a 64 x 48 camera looking level across the grey floor (#c8c8c8, full
    ambient light) to the horizon, the background above it."""
    env = MvsimEnv(REPO / "tests" / "mvsim_core" / "gui" / "data" / "viewer.world.xml", "r2",
                   observations=("cam1",), max_speed=1.0, max_omega=1.0)
    space = env.observation_space["cam1"]
    assert space.shape == (48, 64, 3) and space.dtype == np.uint8
    obs, _ = env.reset(seed=0)
    cam = env.world.vehicles["r2"].sensors["cam1"]
    assert cam.last.stamp == 0.0  # rendered at the reset
    np.testing.assert_array_equal(obs["cam1"], cam.last.rgb)
    img = obs["cam1"].astype(int)
    assert (img[-1] == 200).all() and (img[0] != 200).all()  # floor below, background above


def test_end_step_writes_into_given_arrays_what_step_returns(sensors_world):
    """begin_step, advance and end_step(out) (what a batched environment calls) give step()'s results, the
    observation written into the arrays handed (every kind: scan, IMU, 3D lidar, odometry, velocity, pose)."""
    keys = ("scan", "imu", "velo", "odometry", "velocity", "pose")
    plain, split = (MvsimEnv(sensors_world, observations=keys, task=CallableTask(reward=lambda w, a: w.time))
                    for _ in range(2))
    out = {k: np.full(s.shape, -7, s.dtype) for k, s in split.observation_space.spaces.items()}
    held = {k: v for k, v in out.items()}
    plain.reset(seed=4)
    split.reset(seed=4)
    for a in np.random.default_rng(0).uniform(-1, 1, (25, 2)):
        obs, reward, terminated, truncated, info = plain.step(a)
        split.begin_step(a)
        split.advance()
        got = split.end_step(out)
        assert got[0] is out and all(out[k] is held[k] for k in out)  # written in place
        assert same(obs, got[0]) and got[1:] == (reward, terminated, truncated, info)
    assert obs["velo"].shape == (2, 8) and obs["imu"].shape == (6,) and obs["pose"][0] > 0.0
