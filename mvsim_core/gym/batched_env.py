"""A Gymnasium vector environment whose copies all live in this process and step in one pass.

::

    import gymnasium, mvsim_core
    envs = gymnasium.make_vec("mvsim/GoalReaching-v0", num_envs=64, vector="batched")  # an MvsimBatchedVectorEnv
    obs, infos = envs.reset(seed=0)
    obs, rewards, terminated, truncated, infos = envs.step(envs.action_space.sample())

Each copy is an :class:`~mvsim_core.gym.env.MvsimEnv` with a world of its own: its own Box2D world, its own seeded
generator and sensor noise streams, reset by ``World.restore`` of the snapshot it took when it started. A step gives
every copy its command (:meth:`MvsimEnv.begin_step <mvsim_core.gym.env.MvsimEnv.begin_step>`), runs every copy's
world one control period (:meth:`~mvsim_core.gym.env.MvsimEnv.advance`), then ends each copy's step
(:meth:`~mvsim_core.gym.env.MvsimEnv.end_step`), which writes its observation straight into its row of the batched
observation arrays: no per-copy observation dicts are made and none is concatenated afterwards. What is left per copy
is the call into its world (where the time goes: 20 physics steps and a lidar scan per step of
``mvsim/GoalReaching-v0``), the task's verdict and the copy's info dict.

What the copies see is what they would see under Gymnasium's ``SyncVectorEnv`` over ``gymnasium.make`` of the same id:
seeds go ``seed, seed + 1, ...`` (or one per copy), the three autoreset modes (``NEXT_STEP``, the default,
``SAME_STEP`` and ``DISABLED``) and ``options["reset_mask"]`` behave as there, infos are batched the same way, and
``max_episode_steps`` truncates as the ``TimeLimit`` wrapper that ``gymnasium.make(..., max_episode_steps=)`` adds
does. Observations, rewards, flags and infos are bit-identical to ``SyncVectorEnv``'s for the same seeds and actions
(a test compares them over 1000 steps in each autoreset mode).

:class:`CopyBatch` is the stepping part alone, on arrays it is given: this environment runs one over all its copies,
and :class:`~mvsim_core.gym.vector_env.MvsimVectorEnv` (``batched=True``) runs one in each of its processes, over the
rows of its shared memory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, create_empty_array

from mvsim_core.errors import MvsimError
from mvsim_core.gym.env import MvsimEnv

Info = dict[str, Any]
Obs = dict[str, np.ndarray]
_PLAIN = (int, float, bool)
"""The types of info values batched column by column (``VectorEnv._add_info`` makes arrays of ``dtype=type(value)``
for them)."""


class BatchArrays(Protocol):
    """The arrays a :class:`CopyBatch` reads actions from and writes results into, ``num_envs`` rows each (a copy's
    row is its index in the whole vector environment)."""

    obs: Any
    """A dict: key -> (num_envs, *shape) array of the observation space's entry."""
    actions: Any
    """(num_envs, *action shape) array: the step's actions."""
    rewards: np.ndarray
    """(num_envs,) float64."""
    terminated: np.ndarray
    """(num_envs,) bool."""
    truncated: np.ndarray
    """(num_envs,) bool."""


class _OwnArrays:
    """:class:`BatchArrays` in this process's memory (those of :class:`MvsimBatchedVectorEnv`)."""

    def __init__(self, obs_space: spaces.Space[Any], n: int) -> None:
        obs = create_empty_array(obs_space, n=n, fn=np.zeros)
        if not isinstance(obs, dict):
            raise MvsimError(f"a batched vector environment batches dict observations (MvsimEnv's), not a "
                             f"{type(obs_space).__name__}")
        self.obs: Obs = obs
        self.actions: Any = None
        self.rewards = np.zeros(n, dtype=np.float64)
        self.terminated = np.zeros(n, dtype=np.bool_)
        self.truncated = np.zeros(n, dtype=np.bool_)


def unwrapped_copies(envs: Sequence[Any], lo: int = 0) -> list[MvsimEnv]:
    """``envs`` checked to be :class:`~mvsim_core.gym.env.MvsimEnv` themselves (not wrapped; copy ``lo + k`` named
    in the error).

    Raises:
        MvsimError: one is something else, or wrapped.
    """
    for k, env in enumerate(envs):
        if not isinstance(env, MvsimEnv):
            inner = getattr(env, "unwrapped", None)
            what = (f"an MvsimEnv inside {type(env).__name__} wrappers" if isinstance(inner, MvsimEnv)
                    else f"a {type(env).__name__}")
            raise MvsimError(f"copy {lo + k} is {what}; a batched vector environment steps MvsimEnv copies "
                             f"themselves: make them without wrappers (MvsimEnv(...) or GoalReachingEnv(...), not "
                             f"gymnasium.make; give max_episode_steps= to the vector environment), or use "
                             f"MvsimVectorEnv or SyncVectorEnv for other environments")
    return list(envs)


def rows_of(obs: Obs, i: int) -> Obs:
    """Row ``i`` of batched observation arrays: key -> a view of the array's row (a 0-d view for 1-d arrays)."""
    return {k: a[i, ...] for k, a in obs.items()}


class CopyBatch:
    """Copies ``lo .. lo + len(envs) - 1`` of a vector environment, stepped in one pass: every copy's command, every
    copy's world, then each copy's result written into its rows of ``arrays`` (see the module docstring).

    Args:
        envs: the copies (:class:`~mvsim_core.gym.env.MvsimEnv`, unwrapped).
        lo: the first copy's row in ``arrays``.
        arrays: the batched arrays (:class:`BatchArrays`).
        mode: Gymnasium's autoreset mode.
        max_episode_steps: truncate an episode after this many steps, as Gymnasium's ``TimeLimit`` (None: never).

    Raises:
        MvsimError: a copy that is not an unwrapped MvsimEnv.
    """

    def __init__(self, envs: Sequence[Any], lo: int, arrays: BatchArrays, mode: AutoresetMode,
                 max_episode_steps: int | None = None) -> None:
        self.envs = unwrapped_copies(envs, lo)
        self.lo, self.arrays, self.mode = lo, arrays, mode
        self.max_episode_steps = max_episode_steps
        self.autoreset = np.zeros(len(self.envs), dtype=np.bool_)
        self._rows = [rows_of(arrays.obs, lo + k) for k in range(len(self.envs))]

    def reset(self, seeds: Sequence[int | None], options: dict[str, Any] | None, mask: np.ndarray | None
              ) -> list[tuple[int, Info]]:
        """Reset the copies (those of ``mask`` only, when given) with their ``seeds``; (row, info) of each."""
        a, out = self.arrays, []
        for k, env in enumerate(self.envs):
            if mask is not None and not mask[k]:
                continue
            i = self.lo + k
            obs, info = env.reset(seed=seeds[k], options=options)
            self._write(k, obs)
            a.terminated[i] = a.truncated[i] = False
            self.autoreset[k] = False
            out.append((i, info))
        return out

    def step(self) -> list[tuple[int, Info]]:
        """Step the copies with their rows of ``arrays.actions``, autoresetting as ``mode`` says; (row, info) of
        each, in row order.

        Raises:
            MvsimError: with autoreset DISABLED, a copy that ended its episode and was not reset.
        """
        envs, lo, a, mode, ended = self.envs, self.lo, self.arrays, self.mode, self.autoreset
        if mode is AutoresetMode.DISABLED and ended.any():
            k = int(np.flatnonzero(ended)[0])
            raise MvsimError(f"copy {lo + k} ended its episode and autoreset_mode is DISABLED: reset it "
                             f"(reset(options={{'reset_mask': ...}})) before stepping it again")
        waiting = ended.tolist() if mode is AutoresetMode.NEXT_STEP else [False] * len(envs)
        going = [(k, env) for k, (env, w) in enumerate(zip(envs, waiting, strict=True)) if not w]
        actions = a.actions
        for k, env in going:
            env.begin_step(actions[lo + k])
        for _, env in going:
            env.advance()
        limit, rows, out = self.max_episode_steps, self._rows, []
        rewards, terminated, truncated = a.rewards, a.terminated, a.truncated
        for k, env in enumerate(envs):
            i = lo + k
            if waiting[k]:  # NEXT_STEP: the episode ended at the last step; this step starts the next one
                obs, info = env.reset()
                self._write(k, obs)
                rewards[i], terminated[i], truncated[i] = 0.0, False, False
                ended[k] = False
                out.append((i, info))
                continue
            obs, reward, term, trunc, info = env.end_step(rows[k])
            if limit is not None and env.episode_steps >= limit:
                trunc = True
            if mode is AutoresetMode.SAME_STEP and (term or trunc):
                final = {"final_obs": {key: v.copy() for key, v in obs.items()}, "final_info": info}
                obs, info = env.reset()
                self._write(k, obs)
                info = {**final, **info}  # the key order of SyncVectorEnv's infos
            rewards[i], terminated[i], truncated[i] = reward, term, trunc
            ended[k] = term or trunc
            out.append((i, info))
        return out

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        """Method ``name`` of every copy called (or attribute ``name`` read); the results in copy order."""
        results = []
        for env in self.envs:
            attr = env.get_wrapper_attr(name)
            results.append(attr(*args, **kwargs) if callable(attr) else attr)
        return results

    def set_attr(self, name: str, values: Sequence[Any]) -> None:
        """Attribute ``name`` of copy ``k`` set to ``values[k]``."""
        for env, value in zip(self.envs, values, strict=True):
            env.set_wrapper_attr(name, value)

    def close(self) -> None:
        """Close every copy."""
        for env in self.envs:
            env.close()

    def _write(self, k: int, obs: Obs) -> None:
        """Copy ``k``'s observation (a dict of arrays, as ``reset`` returns) into its rows."""
        for key, row in self._rows[k].items():
            row[...] = obs[key]


class MvsimBatchedVectorEnv(VectorEnv[Any, Any, Any]):
    """``len(env_fns)`` copies of an :class:`~mvsim_core.gym.env.MvsimEnv`, all in this process, stepped in one pass
    (see the module docstring).

    Args:
        env_fns: one function per copy that makes it: an :class:`~mvsim_core.gym.env.MvsimEnv` (a
            :class:`~mvsim_core.gym.goal_reaching_env.GoalReachingEnv`, ...), without wrappers.
        copy: ``step`` and ``reset`` return copies of the batched observations (False: the arrays themselves,
            overwritten by the next call).
        autoreset_mode: Gymnasium's autoreset mode (``NEXT_STEP`` by default).
        max_episode_steps: truncate each copy's episodes after this many steps, as the ``TimeLimit`` wrapper of
            ``gymnasium.make(..., max_episode_steps=)`` does (None: only the copies' own limits).

    Attributes:
        envs: the copies.

    Raises:
        MvsimError: no copies, a copy that is not an unwrapped MvsimEnv, copies of different spaces, a bad
            ``max_episode_steps``; what making a copy raised.
    """

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env[Any, Any]]], *, copy: bool = True,
                 autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
                 max_episode_steps: int | None = None) -> None:
        super().__init__()
        n = len(env_fns)
        if n < 1:
            raise MvsimError("a vector environment needs at least one copy (env_fns is empty)")
        mode = autoreset_mode_of(autoreset_mode)
        limit = episode_limit(max_episode_steps)
        envs: list[gym.Env[Any, Any]] = []
        try:
            for fn in env_fns:
                envs.append(fn())
            copies = unwrapped_copies(envs)
            first = copies[0]
            for k, copy_ in enumerate(copies):
                if copy_.observation_space != first.observation_space or copy_.action_space != first.action_space:
                    raise MvsimError(f"copy {k} has other observation or action spaces than copy 0; the copies of "
                                     f"a vector environment must have the same")
        except BaseException:
            for env in envs:
                env.close()
            raise
        self.num_envs = n
        self.copy = copy
        self.autoreset_mode = mode
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self.metadata = {**first.metadata, "autoreset_mode": mode}
        self.render_mode = first.render_mode
        self.envs = copies
        self._arrays = _OwnArrays(self.single_observation_space, n)
        self._batch = CopyBatch(copies, 0, self._arrays, mode, limit)
        self._action_shape = (n, *(self.single_action_space.shape or ()))
        self._started = False

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
              ) -> tuple[Obs, dict[str, Any]]:
        """Reset every copy, or those of ``options["reset_mask"]`` (a bool array of ``num_envs``, at least one
        True). ``seed``: None, an int (copy ``i`` gets ``seed + i``) or one per copy.

        Raises:
            MvsimError: seeds or a mask that do not fit ``num_envs``.
        """
        self._open()
        n = self.num_envs
        seeds = seeds_of(seed, n)
        options, mask = reset_mask_of(options, n)
        if mask is None:
            a = self._arrays
            a.terminated[:] = False
            a.truncated[:] = False
        infos: dict[str, Any] = {}
        for i, info in self._batch.reset(seeds, options, mask):
            infos = self._add_info(infos, info, i)
        self._started = True
        return self._observations(), infos

    def step(self, actions: Any) -> tuple[Obs, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every copy with its row of ``actions`` ((num_envs, *action shape)).

        Raises:
            MvsimError: before the first :meth:`reset`; actions of another shape; with autoreset DISABLED, a copy
                that ended its episode and was not reset; an action a copy refuses.
        """
        self._open()
        if not self._started:
            raise MvsimError("call reset() before step(): the episodes have not started")
        acts = np.asarray(actions)
        if acts.shape != self._action_shape:
            raise MvsimError(f"actions must be an array of shape {self._action_shape} (one row per copy), got "
                             f"shape {acts.shape}")
        a = self._arrays
        a.actions = acts
        infos = self._batched_infos(self._batch.step())
        return self._observations(), a.rewards.copy(), a.terminated.copy(), a.truncated.copy(), infos

    def render(self) -> tuple[Any, ...]:
        """Each copy's frame (see the copies' ``render``)."""
        return self.call("render")

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call method ``name`` of every copy (or read the attribute); the results in copy order."""
        self._open()
        return tuple(self._batch.call(name, args, kwargs))

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Attribute ``name`` of every copy."""
        return self.call(name)

    def set_attr(self, name: str, values: list[Any] | tuple[Any, ...] | Any) -> None:
        """Set attribute ``name`` of every copy: to ``values[i]`` when a list or tuple, else to ``values``.

        Raises:
            MvsimError: a list or tuple of another length than ``num_envs``.
        """
        self._open()
        if not isinstance(values, list | tuple):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise MvsimError(f"set_attr('{name}', values): {len(values)} values for {self.num_envs} copies; give "
                             f"one per copy, or a single value for all")
        self._batch.set_attr(name, values)

    def close_extras(self, **kwargs: Any) -> None:
        """Close the copies."""
        batch = getattr(self, "_batch", None)
        if batch is not None:
            batch.close()

    # ------------------------------------------------------------------ helpers
    def _open(self) -> None:
        if self.closed:
            raise MvsimError("the vector environment is closed")

    def _batched_infos(self, results: list[tuple[int, Info]]) -> dict[str, Any]:
        """The infos of ``results`` (every copy's (row, info), in row order) batched as ``VectorEnv._add_info`` one
        copy after the other batches them: column by column where every copy's info has the same keys, each with
        values of one type, int, float or bool (a step without resets), else through ``_add_info``."""
        n = self.num_envs
        first = results[0][1]
        keys, types = tuple(first), [type(v) for v in first.values()]
        if len(results) != n or not all(t in _PLAIN for t in types) or any(
                tuple(info) != keys or [type(v) for v in info.values()] != types for _, info in results):
            infos: dict[str, Any] = {}
            for i, info in results:
                infos = self._add_info(infos, info, i)
            return infos
        out: dict[str, Any] = {}
        for key, t in zip(first, types, strict=True):
            out[key] = np.array([info[key] for _, info in results], dtype=t)
            out[f"_{key}"] = np.ones(n, dtype=np.bool_)
        return out

    def _observations(self) -> Obs:
        obs = self._arrays.obs
        return {k: v.copy() for k, v in obs.items()} if self.copy else obs


def autoreset_mode_of(mode: str | AutoresetMode) -> AutoresetMode:
    """``mode`` as an :class:`~gymnasium.vector.AutoresetMode` (the enum, or its value: ``"NextStep"``, ...).

    Raises:
        MvsimError: no such mode.
    """
    if isinstance(mode, AutoresetMode):
        return mode
    try:
        return AutoresetMode(mode)
    except ValueError:
        raise MvsimError(f"unknown autoreset_mode {mode!r}; modes: "
                         f"{', '.join(repr(m.value) for m in AutoresetMode)} (or gymnasium.vector.AutoresetMode)"
                         ) from None


def episode_limit(max_episode_steps: int | None) -> int | None:
    """``max_episode_steps`` checked: None or a whole number of at least 1.

    Raises:
        MvsimError: anything else.
    """
    if max_episode_steps is None:
        return None
    if isinstance(max_episode_steps, bool) or not isinstance(max_episode_steps, int | np.integer) \
            or max_episode_steps < 1:
        raise MvsimError(f"max_episode_steps must be a whole number of at least 1 (or None), got "
                         f"{max_episode_steps!r}")
    return int(max_episode_steps)


def seeds_of(seed: int | Sequence[int | None] | None, n: int) -> list[int | None]:
    """One seed per copy, as ``SyncVectorEnv`` deals them: None for all, ``seed + i``, or the list itself.

    Raises:
        MvsimError: a list of another length than ``n``.
    """
    if seed is None:
        return [None] * n
    if isinstance(seed, int | np.integer):
        return [int(seed) + i for i in range(n)]
    seeds = list(seed)
    if len(seeds) != n:
        raise MvsimError(f"reset(seed=...): {len(seeds)} seeds for {n} copies; give one per copy, an int (copy i "
                         f"gets seed + i) or None")
    return seeds


def reset_mask_of(options: dict[str, Any] | None, n: int) -> tuple[dict[str, Any] | None, np.ndarray | None]:
    """(the other options, the reset mask) of ``reset``'s ``options`` (the caller's dict is left as it is).

    Raises:
        MvsimError: a mask that is not a numpy bool array of shape (n,) with at least one True.
    """
    if options is None or "reset_mask" not in options:
        return options, None
    options = dict(options)
    mask = options.pop("reset_mask")
    if not isinstance(mask, np.ndarray) or mask.shape != (n,) or mask.dtype != np.bool_ or not mask.any():
        raise MvsimError(f"options['reset_mask'] must be a numpy bool array of shape ({n},) with at least one True "
                         f"(the copies to reset), got {mask!r}")
    return options, mask


__all__ = ["BatchArrays", "CopyBatch", "MvsimBatchedVectorEnv"]
