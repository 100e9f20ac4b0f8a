"""A Gymnasium vector environment whose copies step at once in this process and in worker processes.

::

    import gymnasium, mvsim_core
    envs = gymnasium.make_vec("mvsim/GoalReaching-v0", num_envs=2)   # an MvsimVectorEnv
    obs, infos = envs.reset(seed=0)
    obs, rewards, terminated, truncated, infos = envs.step(envs.action_space.sample())

Why another vector environment: one env step of ``mvsim/GoalReaching-v0`` takes about a millisecond, and at that size
what Gymnasium's ``AsyncVectorEnv`` spends around the step is seen: every copy lives in a worker process while the
main process waits, so on a machine with as many cores as copies the main process competes with the workers for a
core at every step, and each step costs a round of wake-ups. Here the main process steps a share of the copies itself
(``share_main``), and the others are split over ``processes - 1`` worker processes, so ``processes`` processes in all
run the copies, as many as there are cores by default. A step writes the actions into shared memory, wakes the
workers (one short message each), steps the main process's share, and waits for the workers' answers: rewards,
terminations and observations are written into shared memory, only the info dicts travel as messages.

What the copies see is the same as under ``SyncVectorEnv``: each copy is an ordinary environment made by its
``env_fns`` entry, seeds go ``seed, seed + 1, ...`` (or one per copy), the three autoreset modes of Gymnasium
(``NEXT_STEP``, the default, ``SAME_STEP`` and ``DISABLED``) and ``options["reset_mask"]`` behave as there, and infos
are batched the same way; the observations, rewards and infos are bit-identical to ``SyncVectorEnv``'s for the same
seeds and actions (a test compares them).

``batched=True`` makes each process step its share in one pass (:class:`~mvsim_core.gym.batched_env.CopyBatch`:
every copy's command, every copy's world, the observations written straight into the shared arrays), the batched
environment of :mod:`mvsim_core.gym.batched_env` spread over cores. ``max_episode_steps`` truncates as Gymnasium's
``TimeLimit`` wrapper does (what ``gymnasium.make(..., max_episode_steps=)`` adds to a single environment).

Errors: an exception raised by a copy in a worker is raised again here, with a note naming the copy; a worker that
dies makes the call raise :class:`~mvsim_core.errors.MvsimError`. ``close()`` stops the workers (and is called when
the object is collected).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import (
    CloudpickleWrapper,
    batch_space,
    create_shared_memory,
    read_from_shared_memory,
)

from mvsim_core.errors import MvsimError
from mvsim_core.gym.batched_env import CopyBatch, autoreset_mode_of, episode_limit

Info = dict[str, Any]


def _put(space: spaces.Space[Any], batch: Any, i: int, value: Any) -> None:
    """Write one copy's ``value`` (of ``space``) into row ``i`` of the batched arrays ``batch``."""
    if isinstance(space, spaces.Dict):
        for key, sub in space.spaces.items():
            _put(sub, batch[key], i, value[key])
    elif isinstance(space, spaces.Tuple):
        for sub, b, v in zip(space.spaces, batch, value, strict=True):
            _put(sub, b, i, v)
    else:
        batch[i] = value


def _put_all(space: spaces.Space[Any], batch: Any, values: Any) -> None:
    """Write batched ``values`` (of ``batch_space(space)``) into the batched arrays ``batch``."""
    if isinstance(space, spaces.Dict):
        for key, sub in space.spaces.items():
            _put_all(sub, batch[key], values[key])
    elif isinstance(space, spaces.Tuple):
        for sub, b, v in zip(space.spaces, batch, values, strict=True):
            _put_all(sub, b, v)
    else:
        np.copyto(batch, values, casting="unsafe")


def _copy(batch: Any) -> Any:
    """A copy of batched arrays (dicts and tuples of arrays)."""
    if isinstance(batch, dict):
        return {k: _copy(v) for k, v in batch.items()}
    if isinstance(batch, tuple):
        return tuple(_copy(v) for v in batch)
    return batch.copy()


def _check_supported(space: spaces.Space[Any], what: str) -> None:
    """Shared memory holds fixed-size arrays: Box, Discrete, MultiDiscrete, MultiBinary and Dicts/Tuples of them."""
    if isinstance(space, spaces.Dict):
        for sub in space.spaces.values():
            _check_supported(sub, what)
    elif isinstance(space, spaces.Tuple):
        for sub in space.spaces:
            _check_supported(sub, what)
    elif not isinstance(space, spaces.Box | spaces.Discrete | spaces.MultiDiscrete | spaces.MultiBinary):
        raise MvsimError(f"MvsimVectorEnv cannot batch a {type(space).__name__} {what} space in shared memory; "
                         f"use gymnasium.vector.SyncVectorEnv or AsyncVectorEnv(shared_memory=False)")


class _Share:
    """The copies ``lo .. lo + len(envs) - 1`` of a vector environment, in the process that steps them, and the
    batched arrays (all copies' rows) they read actions from and write results into."""

    def __init__(self, envs: list[gym.Env[Any, Any]], lo: int, buffers: _Buffers, mode: AutoresetMode,
                 max_episode_steps: int | None = None) -> None:
        self.envs, self.lo, self.buf, self.mode = envs, lo, buffers, mode
        self.max_episode_steps = max_episode_steps
        self.autoreset = np.zeros(len(envs), dtype=np.bool_)
        self.elapsed = [0] * len(envs)  # steps since each copy's reset, for max_episode_steps (TimeLimit's count)

    def reset(self, seeds: Sequence[int | None], options: dict[str, Any] | None, mask: np.ndarray | None
              ) -> list[tuple[int, Info]]:
        """Reset the copies (those of ``mask`` only, when given) with their ``seeds``; (index, info) of each."""
        b, out = self.buf, []
        for k, env in enumerate(self.envs):
            i = self.lo + k
            if mask is not None and not mask[k]:
                continue
            obs, info = env.reset(seed=seeds[k], options=options)
            _put(b.obs_space, b.obs, i, obs)
            b.terminated[i] = b.truncated[i] = False
            self.autoreset[k] = False
            self.elapsed[k] = 0
            out.append((i, info))
        return out

    def step(self) -> list[tuple[int, Info]]:
        """Step the copies with their rows of the shared actions, autoresetting as ``mode`` says; (index, info)."""
        b, mode, limit, out = self.buf, self.mode, self.max_episode_steps, []
        for k, env in enumerate(self.envs):
            i = self.lo + k
            if mode is AutoresetMode.NEXT_STEP and self.autoreset[k]:
                obs, info = env.reset()
                reward: SupportsFloat = 0.0
                terminated, truncated = False, False
                self.elapsed[k] = 0
            else:
                if mode is AutoresetMode.DISABLED and self.autoreset[k]:
                    raise MvsimError(f"copy {i} ended its episode and autoreset_mode is DISABLED: reset it "
                                     f"(reset(options={{'reset_mask': ...}})) before stepping it again")
                obs, reward, terminated, truncated, info = env.step(b.action(i))
                self.elapsed[k] += 1
                if limit is not None and self.elapsed[k] >= limit:
                    truncated = True
                if mode is AutoresetMode.SAME_STEP and (terminated or truncated):
                    final = {"final_obs": obs, "final_info": info}
                    obs, info = env.reset()
                    self.elapsed[k] = 0
                    info = {**final, **info}  # the key order of SyncVectorEnv's infos
            _put(b.obs_space, b.obs, i, obs)
            b.rewards[i] = reward
            b.terminated[i] = terminated
            b.truncated[i] = truncated
            self.autoreset[k] = bool(terminated or truncated)
            out.append((i, info))
        return out

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        results = []
        for env in self.envs:
            attr = env.get_wrapper_attr(name)
            results.append(attr(*args, **kwargs) if callable(attr) else attr)
        return results

    def set_attr(self, name: str, values: Sequence[Any]) -> None:
        for env, value in zip(self.envs, values, strict=True):
            env.set_wrapper_attr(name, value)

    def close(self) -> None:
        for env in self.envs:
            env.close()


class _Buffers:
    """The batched arrays in shared memory: observations and actions (of ``num_envs`` rows), rewards, terminated and
    truncated flags. Made in the main process; each worker maps the same memory."""

    def __init__(self, obs_space: spaces.Space[Any], act_space: spaces.Space[Any], n: int,
                 ctx: Any = None, raw: tuple[Any, Any, Any] | None = None) -> None:
        """Make the shared memory with the multiprocessing context ``ctx``, or map ``raw`` (another's ``raw``)."""
        self.obs_space, self.act_space, self.n = obs_space, act_space, n
        if raw is None:
            raw = (create_shared_memory(obs_space, n, ctx), create_shared_memory(act_space, n, ctx),
                   ctx.RawArray("d", 3 * n))
        self.raw = raw
        self.obs = read_from_shared_memory(obs_space, raw[0], n)
        self.actions = read_from_shared_memory(act_space, raw[1], n)
        flat = np.frombuffer(raw[2], dtype=np.float64)
        self.rewards = flat[:n]
        self._flags = flat[n:].view(np.bool_)  # 2n float64 = 16n bytes; the flags take the first 2n
        self.terminated = self._flags[:n]
        self.truncated = self._flags[n:2 * n]

    def action(self, i: int) -> Any:
        """Copy ``i``'s action (a copy of its rows, so that the environment keeps nothing shared)."""
        def pick(space: spaces.Space[Any], batch: Any) -> Any:
            if isinstance(space, spaces.Dict):
                return {k: pick(s, batch[k]) for k, s in space.spaces.items()}
            if isinstance(space, spaces.Tuple):
                return tuple(pick(s, b) for s, b in zip(space.spaces, batch, strict=True))
            value = batch[i]
            return value.copy() if isinstance(value, np.ndarray) else value
        return pick(self.act_space, self.actions)


STEP, MESSAGE = 0, 1
"""What a worker is asked (``_Link.ctrl[0]``): step its copies, or read a message from the pipe."""

INFO_BYTES = 1 << 16
"""Room for a step's pickled infos in shared memory; bigger ones travel through the pipe."""


class _Dead(Exception):
    """The other end of a link is gone."""


class _Link:
    """The channel between the main process and one worker.

    A step, the hot path, goes through shared memory alone: the main process sets ``ctrl[0] = STEP`` and releases
    ``go``; the worker steps its copies, writes their pickled infos into ``infos`` (their length into ``ctrl[1]``)
    and releases ``done``. Anything else (reset, call, close, a step's infos too big for ``infos``, errors) travels
    through the pipe ``conn``. A side that waits first polls its semaphore without sleeping for up to ``spin`` s (a
    wake-up costs tens of microseconds; a step about a millisecond), then sleeps on it.
    """

    def __init__(self, ctx: Any) -> None:
        self.go, self.done = ctx.Semaphore(0), ctx.Semaphore(0)
        self.ctrl_raw = ctx.RawArray("q", 2)
        self.info_raw = ctx.RawArray("B", INFO_BYTES)
        self.conn: Any = None
        self._map()

    def _map(self) -> None:
        self.ctrl = np.frombuffer(self.ctrl_raw, dtype=np.int64)
        self.info = memoryview(self.info_raw).cast("B")

    def __getstate__(self) -> dict[str, Any]:  # what a spawned worker receives: the shared objects
        return {k: v for k, v in self.__dict__.items() if k in ("go", "done", "ctrl_raw", "info_raw", "conn")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._map()


def _acquire(sem: Any, spin: float, alive: Callable[[], bool]) -> None:
    """Take ``sem``: polled without sleeping for up to ``spin`` s, then waited for, checking ``alive()`` every 0.2 s.

    Raises:
        _Dead: ``alive()`` turned False.
    """
    if sem.acquire(False):
        return
    if spin > 0.0:
        clock, take = time.perf_counter, sem.acquire
        end = clock() + spin
        while clock() < end:
            if take(False):
                return
    while not sem.acquire(True, 0.2):
        if not alive():
            raise _Dead


def _worker(fns: list[CloudpickleWrapper[gym.Env[Any, Any]]], lo: int, link: _Link, parent_end: Any,
            spaces_: tuple[spaces.Space[Any], spaces.Space[Any]], n: int, raw: tuple[Any, Any, Any],
            plan: _Plan, spin: float) -> None:
    """A worker process: make its copies, then do what the main process asks until ``close``."""
    parent_end.close()
    conn, parent = link.conn, os.getppid()

    def alive() -> bool:
        return os.getppid() == parent

    share: _Share | CopyBatch | None = None
    try:
        try:
            envs = [fn() for fn in fns]
            for k, env in enumerate(envs):
                if env.observation_space != spaces_[0] or env.action_space != spaces_[1]:
                    raise MvsimError(f"copy {lo + k} has other observation or action spaces than copy 0; the copies "
                                     f"of a vector environment must have the same")
            share = plan.share(envs, lo, _Buffers(spaces_[0], spaces_[1], n, raw=raw))
            conn.send(("ok", None))
        except Exception as e:  # noqa: BLE001 - reported to the main process, which raises it
            _send_error(conn, e)
            return
        ctrl, info = link.ctrl, link.info
        while True:
            _acquire(link.go, spin, alive)
            if ctrl[0] == STEP:
                try:
                    data = pickle.dumps(share.step(), protocol=pickle.HIGHEST_PROTOCOL)
                    if len(data) <= INFO_BYTES:
                        info[:len(data)] = data
                        ctrl[1] = len(data)
                    else:
                        ctrl[1] = -1
                        conn.send(("ok", pickle.loads(data)))
                except Exception as e:  # noqa: BLE001 - reported to the main process, which raises it
                    ctrl[1] = -1
                    _send_error(conn, e)
                link.done.release()
                continue
            msg = conn.recv()
            try:
                if msg[0] == "reset":
                    conn.send(("ok", share.reset(msg[1], msg[2], msg[3])))
                elif msg[0] == "call":
                    conn.send(("ok", share.call(msg[1], msg[2], msg[3])))
                elif msg[0] == "set":
                    share.set_attr(msg[1], msg[2])
                    conn.send(("ok", None))
                elif msg[0] == "close":
                    share.close()
                    conn.send(("ok", None))
                    link.done.release()
                    return
            except Exception as e:  # noqa: BLE001 - reported to the main process, which raises it
                _send_error(conn, e)
            link.done.release()
    except (_Dead, EOFError, KeyboardInterrupt, BrokenPipeError):
        pass  # the main process went away (or ^C reached the whole process group): nothing to answer
    finally:
        conn.close()


def _send_error(conn: Any, e: Exception) -> None:
    try:
        conn.send(("error", e))
    except Exception:  # noqa: BLE001 - an exception that does not pickle travels as text
        conn.send(("error", RuntimeError(f"{type(e).__name__}: {e}")))


def _cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@dataclass(frozen=True)
class _Plan:
    """How each process steps its copies: the autoreset mode, the time limit, one by one or in one pass."""

    mode: AutoresetMode
    max_episode_steps: int | None
    batched: bool

    def share(self, envs: list[gym.Env[Any, Any]], lo: int, buffers: _Buffers) -> _Share | CopyBatch:
        """The stepper of copies ``lo ..`` (``envs``) on ``buffers``."""
        if self.batched:
            return CopyBatch(envs, lo, buffers, self.mode, self.max_episode_steps)
        return _Share(envs, lo, buffers, self.mode, self.max_episode_steps)


@dataclass
class _Worker:
    """A worker process as the main process sees it: the process, its link, and its copies ``lo .. hi - 1``."""

    proc: Any
    link: _Link
    lo: int
    size: int

    @property
    def hi(self) -> int:
        return self.lo + self.size


class MvsimVectorEnv(VectorEnv[Any, Any, Any]):
    """``len(env_fns)`` copies of an environment stepped at once by ``processes`` processes, this one included (see
    the module docstring).

    Args:
        env_fns: one function per copy that makes it (they are sent to the workers with cloudpickle).
        processes: processes that step copies, this one included when ``share_main``; default: as many as there are
            cores this process may run on, at most one per copy. 1 steps every copy here, as ``SyncVectorEnv``.
        share_main: this process steps a share of the copies (copy 0 and the next ones); False leaves all to
            workers, as ``AsyncVectorEnv`` does (for a main process busy with other work, such as a learner).
        copy: ``step`` and ``reset`` return copies of the batched observations (False: the arrays themselves,
            overwritten by the next call).
        autoreset_mode: Gymnasium's autoreset mode (``NEXT_STEP`` by default).
        context: the multiprocessing start method of the workers (default: the platform's).
        batched: each process steps its share in one pass (a
            :class:`~mvsim_core.gym.batched_env.CopyBatch`: every copy's command, every copy's world, then the
            observations written into the shared arrays); the copies must then be unwrapped
            :class:`~mvsim_core.gym.env.MvsimEnv`. False: each copy's ``step()`` in turn, any environment.
        max_episode_steps: truncate each copy's episodes after this many steps, as the ``TimeLimit`` wrapper of
            ``gymnasium.make(..., max_episode_steps=)`` does (None: only the copies' own limits).

    Attributes:
        processes: processes stepping copies. share_main, batched: as given. shares: (first copy, number of copies)
            of each process, this one first when ``share_main``.

    Raises:
        MvsimError: no copies, a bad ``processes``, ``autoreset_mode`` or ``max_episode_steps``, spaces that cannot
            be shared or that differ between copies, a copy that is not an unwrapped MvsimEnv with ``batched``; what
            making a copy raised, in whichever process it was made.
    """

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env[Any, Any]]], *, processes: int | None = None,
                 share_main: bool = True, copy: bool = True,
                 autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP, context: str | None = None,
                 spin: float | None = None, batched: bool = False, max_episode_steps: int | None = None) -> None:
        super().__init__()
        n = len(env_fns)
        if n < 1:
            raise MvsimError("a vector environment needs at least one copy (env_fns is empty)")
        if processes is None:
            processes = _cores()
        if int(processes) < 1:
            raise MvsimError(f"processes must be at least 1, got {processes}")
        processes = min(int(processes), n)
        self.num_envs = n
        self.copy = copy
        self.autoreset_mode = autoreset_mode_of(autoreset_mode)
        self.batched = bool(batched)
        plan = _Plan(self.autoreset_mode, episode_limit(max_episode_steps), self.batched)
        self.share_main = share_main
        if spin is None:  # spin where each process stepping copies has a core to itself
            spin = 0.002 if min(int(processes), n) <= _cores() else 0.0
        self.spin = float(spin)
        self.processes = processes
        self._closed_workers = False
        self._workers: list[_Worker] = []
        sizes = [n // processes + (1 if p < n % processes else 0) for p in range(processes)]
        starts = [sum(sizes[:p]) for p in range(processes)]
        self.shares = list(zip(starts, sizes, strict=True))

        # this process's share (or one copy, made and closed, for the spaces)
        local_n = sizes[0] if share_main else 0
        local = [fn() for fn in env_fns[:local_n]]
        probe = local[0] if local else env_fns[0]()
        self.single_observation_space = probe.observation_space
        self.single_action_space = probe.action_space
        self.metadata = {**probe.metadata, "autoreset_mode": self.autoreset_mode}
        self.render_mode = probe.render_mode
        if not local:
            probe.close()
        _check_supported(self.single_observation_space, "observation")
        _check_supported(self.single_action_space, "action")
        for k, env in enumerate(local):
            if env.observation_space != self.single_observation_space or env.action_space != self.single_action_space:
                for e in local:
                    e.close()
                raise MvsimError(f"copy {k} has other observation or action spaces than copy 0; the copies of a "
                                 f"vector environment must have the same")
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)

        ctx: Any = mp.get_context(context)
        self._buf = _Buffers(self.single_observation_space, self.single_action_space, n, ctx)
        try:
            self._local = plan.share(local, 0, self._buf)
        except BaseException:
            for e in local:
                e.close()
            raise
        spaces_ = (self.single_observation_space, self.single_action_space)
        try:
            for lo, size in self.shares[1 if share_main else 0:]:
                link = _Link(ctx)
                parent, link.conn = ctx.Pipe()
                fns = [CloudpickleWrapper(fn) for fn in env_fns[lo:lo + size]]
                proc = ctx.Process(target=_worker, name=f"mvsim-vector-{lo}", daemon=True,
                                   args=(fns, lo, link, parent, spaces_, n, self._buf.raw, plan, self.spin))
                proc.start()
                link.conn.close()
                link.conn = parent
                self._workers.append(_Worker(proc, link, lo, size))
            self._answers(started=True)
        except BaseException:
            self.close_extras(terminate=True)
            raise

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
              ) -> tuple[Any, dict[str, Any]]:
        """Reset every copy, or those of ``options["reset_mask"]`` (a bool array of ``num_envs``). ``seed``: None,
        an int (copy ``i`` gets ``seed + i``) or one per copy."""
        n = self.num_envs
        seeds: list[int | None]
        if seed is None:
            seeds = [None] * n
        elif isinstance(seed, int | np.integer):
            seeds = [int(seed) + i for i in range(n)]
        else:
            seeds = list(seed)
        if len(seeds) != n:
            raise ValueError(f"If seeds are passed as a list the length must match num_envs={n} but got "
                             f"length={len(seeds)}.")
        mask = None
        if options is not None and "reset_mask" in options:
            options = dict(options)
            mask = options.pop("reset_mask")
            if not isinstance(mask, np.ndarray) or mask.shape != (n,) or mask.dtype != np.bool_ or not mask.any():
                raise ValueError(f"options['reset_mask'] must be a numpy bool array of shape ({n},) with at least "
                                 f"one True value, got {mask!r}")
        for w in self._live():
            self._ask(w, ("reset", seeds[w.lo:w.hi], options, None if mask is None else mask[w.lo:w.hi]))
        k = len(self._local.envs)
        infos = self._infos({}, self._local.reset(seeds[:k], options, None if mask is None else mask[:k]))
        for part in self._answers():
            infos = self._infos(infos, part)
        return self._observations(), infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every copy with its row of ``actions``."""
        _put_all(self.single_action_space, self._buf.actions, actions)
        for w in self._live():
            w.link.ctrl[0] = STEP
            w.link.go.release()
        infos = self._infos({}, self._local.step())  # while the workers step theirs
        for part in self._answers():
            infos = self._infos(infos, part)
        b = self._buf
        return self._observations(), b.rewards.copy(), b.terminated.copy(), b.truncated.copy(), infos

    def render(self) -> tuple[Any, ...]:
        """Each copy's frame (see the copies' ``render``)."""
        return self.call("render")

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call method ``name`` of every copy (or read the attribute); the results in copy order."""
        for w in self._live():
            self._ask(w, ("call", name, args, kwargs))
        results = self._local.call(name, args, kwargs)
        for part in self._answers():
            results.extend(part)
        return tuple(results)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Attribute ``name`` of every copy."""
        return self.call(name)

    def set_attr(self, name: str, values: list[Any] | tuple[Any, ...] | Any) -> None:
        """Set attribute ``name`` of every copy: to ``values[i]`` when a list or tuple, else to ``values``."""
        if not isinstance(values, list | tuple):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError(f"Values must be a list or tuple with length equal to the number of environments. "
                             f"Got `{len(values)}` values for {self.num_envs} environments.")
        for w in self._live():
            self._ask(w, ("set", name, list(values[w.lo:w.hi])))
        self._local.set_attr(name, values[:len(self._local.envs)])
        self._answers()

    def close_extras(self, terminate: bool = False, **kwargs: Any) -> None:
        """Close the copies and stop the workers (``terminate``: at once, without asking them)."""
        if self._closed_workers:
            return
        self._closed_workers = True
        workers = getattr(self, "_workers", [])
        if not terminate:
            for w in workers:
                if w.proc.is_alive():
                    try:
                        self._ask(w, ("close",))
                    except OSError:
                        pass
            for w in workers:
                try:
                    if w.link.conn.poll(5.0):
                        w.link.conn.recv()
                except (OSError, EOFError):
                    pass
                w.proc.join(5.0)
        for w in workers:
            if w.proc.is_alive():
                w.proc.terminate()
                w.proc.join(5.0)
            w.link.conn.close()
        local = getattr(self, "_local", None)
        if local is not None:
            local.close()

    def __del__(self) -> None:
        if not getattr(self, "closed", True) and hasattr(self, "_closed_workers"):
            self.close(terminate=True)

    # ------------------------------------------------------------------ helpers
    def _live(self) -> list[_Worker]:
        if self.closed or self._closed_workers:
            raise MvsimError("the vector environment is closed")
        return self._workers

    @staticmethod
    def _ask(w: _Worker, msg: tuple[Any, ...]) -> None:
        """Send ``msg`` to worker ``w`` through the pipe and wake it up to read it."""
        w.link.conn.send(msg)
        w.link.ctrl[0] = MESSAGE
        w.link.go.release()

    def _answers(self, started: bool = False) -> list[Any]:
        """Every worker's answer to what it was asked, in order (``started``: the answers to having started, which
        come through the pipe alone); raises the first error once all answers are in, so that none is left behind
        for the next call."""
        answers, error = [], None
        for w in self._workers:
            try:
                if not started:
                    _acquire(w.link.done, self.spin, w.proc.is_alive)
                if not started and w.link.ctrl[0] == STEP and w.link.ctrl[1] >= 0:
                    status, payload = "ok", pickle.loads(w.link.info[:w.link.ctrl[1]])
                else:
                    while not w.link.conn.poll(0.2):
                        if not w.proc.is_alive():
                            raise _Dead
                    status, payload = w.link.conn.recv()
            except (_Dead, EOFError, OSError):
                w.proc.join(1.0)
                status, payload = "error", MvsimError(
                    f"the worker process of copies {w.lo}..{w.hi - 1} (pid {w.proc.pid}) died "
                    f"(exit code {w.proc.exitcode}); close this vector environment and make another")
            if status == "error":
                if error is None:
                    if not isinstance(payload, MvsimError) or "worker process" not in str(payload):
                        payload.add_note(f"raised in the worker process of copies {w.lo}..{w.hi - 1} "
                                         f"(pid {w.proc.pid}) of an MvsimVectorEnv")
                    error = payload
            else:
                answers.append(payload)
        if error is not None:
            raise error
        return answers

    def _observations(self) -> Any:
        return _copy(self._buf.obs) if self.copy else self._buf.obs

    def _infos(self, infos: dict[str, Any], results: list[tuple[int, Info]]) -> dict[str, Any]:
        """``infos`` with the (copy, info) of ``results`` added (in copy order: the processes' shares come in
        order, this process's first)."""
        for i, info in results:
            infos = self._add_info(infos, info, i)
        return infos


__all__ = ["MvsimVectorEnv"]
