"""One vehicle of any world file as a Gymnasium environment.

::

    from mvsim_core.gym.env import MvsimEnv
    env = MvsimEnv("worlds/demo.world.xml", "bot1", control_period=0.1)
    obs, info = env.reset(seed=1)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())

A step: the action becomes the vehicle's command (:mod:`mvsim_core.gym.agent`: a twist, or Ackermann speed and
steering), the world runs ``control_period`` s (a whole number of physics steps), then the observation (a dict: the
vehicle's sensors, its odometry, and what the task adds) is read and the :class:`~mvsim_core.gym.task.Task` gives
the reward and says whether the episode ended; ``max_episode_steps`` truncates it. Without a task the reward is 0 and
episodes end only by truncation.

Seeds and determinism: :meth:`MvsimEnv.reset` puts the world back to its start (physics, controllers, sensors, bit for
bit: ``World.restore`` of a snapshot taken when the world started, or ``World.reset`` where the world cannot
take one) and then sets the world's random generator, which the task's draws (start poses, goals) and the
sensors' noise come from: from ``seed`` when one is given; otherwise it goes on from where the previous episode left
it (the first reset without a seed takes one from Gymnasium's entropy-seeded ``np_random``). The same seed and
actions give bit-identical observations. The world file itself is loaded once, with ``world_seed``.

State: everything is in the world, plus a few plain fields (the step count, the task's :meth:`Task.state`);
:meth:`MvsimEnv.snapshot` and :meth:`MvsimEnv.restore` save and restore both, through ``World.snapshot`` and
``World.restore``.

Time: ``info["time"]`` is the simulated time (s) since the episode started.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from mvsim_core.errors import MvsimError, SnapshotError
from mvsim_core.gym.agent import VehicleAgent
from mvsim_core.gym.rendering import RENDER_MODES, EnvRenderer
from mvsim_core.gym.task import Task
from mvsim_core.world import World

SEED_BOUND = 2**63 - 1
"""Seeds drawn for a first reset without one are below this (the world's generator takes non-negative ints)."""


def load(world: str | Path | World, seed: int) -> World:
    """``world`` itself, or the world file it names loaded with ``seed``."""
    if isinstance(world, World):
        return world
    from mvsim_core.loader import load_world

    return load_world(world, seed=seed)


def substeps(world: World, control_period: float) -> int:
    """Physics steps per control period (s).

    Raises:
        MvsimError: the period is not a positive whole number of physics steps.
    """
    dt = world.timestep
    n = round(control_period / dt)
    if not (n >= 1 and math.isclose(n * dt, control_period, rel_tol=1e-9, abs_tol=1e-12)):
        raise MvsimError(f"control_period = {control_period:g} s is not a whole number of physics steps of {dt:g} s "
                         f"(the world's simul_timestep)")
    return int(n)


def set_seed(world: World, seed: int) -> None:
    """Restart the world's generator and its sensors' streams from ``seed``, in place (what holds on to the
    generator keeps it; :meth:`World.reseed <mvsim_core.world.World.reseed>`)."""
    world.reseed(seed)


def start_snapshot(world: World) -> Any:
    """A snapshot of the started ``world`` to restart episodes from (``World.snapshot()``), or None when this world
    cannot take one (:class:`~mvsim_core.errors.SnapshotError`: a Box2D build of another memory layout, or
    ``MVSIM_BOX2D_RAW=0``): :func:`restart` then uses ``World.reset()``."""
    try:
        return world.snapshot()
    except SnapshotError:
        return None


def restart(world: World, seed: int | None, start: Any = None) -> None:
    """Put ``world`` back to its start for a new episode — ``World.restore(start)`` when a :func:`start_snapshot` is
    given, else ``World.reset()`` — with its random generator restarted from ``seed``, or, when ``seed`` is None,
    going on from where it was (going back to the start alone would rewind it to the load-time state and repeat the
    previous episodes' draws)."""
    carry = None if seed is not None else world.random_state()  # the world's and the sensors' streams
    if start is not None:
        world.restore(start)
    else:
        world.reset()
    if carry is None:
        assert seed is not None
        set_seed(world, seed)
    else:
        world.set_random_state(carry)


class MvsimEnv(gym.Env[dict[str, np.ndarray], np.ndarray]):
    """Vehicle ``vehicle`` of ``world`` as a Gymnasium environment (see the module docstring).

    Args:
        world: a world file, or a loaded :class:`~mvsim_core.world.World` (not started; the environment owns it).
        vehicle: the vehicle's name (default: the first one in the file).
        task: reward, termination and episode starts (default: :class:`~mvsim_core.gym.task.Task`, which asks
            nothing).
        control_period: seconds of simulated time per step: a whole number of physics steps.
        observations: the observed keys of the vehicle (:class:`~mvsim_core.gym.agent.VehicleAgent`); the task's are
            added.
        action: ``"auto"``, ``"twist"`` or ``"ackermann"``. normalize_actions: actions in [-1, 1].
        max_speed, max_omega, max_steer: the vehicle's command limits (m/s, rad/s, rad), which bound the actions.
        max_episode_steps: steps after which an episode is truncated (None: never).
        world_seed: the seed the world file is loaded with (its ``$f{rand()}``, odometry multipliers).
        render_mode: None, ``"rgb_array"`` or ``"human"``. render_size: (width, height) px of the frames.

    Attributes:
        world: the world. agent: the :class:`~mvsim_core.gym.agent.VehicleAgent`. task: the task.
        substeps: physics steps per step. episode_steps: steps since the last reset.
        reset_method: how :meth:`reset` puts the world back to its start: ``"World.restore"`` (of a snapshot taken
            when it started) or ``"World.reset"`` where the world cannot take one.

    Raises:
        MvsimError: bad arguments (the message says which and why); WorldFileError: a bad world file.
    """

    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "render_fps": 10}

    def __init__(self, world: str | Path | World, vehicle: str | None = None, *, task: Task | None = None,
                 control_period: float = 0.1, observations: Sequence[str] | None = None, action: str = "auto",
                 normalize_actions: bool = False, max_speed: float | None = None, max_omega: float | None = None,
                 max_steer: float | None = None, max_episode_steps: int | None = None, world_seed: int = 0,
                 render_mode: str | None = None, render_size: tuple[int, int] | None = None) -> None:
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise MvsimError(f"unknown render_mode {render_mode!r}; modes: {', '.join(RENDER_MODES)}")
        if max_episode_steps is not None and max_episode_steps < 1:
            raise MvsimError(f"max_episode_steps must be at least 1 (or None), got {max_episode_steps}")
        self.world = load(world, world_seed)
        if self.world.started:
            raise MvsimError("the world has started already; give the environment a world fresh from load_world")
        if vehicle is None:
            if not self.world.vehicles:
                raise MvsimError(f"{self.world.path} has no vehicle to drive")
            vehicle = next(iter(self.world.vehicles))
        self.task = task if task is not None else Task()
        self.agent = VehicleAgent(self.world, vehicle, action=action, observations=observations,
                                  normalize_actions=normalize_actions, max_speed=max_speed, max_omega=max_omega,
                                  max_steer=max_steer)
        self.substeps = substeps(self.world, control_period)
        self.control_period = float(control_period)
        self.task.setup(self.world, [vehicle])
        self.world.start()
        self._start = start_snapshot(self.world)
        self.reset_method = "World.restore" if self._start is not None else "World.reset"
        entries: dict[str, spaces.Space[Any]] = dict(self.agent.observation_spaces)
        for key, space in self.task.observation_spaces(self.world, vehicle).items():
            if key in entries:
                raise MvsimError(f"the task's observation '{key}' has the name of one of the vehicle's; rename one")
            entries[key] = space
        obs_space = spaces.Dict(entries)
        self._keys = list(obs_space.spaces)
        self.observation_space = obs_space  # type: ignore[assignment]
        self.action_space = self.agent.action_space
        self.max_episode_steps = max_episode_steps
        self.render_mode = render_mode
        self.metadata = {**type(self).metadata, "render_fps": 1.0 / self.control_period}
        self.episode_steps = 0
        self._seeded = False
        self._ready = False  # reset() done: the task has drawn the episode
        self._renderer = (EnvRenderer(self.world, render_mode, render_size, 1.0 / self.control_period,
                                      title=f"mvsim gym: {vehicle}") if render_mode is not None else None)

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start an episode (see the module docstring for ``seed``); ``options`` are not used."""
        super().reset(seed=seed)
        world = self.world
        if seed is None and not self._seeded:
            seed = int(self.np_random.integers(0, SEED_BOUND))
        restart(world, seed, self._start)
        self._seeded = True
        name = self.agent.name
        self.task.reset(world, [name])
        self.agent.prime()
        self.agent.vehicle.had_collision = False
        self.episode_steps = 0
        self._ready = True
        if self.render_mode == "human":
            self.render()
        return self._observe(), {"time": world.time}

    def step(self, action: np.ndarray) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Hold ``action`` for one control period; (observation, reward, terminated, truncated, info). The same as
        :meth:`begin_step`, :meth:`advance`, then :meth:`end_step`.

        Raises:
            MvsimError: before the first :meth:`reset`; an action that is not two numbers.
        """
        self.begin_step(action)
        self.advance()
        return self.end_step()

    def begin_step(self, action: np.ndarray) -> None:
        """The first part of :meth:`step`: ``action`` becomes the vehicle's command and its collision flag is
        cleared. A batched environment begins every copy's step, advances every copy (:meth:`advance`), then ends
        each (:meth:`end_step`).

        Raises:
            MvsimError: before the first :meth:`reset`; an action that is not two numbers.
        """
        if not self._ready:
            raise MvsimError("call reset() before step(): the episode has not started")
        self.agent.act(action)
        self.agent.vehicle.had_collision = False

    def advance(self) -> None:
        """The middle part of :meth:`step`: the world runs one control period (:attr:`substeps` physics steps)."""
        step = self.world.step
        for _ in range(self.substeps):
            step()

    def end_step(self, out: dict[str, np.ndarray] | None = None
                 ) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """The last part of :meth:`step`: the observation, the task's reward and verdict, the time limit; what
        :meth:`step` returns.

        Args:
            out: arrays (key -> an array of the key's space: shape and dtype) to write the observation into, in
                place; it is then the observation returned. None: fresh arrays.
        """
        world, agent = self.world, self.agent
        self.episode_steps += 1
        if out is None:
            obs = self._observe()
        else:
            agent.observe_into(out)
            self.task.observe_into(world, agent.name, out)
            obs = out
        outcome = self.task.evaluate(world, agent.name)
        truncated = outcome.truncated or (not outcome.terminated and self.max_episode_steps is not None
                                          and self.episode_steps >= self.max_episode_steps)
        if self.render_mode == "human":
            self.render()
        return obs, outcome.reward, outcome.terminated, bool(truncated), {"time": world.time, **outcome.info}

    def render(self) -> np.ndarray | None:
        """The frame of ``rgb_array`` mode ((H, W, 3) uint8); None in ``human`` mode (drawn in the window) or without
        a render mode."""
        if self._renderer is None:
            return None
        return self._renderer.frame()

    def close(self) -> None:
        """Free the renderer and its window (idempotent)."""
        renderer, self._renderer = self._renderer, None
        if renderer is not None:
            renderer.close()

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> dict[str, Any]:
        """The environment's state: the world's (``World.snapshot()``) and its own plain fields.

        Raises:
            SnapshotError: this world cannot snapshot (see ``World.snapshot``).
        """
        return {"world": self.world.snapshot(), "episode_steps": self.episode_steps, "seeded": self._seeded,
                "task": self.task.state()}

    def restore(self, snapshot: dict[str, Any]) -> None:
        """Go back to a :meth:`snapshot` (taken by this environment, or by one made with the same arguments in
        another process).

        Raises:
            SnapshotError: the snapshot is not of this world (see ``World.restore``).
        """
        self.world.restore(snapshot["world"])
        self.episode_steps = int(snapshot["episode_steps"])
        self._seeded = bool(snapshot["seeded"])
        self._ready = True
        self.task.set_state(snapshot["task"])

    # ------------------------------------------------------------------ helpers
    def _observe(self) -> dict[str, np.ndarray]:
        """The observation, its keys in the order of the space's (sorted)."""
        obs = self.agent.observe()
        obs.update(self.task.observe(self.world, self.agent.name))
        return {k: obs[k] for k in self._keys}
