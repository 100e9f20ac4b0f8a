"""MvsimVectorEnv: what ``gymnasium.make_vec`` makes for the mvsim ids. Copy for copy it gives what SyncVectorEnv
gives (observations, rewards, flags and infos bit-identical, in each of Gymnasium's autoreset modes), with copies in
this process and in worker processes; errors in a worker come back here; closing stops the workers."""

from __future__ import annotations

import functools
import os
import signal
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gym_checks import IDS
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from mvsim_core.errors import MvsimError
from mvsim_core.gym.vector_env import INFO_BYTES, MvsimVectorEnv

STEPS = 120
EPISODE = 40  # short episodes: every copy ends several within the run


def factory(env_id: str = IDS[0]) -> gym.Env:
    return gym.make(env_id, max_episode_steps=EPISODE)


def equal(a: Any, b: Any) -> bool:
    """Deep, bit-exact equality of batched results: dicts, tuples, arrays (object arrays element by element)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(equal(a[k], b[k]) for k in a)  # keys in order
    if isinstance(a, tuple | list):
        return type(a) is type(b) and len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        if not isinstance(b, np.ndarray) or a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype == object:
            return all(equal(x, y) for x, y in zip(a.ravel(), b.ravel(), strict=True))
        return bool(np.array_equal(a, b))
    return type(a) is type(b) and (a == b or (a != a and b != b))  # NaN equals NaN here


def run(venv: Any, acts: np.ndarray, mode: AutoresetMode) -> list[tuple[Any, ...]]:
    """Everything ``venv`` returns over ``acts``, from ``reset(seed=5)``; with autoreset DISABLED, the copies that
    ended are reset (``reset_mask``) before the next step, as a user of that mode does."""
    out: list[tuple[Any, ...]] = [venv.reset(seed=5)]
    for a in acts:
        res = venv.step(a)
        out.append(res)
        ended = res[2] | res[3]
        if mode is AutoresetMode.DISABLED and ended.any():
            out.append(venv.reset(options={"reset_mask": ended}))
    return out


@pytest.fixture
def acts() -> np.ndarray:
    return np.random.default_rng(3).uniform(-1, 1, (STEPS, 3, 2)).astype(np.float32)


@pytest.mark.parametrize("mode", list(AutoresetMode), ids=lambda m: m.name)
def test_three_copies_on_two_processes_give_what_sync_gives(mode, acts):
    sync = SyncVectorEnv([factory] * 3, autoreset_mode=mode)
    expected = run(sync, acts, mode)
    sync.close()
    venv = MvsimVectorEnv([factory] * 3, processes=2, autoreset_mode=mode)
    try:
        assert venv.shares == [(0, 2), (2, 1)]  # copies 0, 1 here; copy 2 in the worker
        assert venv.metadata["autoreset_mode"] is mode
        got = run(venv, acts, mode)
    finally:
        venv.close()
    ends = sum(int(np.sum(r[2] | r[3])) for r in expected if len(r) == 5)
    assert ends >= 6  # each copy ended episodes (40-step limit or a collision) and went on
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert equal(g, e), f"result {k} differs from SyncVectorEnv's"


def test_make_vec_makes_it_and_the_other_modes_stay(acts):
    venv = gym.make_vec(IDS[0], num_envs=2, max_episode_steps=EPISODE)
    try:
        assert isinstance(venv.unwrapped, MvsimVectorEnv)
        assert venv.unwrapped.processes == min(2, len(os.sched_getaffinity(0)))
        assert venv.observation_space["lidar"].shape == (2, 181)
        assert venv.action_space.shape == (2, 2)
        assert venv.unwrapped.spec is not None and venv.unwrapped.spec.id == IDS[0]
        got = run(venv, acts[:60, :2], AutoresetMode.NEXT_STEP)
    finally:
        venv.close()
    sync = gym.make_vec(IDS[0], num_envs=2, vectorization_mode="sync", max_episode_steps=EPISODE)
    assert isinstance(sync, SyncVectorEnv)
    expected = run(sync, acts[:60, :2], AutoresetMode.NEXT_STEP)
    sync.close()
    assert equal(got, expected)


@pytest.mark.parametrize("layout", [{"processes": 1}, {"processes": 2, "share_main": False}],
                         ids=["all-here", "all-in-workers"])
def test_other_layouts_give_the_same(layout, acts):
    sync = SyncVectorEnv([factory] * 3)
    expected = run(sync, acts[:50], AutoresetMode.NEXT_STEP)
    sync.close()
    venv = MvsimVectorEnv([factory] * 3, **layout)
    try:
        workers = len(venv._workers)
        got = run(venv, acts[:50], AutoresetMode.NEXT_STEP)
    finally:
        venv.close()
    assert workers == (0 if layout["processes"] == 1 else 2)
    assert equal(got, expected)


def test_spawned_workers_give_the_same(acts):
    sync = SyncVectorEnv([factory] * 2)
    expected = run(sync, acts[:30, :2], AutoresetMode.NEXT_STEP)
    sync.close()
    venv = MvsimVectorEnv([factory] * 2, processes=2, context="spawn")  # env_fns travel by cloudpickle
    try:
        got = run(venv, acts[:30, :2], AutoresetMode.NEXT_STEP)
    finally:
        venv.close()
    assert equal(got, expected)


def test_call_get_and_set_reach_every_copy():
    venv = MvsimVectorEnv([factory] * 3, processes=2)
    try:
        venv.reset(seed=1)
        for _ in range(3):
            venv.step(np.zeros((3, 2), np.float32))
        assert venv.get_attr("episode_steps") == (3, 3, 3)
        venv.set_attr("max_episode_steps", [10, 20, 30])
        assert venv.get_attr("max_episode_steps") == (10, 20, 30)
        times = venv.call("snapshot")
        assert [t["episode_steps"] for t in times] == [3, 3, 3]
        assert venv.render() == (None, None, None)  # no render mode
        with pytest.raises(ValueError, match="length equal to the number of environments"):
            venv.set_attr("max_episode_steps", [1, 2])
    finally:
        venv.close()


def test_big_infos_travel_by_the_pipe():
    venv = MvsimVectorEnv([functools.partial(Toy, info_bytes=2 * INFO_BYTES)] * 2, processes=2)
    try:
        venv.reset(seed=0)
        _, _, _, _, infos = venv.step(np.zeros((2, 1), np.float32))
        assert [len(b) for b in infos["blob"]] == [2 * INFO_BYTES] * 2
    finally:
        venv.close()


class Toy(gym.Env):
    """A one-number environment that can raise, or return big infos, at a given step."""

    def __init__(self, fail_at: int | None = None, info_bytes: int = 0) -> None:
        self.observation_space = spaces.Box(-1e9, 1e9, (1,), np.float64)
        self.action_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.fail_at, self.info_bytes, self.t = fail_at, info_bytes, 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1), {}

    def step(self, action):
        self.t += 1
        if self.fail_at is not None and self.t == self.fail_at:
            raise ValueError(f"toy failed at step {self.t}")
        info = {"blob": b"x" * self.info_bytes} if self.info_bytes else {}
        return np.array([float(self.t)]), 1.0, False, False, info


def test_an_error_in_a_worker_is_raised_here_with_the_copy_named():
    venv = MvsimVectorEnv([Toy, functools.partial(Toy, fail_at=3)], processes=2)
    try:
        venv.reset(seed=0)
        venv.step(np.zeros((2, 1), np.float32))
        venv.step(np.zeros((2, 1), np.float32))
        with pytest.raises(ValueError, match="toy failed at step 3") as caught:
            venv.step(np.zeros((2, 1), np.float32))
        assert any("copies 1..1" in note for note in caught.value.__notes__)
        obs, *_ = venv.step(np.zeros((2, 1), np.float32))  # the worker lives on
        assert obs.tolist() == [[4.0], [4.0]]
    finally:
        venv.close()


def test_a_copy_that_cannot_be_made_in_a_worker_fails_the_constructor():
    def broken() -> gym.Env:
        raise MvsimError("no such world")

    with pytest.raises(MvsimError, match="no such world") as caught:
        MvsimVectorEnv([Toy, broken], processes=2)
    assert any("copies 1..1" in note for note in caught.value.__notes__)


def test_a_dead_worker_is_reported_and_closing_still_works():
    venv = MvsimVectorEnv([Toy, Toy], processes=2)
    venv.reset(seed=0)
    proc = venv._workers[0].proc
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(5.0)
    with pytest.raises(MvsimError, match=r"worker process of copies 1\.\.1 .* died \(exit code -9\)"):
        venv.step(np.zeros((2, 1), np.float32))
    venv.close()
    assert venv.closed


def test_close_stops_the_workers_and_is_idempotent():
    venv = MvsimVectorEnv([Toy] * 4, processes=2)
    procs = [w.proc for w in venv._workers]
    assert [p.is_alive() for p in procs] == [True]
    venv.close()
    venv.close()
    assert [p.exitcode for p in procs] == [0]  # stopped by asking, not terminated
    with pytest.raises(MvsimError, match="closed"):
        venv.step(np.zeros((4, 1), np.float32))


def test_bad_arguments_are_refused():
    with pytest.raises(MvsimError, match="at least one copy"):
        MvsimVectorEnv([])
    with pytest.raises(MvsimError, match="processes must be at least 1, got 0"):
        MvsimVectorEnv([Toy], processes=0)

    class Texty(Toy):
        def __init__(self) -> None:
            super().__init__()
            self.observation_space = spaces.Text(5)

    with pytest.raises(MvsimError, match="cannot batch a Text observation space"):
        MvsimVectorEnv([Texty], processes=1)
    venv = MvsimVectorEnv([Toy] * 2, processes=1)
    with pytest.raises(ValueError, match="length must match num_envs=2"):
        venv.reset(seed=[1, 2, 3])
    with pytest.raises(ValueError, match="reset_mask"):
        venv.reset(options={"reset_mask": np.zeros(2, np.bool_)})
    venv.close()


def test_disabled_autoreset_refuses_to_step_an_ended_copy():
    venv = MvsimVectorEnv([functools.partial(factory)] * 2, processes=1, autoreset_mode=AutoresetMode.DISABLED)
    try:
        venv.reset(seed=0)
        for _ in range(EPISODE):
            _, _, terminated, truncated, _ = venv.step(np.zeros((2, 2), np.float32))
        assert (terminated | truncated).all()
        with pytest.raises(MvsimError, match="autoreset_mode is DISABLED: reset it"):
            venv.step(np.zeros((2, 2), np.float32))
    finally:
        venv.close()


def test_gymnasium_vector_wrappers_run_on_it():
    """What a learning script stacks on a vector environment: flattened observations and episode statistics."""
    from gymnasium.wrappers.vector import FlattenObservation, RecordEpisodeStatistics

    envs = RecordEpisodeStatistics(FlattenObservation(gym.make_vec(IDS[0], num_envs=2, max_episode_steps=20)))
    try:
        obs, _ = envs.reset(seed=0)
        assert obs.shape == (2, 2 + 181 + 2) and obs.dtype == np.float32  # goal, lidar, velocity
        envs.action_space.seed(0)
        lengths = []
        for _ in range(60):
            obs, _, _, _, info = envs.step(envs.action_space.sample())
            if "episode" in info:
                lengths += info["episode"]["l"][info["_episode"]].tolist()
    finally:
        envs.close()
    assert lengths and all(n <= 20 for n in lengths)  # episodes end by collision or at the 20-step limit
