"""MvsimBatchedVectorEnv: all copies in this process, stepped in one pass. Copy for copy it gives what Gymnasium's
SyncVectorEnv over ``gymnasium.make`` gives (observations, rewards, flags and infos bit-identical over 1000 steps, in
each autoreset mode, time limit included); ``reset_mask`` resets only the copies asked; ``make_vec`` makes it with
``vector="batched"``, and ``MvsimVectorEnv(batched=True)`` runs the same one-pass stepping in each process; bad
arguments are refused with a message that says what to do."""

from __future__ import annotations

import functools
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gym_checks import IDS, REPO
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers import TimeLimit
from test_vector_env import equal, run

from mvsim_core.errors import MvsimError
from mvsim_core.gym.batched_env import MvsimBatchedVectorEnv
from mvsim_core.gym.env import MvsimEnv
from mvsim_core.gym.goal_reaching_env import GoalReachingEnv, goal_reaching_vector_env
from mvsim_core.gym.task import CallableTask
from mvsim_core.gym.vector_env import MvsimVectorEnv

EPISODE = 40  # short episodes: every copy ends many within a run
COPIES = 3


def made(env_id: str = IDS[0], limit: int = EPISODE) -> gym.Env:
    """A copy as SyncVectorEnv gets it: ``gymnasium.make`` with a TimeLimit of ``limit`` steps."""
    return gym.make(env_id, max_episode_steps=limit)


def acts(steps: int, copies: int = COPIES, seed: int = 3, ahead: bool = False) -> np.ndarray:
    """Random normalized actions; ``ahead``: the speed forwards, at least half the top speed (a copy soon hits a
    wall: many collisions)."""
    a = np.random.default_rng(seed).uniform(-1, 1, (steps, copies, 2)).astype(np.float32)
    if ahead:
        a[..., 0] = np.abs(a[..., 0]) * 0.5 + 0.5
    return a


def sync_run(actions: np.ndarray, mode: AutoresetMode, env_id: str = IDS[0], limit: int = EPISODE
             ) -> list[tuple[Any, ...]]:
    sync = SyncVectorEnv([functools.partial(made, env_id, limit)] * actions.shape[1], autoreset_mode=mode)
    try:
        return run(sync, actions, mode)
    finally:
        sync.close()


def assert_same(got: list[tuple[Any, ...]], expected: list[tuple[Any, ...]]) -> None:
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert equal(g, e), f"result {k} differs from SyncVectorEnv's"


@pytest.mark.parametrize("mode", list(AutoresetMode), ids=lambda m: m.name)
def test_each_copy_is_bit_identical_to_sync_over_1000_steps(mode):
    actions = acts(1000, ahead=True)
    expected = sync_run(actions, mode, limit=30)
    venv = MvsimBatchedVectorEnv([GoalReachingEnv] * COPIES, autoreset_mode=mode, max_episode_steps=30)
    try:
        assert venv.metadata["autoreset_mode"] is mode
        got = run(venv, actions, mode)
        assert venv.observation_space.contains(got[-1][0])
    finally:
        venv.close()
    steps = [r for r in expected if len(r) == 5]
    terminated = sum(int(np.sum(r[2])) for r in steps)
    truncated = sum(int(np.sum(r[3])) for r in steps)
    assert terminated >= 40 and truncated >= 40  # collisions and time limits, every copy going on after them
    assert_same(got, expected)
    assert data_equivalence(got, expected, exact=True)  # Gymnasium's own comparison agrees


def test_the_ackermann_id_too():
    actions = acts(150, 2)
    expected = sync_run(actions, AutoresetMode.NEXT_STEP, IDS[1])
    venv = MvsimBatchedVectorEnv([functools.partial(GoalReachingEnv, "ackermann")] * 2, max_episode_steps=EPISODE)
    try:
        got = run(venv, actions, AutoresetMode.NEXT_STEP)
    finally:
        venv.close()
    assert_same(got, expected)


def test_an_episode_that_ends_at_the_time_limit_is_terminated_and_truncated_as_under_time_limit():
    """The TimeLimit wrapper sets truncated at the limit even when the task terminated the episode then."""
    def env() -> MvsimEnv:
        return MvsimEnv(REPO / "worlds" / "demo.world.xml", "bot1", observations=("odometry",),
                        task=CallableTask(terminated=lambda world, agent: world.time >= 0.25))

    actions = np.zeros((7, 2, 2), np.float32)
    sync = SyncVectorEnv([lambda: TimeLimit(env(), 3)] * 2)
    venv = MvsimBatchedVectorEnv([env] * 2, max_episode_steps=3)
    try:
        expected, got = run(sync, actions, AutoresetMode.NEXT_STEP), run(venv, actions, AutoresetMode.NEXT_STEP)
    finally:
        sync.close()
        venv.close()
    assert [r[2].tolist() + r[3].tolist() for r in got[1:]] == [[False] * 4] * 2 + [[True] * 4] \
        + [[False] * 4] * 3 + [[True] * 4]  # step 3: both flags; step 4: the autoreset
    assert_same(got, expected)


def test_reset_mask_resets_only_the_copies_asked_as_sync_does():
    actions = acts(30)
    mask = np.array([True, False, True])
    options = {"reset_mask": mask, "other": 1}
    results = []
    for venv in (SyncVectorEnv([made] * COPIES),
                 MvsimBatchedVectorEnv([GoalReachingEnv] * COPIES, max_episode_steps=EPISODE)):
        try:
            out = [venv.reset(seed=[1, 2, 3])]
            for a in actions[:20]:
                out.append(venv.step(a))
            before = out[-1][0]
            out.append(venv.reset(seed=[7, None, 9], options=dict(options)))
            for a in actions[20:]:
                out.append(venv.step(a))
        finally:
            venv.close()
        results.append((out, before))
    (expected, _), (got, before) = results
    assert_same(got, expected)
    after = got[21][0]
    assert np.array_equal(after["lidar"][1], before["lidar"][1])  # copy 1 was not reset
    assert not np.array_equal(after["goal"][0], before["goal"][0])  # copies 0 and 2 were
    assert list(got[21][1]["_time"]) == [True, False, True]  # infos of the reset copies only
    assert options["reset_mask"] is mask  # the caller's options are left as they were


def test_make_vec_batched_and_processes_batched_give_what_sync_gives():
    actions = acts(60, 2)
    expected = run(gym.make_vec(IDS[0], num_envs=2, vectorization_mode="sync", max_episode_steps=EPISODE),
                   actions, AutoresetMode.NEXT_STEP)
    batched = gym.make_vec(IDS[0], num_envs=2, vector="batched", max_episode_steps=EPISODE)
    both = gym.make_vec(IDS[0], num_envs=2, vector="processes", processes=2, batched=True,
                        max_episode_steps=EPISODE)
    try:
        assert isinstance(batched, MvsimBatchedVectorEnv)
        assert batched.spec is not None and batched.spec.id == IDS[0]
        assert batched.spec.kwargs["vector"] == "batched"
        assert batched.observation_space["lidar"].shape == (2, 181) and batched.action_space.shape == (2, 2)
        assert isinstance(both, MvsimVectorEnv) and both.batched and both.shares == [(0, 1), (1, 1)]
        got = [run(v, actions, AutoresetMode.NEXT_STEP) for v in (batched, both)]
    finally:
        batched.close()
        both.close()
    assert_same(got[0], expected)
    assert_same(got[1], expected)


def test_processes_batched_in_every_mode_and_layout():
    """Three copies over two processes (two here, one in a worker), batched in each: SyncVectorEnv's results."""
    actions = acts(120)
    for mode in AutoresetMode:
        expected = sync_run(actions, mode)
        venv = MvsimVectorEnv([GoalReachingEnv] * COPIES, processes=2, batched=True, autoreset_mode=mode,
                              max_episode_steps=EPISODE)
        try:
            got = run(venv, actions, mode)
        finally:
            venv.close()
        assert_same(got, expected)


def test_copy_false_hands_the_arrays_themselves_and_copy_true_fresh_ones():
    fns = [GoalReachingEnv] * 2
    shared, fresh = MvsimBatchedVectorEnv(fns, copy=False), MvsimBatchedVectorEnv(fns)
    try:
        a = np.zeros((2, 2), np.float32)
        o1, _ = shared.reset(seed=0)
        o2, *_ = shared.step(a)
        assert o1["lidar"] is o2["lidar"]
        f1, _ = fresh.reset(seed=0)
        f2, *_ = fresh.step(a)
        assert f1["lidar"] is not f2["lidar"] and not np.shares_memory(f1["lidar"], f2["lidar"])
        assert np.array_equal(f2["lidar"], o2["lidar"]) and np.array_equal(f2["goal"], o2["goal"])
    finally:
        shared.close()
        fresh.close()


def test_call_get_set_and_render_reach_every_copy():
    venv = MvsimBatchedVectorEnv([GoalReachingEnv] * 3)
    try:
        venv.reset(seed=1)
        for _ in range(3):
            venv.step(np.zeros((3, 2), np.float32))
        assert venv.get_attr("episode_steps") == (3, 3, 3)
        venv.set_attr("max_episode_steps", [10, 20, 30])
        assert venv.get_attr("max_episode_steps") == (10, 20, 30)
        assert venv.get_attr("np_random_seed") == (1, 2, 3)
        assert venv.render() == (None, None, None)  # no render mode
        assert [w.world is not venv.envs[0].world for w in venv.envs[1:]] == [True, True]  # a world each
    finally:
        venv.close()
    with pytest.raises(MvsimError, match="the vector environment is closed"):
        venv.step(np.zeros((3, 2), np.float32))


@pytest.mark.parametrize(("make", "message"), [
    (lambda: MvsimBatchedVectorEnv([]), r"needs at least one copy \(env_fns is empty\)"),
    (lambda: MvsimBatchedVectorEnv([made]), r"copy 0 is an MvsimEnv inside TimeLimit wrappers; .* make them "
                                            r"without wrappers"),
    (lambda: MvsimBatchedVectorEnv([GoalReachingEnv, lambda: gym.make("CartPole-v1").unwrapped]),
     "copy 1 is a CartPoleEnv; .*use MvsimVectorEnv or SyncVectorEnv for other environments"),
    (lambda: MvsimBatchedVectorEnv([GoalReachingEnv, functools.partial(GoalReachingEnv, "ackermann")]),
     "copy 1 has other observation or action spaces than copy 0"),
    (lambda: MvsimBatchedVectorEnv([GoalReachingEnv], autoreset_mode="Sometimes"),
     "unknown autoreset_mode 'Sometimes'; modes: 'NextStep', 'SameStep', 'Disabled'"),
    (lambda: MvsimBatchedVectorEnv([GoalReachingEnv], max_episode_steps=0),
     r"max_episode_steps must be a whole number of at least 1 \(or None\), got 0"),
    (lambda: MvsimVectorEnv([made], processes=1, batched=True), "copy 0 is an MvsimEnv inside TimeLimit wrappers"),
    (lambda: goal_reaching_vector_env(2, vector="threads"),
     "unknown vector='threads'; vector environments: 'processes', 'batched'"),
    (lambda: goal_reaching_vector_env(2, vector="batched", processes=2),
     "processes: an argument of vector='processes', not of vector='batched'"),
    (lambda: goal_reaching_vector_env(0, vector="batched"), "num_envs must be a whole number of at least 1, got 0"),
], ids=["empty", "wrapped", "not-mvsim", "spaces", "mode", "limit", "processes-wrapped", "vector", "vector-arg",
        "num-envs"])
def test_bad_construction_is_refused(make, message):
    with pytest.raises(MvsimError, match=message):
        make()


def test_bad_calls_are_refused():
    venv = MvsimBatchedVectorEnv([GoalReachingEnv] * 2, autoreset_mode=AutoresetMode.DISABLED, max_episode_steps=2)
    try:
        with pytest.raises(MvsimError, match=r"call reset\(\) before step\(\)"):
            venv.step(np.zeros((2, 2), np.float32))
        with pytest.raises(MvsimError, match=r"3 seeds for 2 copies; give one per copy"):
            venv.reset(seed=[1, 2, 3])
        for mask in (np.array([False, False]), np.array([1, 0]), [True, False], np.array([True])):
            with pytest.raises(MvsimError, match=r"options\['reset_mask'\] must be a numpy bool array of shape \(2,\)"):
                venv.reset(options={"reset_mask": mask})
        venv.reset(seed=0)
        with pytest.raises(MvsimError, match=r"actions must be an array of shape \(2, 2\) \(one row per copy\), got "
                                             r"shape \(2,\)"):
            venv.step(np.zeros(2, np.float32))
        with pytest.raises(MvsimError, match="set_attr\\('max_episode_steps', values\\): 3 values for 2 copies"):
            venv.set_attr("max_episode_steps", [1, 2, 3])
        venv.step(np.zeros((2, 2), np.float32))
        _, _, _, truncated, _ = venv.step(np.zeros((2, 2), np.float32))
        assert truncated.tolist() == [True, True]  # the time limit of 2 steps
        with pytest.raises(MvsimError, match="copy 0 ended its episode and autoreset_mode is DISABLED: reset it"):
            venv.step(np.zeros((2, 2), np.float32))
        venv.reset(options={"reset_mask": np.array([True, True])})
        venv.step(np.zeros((2, 2), np.float32))  # goes on once reset
    finally:
        venv.close()
