"""The goal-reaching task: where episodes start and end up, what the goal observation says, and the reward's
accounting (progress, goal, collision, step cost)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gym_checks import IDS

from mvsim_core.errors import MvsimError
from mvsim_core.gym.free_space import FreeSpace
from mvsim_core.gym.goal_reaching import GoalReaching, vehicle_radius, world_region
from mvsim_core.gym.goal_reaching_env import GoalReachingEnv
from mvsim_core.gym.goal_seeker import GoalSeeker


def test_starts_and_goals_are_clear_apart_and_in_the_room(make):
    env = make().unwrapped
    task, veh = env.task, env.agent.vehicle
    free, r = FreeSpace(env.world), vehicle_radius(veh)
    assert task.region == (-3.2, 3.2, -3.2, 3.2)  # the occupancy grid's extent
    assert r == pytest.approx(math.hypot(0.20, 0.08), abs=0.03)  # the chassis' front corners (wheels are inside)
    yaws = []
    for seed in range(30):
        env.reset(seed=seed)
        x, y, _, yaw, _, _ = veh.pose
        gx, gy = task.goals["robot"]
        assert free.is_free(x, y, r + task.margin) and free.is_free(gx, gy, r)
        assert math.hypot(gx - x, gy - y) >= 2.0
        assert -3.0 < min(x, y, gx, gy) and max(x, y, gx, gy) < 3.0  # inside the walls
        marker = env.world.blocks["goal_robot"]
        assert marker.is_visual_only and marker.pose[:2] == (gx, gy)
        yaws.append(yaw)
    assert min(yaws) < -2.0 and max(yaws) > 2.0  # headings all round


def test_goal_observation_is_the_goal_in_the_vehicle_frame(make):
    env = make()
    obs, _ = env.reset(seed=4)
    u = env.unwrapped
    x, y, _, yaw, _, _ = u.agent.vehicle.pose
    gx, gy = u.task.goals["robot"]
    c, s = math.cos(yaw), math.sin(yaw)
    np.testing.assert_allclose(obs["goal"], [c * (gx - x) + s * (gy - y), -s * (gx - x) + c * (gy - y)], rtol=1e-6)
    assert np.hypot(*obs["goal"].astype(float)) == pytest.approx(u.task.distances["robot"], rel=1e-6)


def test_reaching_the_goal_pays_progress_plus_goal_reward_minus_step_costs(make):
    env = make()
    seeker = GoalSeeker(env)
    obs, _ = env.reset(seed=0)
    d0 = env.unwrapped.task.distances["robot"]
    total, steps, info, done = 0.0, 0, {}, False
    while not done:
        obs, reward, terminated, truncated, info = env.step(seeker(obs))
        total += reward
        steps += 1
        done = terminated or truncated
    assert terminated and info["is_success"] and not info["collision"] and info["distance"] < 0.3
    assert total == pytest.approx((d0 - info["distance"]) + 10.0 - 0.01 * steps, abs=1e-9)


def test_a_collision_ends_the_episode_with_its_penalty(make):
    env = make()
    obs, _ = env.reset(seed=0)
    d_prev = env.unwrapped.task.distances["robot"]
    while True:  # full speed ahead, whatever is there
        obs, reward, terminated, truncated, info = env.step(np.float32([1.0, 0.0]))
        d = info["distance"]
        if terminated:
            break
        d_prev = d
    assert info["collision"] and not info["is_success"] and not truncated
    assert reward == pytest.approx((d_prev - d) - 0.01 - 10.0, abs=1e-9)
    assert env.unwrapped.agent.vehicle.had_collision


def test_collisions_can_be_only_penalized(make):
    env = make(task=GoalReaching(terminate_on_collision=False, collision_penalty=1.0), max_episode_steps=60)
    env.reset(seed=0)
    hits = 0
    for _ in range(60):
        _, reward, terminated, truncated, info = env.step(np.float32([1.0, 0.0]))
        hits += info["collision"]
        assert not terminated
    assert truncated and hits >= 5  # pushing against the wall, step after step


def test_task_state_round_trips(make):
    env = make().unwrapped
    env.reset(seed=3)
    state = env.task.state()
    goal = env.task.goals["robot"]
    env.reset(seed=4)
    assert env.task.goals["robot"] != goal
    env.task.set_state(state)
    assert env.task.goals["robot"] == goal and env.task.state() == state


def test_regions_without_room_are_refused(make):
    with pytest.raises(MvsimError, match=r"no free place found in region \(-1.5, -0.9, 0.7, 1.3\)"):
        make(task=GoalReaching(region=(-1.5, -0.9, 0.7, 1.3), margin=0.0, max_draws=200)).reset(seed=0)  # a box
    with pytest.raises(MvsimError, match="too small for a clearance"):
        make(task=GoalReaching(region=(0.0, 0.5, 0.0, 0.5))).reset(seed=0)
    with pytest.raises(MvsimError, match="is empty"):
        GoalReachingEnv(task=GoalReaching(region=(1.0, 0.0, 0.0, 1.0)))


def test_world_region_of_a_world_of_blocks(tmp_path):
    import mvsim_core as mv

    p = tmp_path / "w.world.xml"
    p.write_text('<mvsim_world version="1.0"><block name="a"><static>true</static><init_pose>2 1 0</init_pose>'
                 '<shape><pt>-1 -1</pt><pt>1 -1</pt><pt>1 1</pt><pt>-1 1</pt></shape></block></mvsim_world>')
    assert world_region(mv.load_world(p)) == (1.0, 3.0, 0.0, 2.0)
    p.write_text('<mvsim_world version="1.0"></mvsim_world>')
    with pytest.raises(MvsimError, match="pass region="):
        world_region(mv.load_world(p))


@pytest.mark.parametrize("env_id", IDS)
def test_goal_markers_are_seen_by_no_sensor(make, env_id):
    env = make(env_id).unwrapped
    (marker,) = [b for n, b in env.world.blocks.items() if n.startswith("goal_")]
    assert marker.is_visual_only and marker.is_intangible
    assert env.world.physics.flat_z == 0.0  # the ground stays one flat level: no per-step terrain fit
