"""Several vehicles of one world as the agents of a PettingZoo parallel environment.

Every agent is a vehicle with the observation and action structure of the single-vehicle environment
(:mod:`mvsim_core.gym.env`, :mod:`mvsim_core.gym.agent`): all agents act at once, the world runs one control period,
and each gets its observation, reward and termination from the shared :class:`~mvsim_core.gym.task.Task` (which sees
all the agents at its reset, e.g. to draw starts apart). An agent whose episode ended (terminated or truncated) leaves
``agents``; its vehicle stays where it is, commanded to stop, an obstacle to the others. Episodes are truncated for
everybody after ``max_episode_steps``. Seeds, determinism and render modes are as in :mod:`mvsim_core.gym.env`.

::

    from mvsim_core.gym.goal_reaching_env import goal_reaching_parallel_env
    env = goal_reaching_parallel_env()           # robot1 and robot2 in the goal-reaching room
    obs, infos = env.reset(seed=0)
    while env.agents:
        actions = {a: env.action_space(a).sample() for a in env.agents}
        obs, rewards, terminations, truncations, infos = env.step(actions)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from mvsim_core.errors import MvsimError
from mvsim_core.gym.agent import VehicleAgent
from mvsim_core.gym.env import SEED_BOUND, load, restart, start_snapshot, substeps
from mvsim_core.gym.rendering import RENDER_MODES, EnvRenderer
from mvsim_core.gym.task import Task
from mvsim_core.world import World

Obs = dict[str, np.ndarray]


class MvsimParallelEnv(ParallelEnv[str, Obs, np.ndarray]):
    """The vehicles ``agents`` of ``world`` as a PettingZoo parallel environment (see the module docstring).

    Args:
        world: a world file, or a loaded :class:`~mvsim_core.world.World` (not started).
        agents: the vehicles that are agents (default: all of them, in file order).
        task, control_period, observations, action, normalize_actions, max_speed, max_omega, max_steer,
        max_episode_steps, world_seed, render_mode, render_size: as for :class:`~mvsim_core.gym.env.MvsimEnv`, the
            same for every agent.

    Attributes:
        world, task, substeps, episode_steps, reset_method: as for :class:`~mvsim_core.gym.env.MvsimEnv`.
        vehicle_agents: name -> :class:`~mvsim_core.gym.agent.VehicleAgent`.

    Raises:
        MvsimError: bad arguments; WorldFileError: a bad world file.
    """

    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "render_fps": 10, "name": "mvsim_parallel_v0",
                                "is_parallelizable": True}

    def __init__(self, world: str | Path | World, agents: Sequence[str] | None = None, *, task: Task | None = None,
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
        names = list(agents) if agents is not None else list(self.world.vehicles)
        if not names or len(set(names)) != len(names):
            raise MvsimError(f"agents must name distinct vehicles of {self.world.path}, got {names}")
        self.task = task if task is not None else Task()
        self.vehicle_agents = {n: VehicleAgent(self.world, n, action=action, observations=observations,
                                               normalize_actions=normalize_actions, max_speed=max_speed,
                                               max_omega=max_omega, max_steer=max_steer) for n in names}
        self.substeps = substeps(self.world, control_period)
        self.control_period = float(control_period)
        self.task.setup(self.world, names)
        self.world.start()
        self._start = start_snapshot(self.world)
        self.reset_method = "World.restore" if self._start is not None else "World.reset"
        self._obs_spaces: dict[str, spaces.Dict] = {}
        for n, ag in self.vehicle_agents.items():
            entries: dict[str, spaces.Space[Any]] = dict(ag.observation_spaces)
            for key, space in self.task.observation_spaces(self.world, n).items():
                if key in entries:
                    raise MvsimError(f"the task's observation '{key}' has the name of one of '{n}''s; rename one")
                entries[key] = space
            self._obs_spaces[n] = spaces.Dict(entries)
        self.possible_agents = names
        self.agents: list[str] = []
        self.max_episode_steps = max_episode_steps
        self.render_mode = render_mode
        self.metadata = {**type(self).metadata, "render_fps": 1.0 / self.control_period}
        self.episode_steps = 0
        self._seeded = False
        self._renderer = (EnvRenderer(self.world, render_mode, render_size, 1.0 / self.control_period,
                                      title="mvsim gym: " + ", ".join(names)) if render_mode is not None else None)

    # ------------------------------------------------------------------ PettingZoo API
    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The observation space of ``agent`` (the same object at every call)."""
        return self._obs_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """The action space of ``agent`` (the same object at every call)."""
        return self.vehicle_agents[agent].action_space

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, Obs], dict[str, dict[str, Any]]]:
        """Start an episode with every agent; ``seed`` as in :meth:`MvsimEnv.reset
        <mvsim_core.gym.env.MvsimEnv.reset>` (the first reset without one takes an entropy seed); ``options`` are not
        used."""
        if seed is None and not self._seeded:
            seed = int(np.random.default_rng().integers(0, SEED_BOUND))
        restart(self.world, seed, self._start)
        self._seeded = True
        self.agents = list(self.possible_agents)
        self.task.reset(self.world, self.agents)
        for ag in self.vehicle_agents.values():
            ag.prime()
            ag.vehicle.had_collision = False
        self.episode_steps = 0
        if self.render_mode == "human":
            self.render()
        t = self.world.time
        return {a: self._observe(a) for a in self.agents}, {a: {"time": t} for a in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Obs], dict[str, float], dict[str, bool],
                                                       dict[str, bool], dict[str, dict[str, Any]]]:
        """Every live agent's action held for one control period (an agent without one stops); the dicts of
        (observations, rewards, terminations, truncations, infos) of the agents that were live."""
        world, live = self.world, list(self.agents)
        unknown = set(actions) - set(live)
        if unknown:
            raise MvsimError(f"actions for agents that are not live: {sorted(unknown)}; live agents: {live}")
        for a in live:
            ag = self.vehicle_agents[a]
            if a in actions:
                ag.act(actions[a])
            else:
                ag.stop()
            ag.vehicle.had_collision = False
        step = world.step
        for _ in range(self.substeps):
            step()
        self.episode_steps += 1
        out = {a: self.task.evaluate(world, a) for a in live}
        limit = self.max_episode_steps is not None and self.episode_steps >= self.max_episode_steps
        obs = {a: self._observe(a) for a in live}
        rewards = {a: o.reward for a, o in out.items()}
        terminations = {a: o.terminated for a, o in out.items()}
        truncations = {a: bool(o.truncated or (limit and not o.terminated)) for a, o in out.items()}
        infos = {a: {"time": world.time, **o.info} for a, o in out.items()}
        self.agents = [a for a in live if not (terminations[a] or truncations[a])]
        for a in live:
            if a not in self.agents:
                self.vehicle_agents[a].stop()
        if self.render_mode == "human":
            self.render()
        return obs, rewards, terminations, truncations, infos

    def render(self) -> np.ndarray | None:
        """As :meth:`MvsimEnv.render <mvsim_core.gym.env.MvsimEnv.render>`."""
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
        """As :meth:`MvsimEnv.snapshot <mvsim_core.gym.env.MvsimEnv.snapshot>`, with the live agents."""
        return {"world": self.world.snapshot(), "episode_steps": self.episode_steps, "seeded": self._seeded,
                "agents": list(self.agents), "task": self.task.state()}

    def restore(self, snapshot: dict[str, Any]) -> None:
        """As :meth:`MvsimEnv.restore <mvsim_core.gym.env.MvsimEnv.restore>`."""
        self.world.restore(snapshot["world"])
        self.episode_steps = int(snapshot["episode_steps"])
        self._seeded = bool(snapshot["seeded"])
        self.agents = list(snapshot["agents"])
        self.task.set_state(snapshot["task"])

    # ------------------------------------------------------------------ helpers
    def _observe(self, agent: str) -> Obs:
        """``agent``'s observation, its keys in the order of its space's (sorted)."""
        obs = self.vehicle_agents[agent].observe()
        obs.update(self.task.observe(self.world, agent))
        return {k: obs[k] for k in self._obs_spaces[agent].spaces}
