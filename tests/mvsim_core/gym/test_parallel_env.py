"""The PettingZoo parallel environment: PettingZoo's API test, two agents with a goal each, agents leaving when their
episode ends (their vehicles stop), determinism, and the scripted seeker driving both."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gym_checks import same
from pettingzoo.test import parallel_api_test

from mvsim_core.errors import MvsimError
from mvsim_core.gym.goal_reaching import vehicle_radius
from mvsim_core.gym.goal_reaching_env import goal_reaching_parallel_env
from mvsim_core.gym.goal_seeker import GoalSeeker


@pytest.fixture
def env():
    e = goal_reaching_parallel_env()
    yield e
    e.close()


def test_pettingzoo_parallel_api(env):
    parallel_api_test(env, num_cycles=300)


def test_two_agents_with_the_single_environments_spaces(env, make):
    assert env.possible_agents == ["robot1", "robot2"]
    single = make()
    for a in env.possible_agents:
        assert env.observation_space(a) == single.observation_space
        assert env.action_space(a) == single.action_space
    obs, infos = env.reset(seed=3)
    assert env.agents == ["robot1", "robot2"] and set(obs) == set(infos) == set(env.agents)
    p1, p2 = (env.world.vehicles[a].pose[:2] for a in env.agents)
    r = vehicle_radius(env.world.vehicles["robot1"])
    assert math.dist(p1, p2) >= 2 * r + env.task.margin
    g1, g2 = env.task.goals["robot1"], env.task.goals["robot2"]
    assert math.dist(g1, g2) >= 0.6 and math.dist(g1, p2) >= 2 * r and math.dist(g2, p1) >= 2 * r
    assert set(env.world.blocks) == {"goal_robot1", "goal_robot2"}


def test_an_agent_whose_episode_ended_leaves_and_stands_still(env):
    obs, _ = env.reset(seed=0)
    done = {}
    steps = 0
    while "robot1" not in done:  # robot1 rams ahead; robot2 idles
        obs, rewards, terms, truncs, infos = env.step({"robot1": np.float32([1, 0]), "robot2": np.float32([0, 0])})
        done.update({a: True for a in terms if terms[a] or truncs[a]})
        steps += 1
    assert terms["robot1"] and infos["robot1"]["collision"] and env.agents == ["robot2"]
    pose = env.world.vehicles["robot1"].pose
    for _ in range(20):
        obs, rewards, terms, truncs, infos = env.step({"robot2": np.float32([0, 0])})
        assert set(obs) == set(rewards) == {"robot2"}
    assert math.dist(env.world.vehicles["robot1"].pose[:2], pose[:2]) < 0.05  # commanded to stop
    with pytest.raises(MvsimError, match=r"actions for agents that are not live: \['robot1'\]"):
        env.step({"robot1": np.float32([1, 0])})


def test_same_seed_and_actions_same_run(env):
    other = goal_reaching_parallel_env()
    acts = np.random.default_rng(1).uniform(-1, 1, (150, 2, 2)).astype(np.float32)
    runs = []
    for e in (env, other):
        obs, _ = e.reset(seed=9)
        seen = [obs]
        for a in acts:
            if not e.agents:
                break
            obs, *_ = e.step({name: a[k] for k, name in enumerate(e.possible_agents) if name in e.agents})
            seen.append(obs)
        runs.append(seen)
    assert len(runs[0]) == len(runs[1]) > 10
    for x, y in zip(*runs, strict=True):
        assert x.keys() == y.keys() and all(same(x[a], y[a]) for a in x)


def test_seekers_bring_both_robots_home(env):
    seekers = {a: GoalSeeker(env, agent_name=a) for a in env.possible_agents}
    reached = 0
    for seed in range(5):
        obs, _ = env.reset(seed=seed)
        while env.agents:
            obs, _, _, _, infos = env.step({a: seekers[a](obs[a]) for a in env.agents})
            reached += sum(i["is_success"] for i in infos.values())
    assert reached >= 7  # of 10


def test_agents_must_be_distinct_vehicles():
    with pytest.raises(MvsimError, match="agents must name distinct vehicles"):
        goal_reaching_parallel_env(agents=["robot1", "robot1"])
    with pytest.raises(MvsimError, match="give agent_name="):
        GoalSeeker(goal_reaching_parallel_env())
