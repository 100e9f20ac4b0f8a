"""Gymnasium's vector environments run the registered environments: SyncVectorEnv and AsyncVectorEnv of 2 give, copy
for copy, the observations of single environments with the same seeds and actions (autoreset included)."""

from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np
import pytest
from gym_checks import IDS, same

STEPS = 120
SEEDS = (5, 6)


def factory(env_id: str = IDS[0]) -> gym.Env:
    return gym.make(env_id, max_episode_steps=40)  # short episodes: autoresets happen within the run


def single_runs(acts: np.ndarray) -> list[list[dict]]:
    """Each copy alone: observations after reset and every step, a finished episode restarting at the next step
    (the vector environments' default, next-step autoreset)."""
    runs = []
    for i, seed in enumerate(SEEDS):
        env = factory()
        obs, _ = env.reset(seed=seed)
        seen, done = [obs], False
        for a in acts[:, i]:
            if done:
                obs, _ = env.reset()
                done = False
            else:
                obs, _, terminated, truncated, _ = env.step(a)
                done = terminated or truncated
            seen.append(obs)
        env.close()
        runs.append(seen)
    return runs


@pytest.mark.parametrize("vector", [gym.vector.SyncVectorEnv, gym.vector.AsyncVectorEnv])
def test_vector_env_of_two_matches_single_envs(vector):
    acts = np.random.default_rng(3).uniform(-1, 1, (STEPS, 2, 2)).astype(np.float32)
    expected = single_runs(acts)
    venv = vector([functools.partial(factory) for _ in SEEDS])
    try:
        assert venv.single_observation_space == factory().observation_space
        obs, _ = venv.reset(seed=list(SEEDS))
        got = [obs]
        resets = 0
        for a in acts:
            obs, _, terminated, truncated, _ = venv.step(a)
            got.append(obs)
            resets += int(np.sum(terminated | truncated))
    finally:
        venv.close()
    assert resets >= 4  # every copy ended episodes (40-step limit) and went on
    for i in range(2):
        mine = [{k: v[i] for k, v in o.items()} for o in got]
        assert all(same(a, b) for a, b in zip(mine, expected[i], strict=True))
