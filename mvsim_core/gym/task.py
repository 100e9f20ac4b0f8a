"""What an environment asks its agents to do: where episodes start, what the agents observe besides their vehicles,
and each step's reward, termination and truncation.

A :class:`Task` sees the world and the names of the agents' vehicles; the environments (:mod:`mvsim_core.gym.env`,
:mod:`mvsim_core.gym.parallel_env`) call it in this order::

    setup(world, agents)                 once, before the world starts (add markers, ...)
    observation_spaces(world, agent)     once per agent: the entries it adds to the observation dict
    reset(world, agents)                 at every episode, after the world went back to its start
    observe(world, agent)                after the reset and after every step (or observe_into, the same
                                         values written into given arrays, in batched environments)
    evaluate(world, agent)               after every step: an Outcome

Randomness: a task draws from ``world.rng`` (the world's seeded generator) only, so that a seed given to
``reset(seed=...)`` fixes the episodes. Snapshots: :meth:`Task.state` returns what the task remembers between steps
as plain, picklable values (numbers, tuples, dicts), and :meth:`Task.set_state` takes it back.

:class:`CallableTask` makes a task of plain functions of (world, agent).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

if TYPE_CHECKING:
    from mvsim_core.world import World


@dataclass
class Outcome:
    """One agent's result of one step.

    Attributes:
        reward: the reward.
        terminated: the episode ended by the task's rules (goal reached, collision, ...).
        truncated: the episode was cut short (a time limit the task keeps).
        info: extra values for the step's ``info`` dict.
    """

    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    info: dict[str, Any] = field(default_factory=dict)


class Task:
    """A task that asks nothing: no extra observations, reward 0, never ends (the environment's
    ``max_episode_steps`` still truncates). Subclass it and override what you need."""

    def setup(self, world: World, agents: Sequence[str]) -> None:
        """Once, before the world starts: add what the task needs to the world (e.g. markers)."""

    def observation_spaces(self, world: World, agent: str) -> dict[str, spaces.Box]:
        """The entries this task adds to ``agent``'s observations (key -> space)."""
        return {}

    def reset(self, world: World, agents: Sequence[str]) -> None:
        """A new episode: the world is at its start (time 0); place the vehicles, draw goals (from ``world.rng``)."""

    def observe(self, world: World, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s entries of :meth:`observation_spaces` now."""
        return {}

    def observe_into(self, world: World, agent: str, out: dict[str, np.ndarray]) -> None:
        """Write :meth:`observe`'s entries into ``out`` (key -> an array of the entry's space), in place; override it
        to write them without making arrays (the default copies what :meth:`observe` returns)."""
        for key, value in self.observe(world, agent).items():
            out[key][...] = value

    def evaluate(self, world: World, agent: str) -> Outcome:
        """``agent``'s outcome of the step that just ended (the vehicles' ``had_collision`` flags were cleared
        before it)."""
        return Outcome()

    def state(self) -> dict[str, Any]:
        """What the task remembers between steps, as plain picklable values (for snapshots)."""
        return {}

    def set_state(self, state: dict[str, Any]) -> None:
        """Go back to a :meth:`state`."""


RewardFn = Callable[["World", str], float]
"""``reward(world, agent)`` -> the reward of the step that just ended."""
DoneFn = Callable[["World", str], bool]
"""``terminated(world, agent)`` -> whether the episode ends now."""


class CallableTask(Task):
    """A task made of functions of (world, agent name).

    Args:
        reward: the step's reward (default: 0).
        terminated: whether the episode ends (default: never).
        reset: called as ``reset(world, agents)`` at every episode (default: nothing; the vehicles start where the
            world file puts them).
    """

    def __init__(self, reward: RewardFn | None = None, terminated: DoneFn | None = None,
                 reset: Callable[[World, Sequence[str]], None] | None = None) -> None:
        self._reward = reward
        self._terminated = terminated
        self._reset = reset

    def reset(self, world: World, agents: Sequence[str]) -> None:
        if self._reset is not None:
            self._reset(world, agents)

    def evaluate(self, world: World, agent: str) -> Outcome:
        reward = 0.0 if self._reward is None else float(self._reward(world, agent))
        done = False if self._terminated is None else bool(self._terminated(world, agent))
        return Outcome(reward, done)
