"""The registered configurations: Gymnasium's environment checker passes for every id (headless, and with both render
modes where offscreen OpenGL and a virtual display exist), their spaces, control period and time limit."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from gym_checks import IDS
from gymnasium.utils.env_checker import check_env

from mvsim_core.errors import MvsimError
from mvsim_core.gym.goal_reaching_env import GoalReachingEnv


@pytest.mark.parametrize("env_id", IDS)
def test_env_checker_passes_without_a_warning(make, env_id):
    env = make(env_id)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped, skip_render_check=True)
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("env_id", IDS)
def test_env_checker_passes_with_both_render_modes(make, env_id, offscreen_gl, display):
    """check_env makes the environment again in each mode of its metadata (rgb_array offscreen, human in a window on
    the virtual display), renders and closes it twice."""
    env = make(env_id, render_mode="rgb_array")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []


def test_spaces_of_goal_reaching(make):
    env = make(IDS[0])
    obs_space, act_space = env.observation_space, env.action_space
    assert list(obs_space.spaces) == ["goal", "lidar", "velocity"]  # a Dict space sorts its keys
    lidar = obs_space["lidar"]
    assert lidar.shape == (181,) and lidar.dtype == np.float32 and lidar.low.min() == 0.0 and lidar.high.max() == 5.0
    np.testing.assert_array_equal(obs_space["velocity"].high, np.float32([1.2, 4.0]))  # 2 x (0.6 m/s, 2 rad/s)
    reach = np.float32(math.hypot(6.4, 6.4))  # the diagonal of the room's grid
    np.testing.assert_array_equal(obs_space["goal"].high, [reach, reach])
    assert act_space.shape == (2,) and (act_space.low == -1).all() and (act_space.high == 1).all()
    agent = env.unwrapped.agent
    assert agent.kind == "twist" and agent.high.tolist() == [0.6, 2.0]
    lim = agent.vehicle.command_limits
    assert (lim.max_speed, lim.max_omega) == (0.6, 2.0)


def test_ackermann_variant_drives_with_speed_and_steering(make):
    env = make(IDS[1])
    agent = env.unwrapped.agent
    assert agent.kind == "ackermann" and agent.vehicle.name == "car"
    assert agent.high[0] == 0.6 and agent.high[1] == pytest.approx(math.radians(35.0))
    env.reset(seed=2)
    ctrl = agent.vehicle.controller
    env.step(np.float32([0.5, -1.0]))  # half speed, full right
    assert ctrl.setpoint.vx == pytest.approx(0.3)
    wheelbase = agent.vehicle.dynamics.wheelbase
    assert ctrl.setpoint.omega == pytest.approx(0.3 * math.tan(-math.radians(35.0)) / wheelbase)


def test_control_period_and_time_limit(make):
    env = make(IDS[0], max_episode_steps=12)
    env.reset(seed=0)
    times = []
    for k in range(12):
        _, _, terminated, truncated, info = env.step(np.zeros(2, np.float32))  # standing still: no goal, no hit
        times.append(info["time"])
        assert not terminated and truncated == (k == 11)
    np.testing.assert_allclose(times, 0.1 * np.arange(1, 13), atol=1e-9)
    assert env.unwrapped.substeps == 20

    env2 = make(IDS[0], control_period=0.05, observations=("lidar", "odometry"))
    obs, _ = env2.reset(seed=0)
    assert list(obs) == ["goal", "lidar", "odometry"]  # in the order of the space
    assert env2.step(np.zeros(2, np.float32))[4]["time"] == pytest.approx(0.05)


def test_default_time_limit_is_300_steps(make):
    env = make(IDS[0])
    env.reset(seed=0)
    flags = [env.step(np.zeros(2, np.float32))[2:4] for _ in range(300)]
    assert flags[:-1] == [(False, False)] * 299 and flags[-1] == (False, True)


def test_unknown_variant_is_refused():
    with pytest.raises(MvsimError, match="unknown goal-reaching variant 'tank'; variants: differential, ackermann"):
        GoalReachingEnv("tank")
