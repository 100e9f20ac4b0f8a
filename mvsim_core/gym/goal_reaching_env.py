"""The registered goal-reaching environments (:mod:`mvsim_core.gym.registration`):

=================================  ===========================================================================
id                                 configuration
=================================  ===========================================================================
``mvsim/GoalReaching-v0``          ``goal_room.world.xml``: a 0.4 m differential robot with a 181-ray 2D lidar
                                   (180°, 5 m, 10 Hz) in a 6 m × 6 m room with three boxes; twist actions
                                   (v, ω) normalized to [-1, 1] of ±0.6 m/s, ±2 rad/s
``mvsim/GoalReachingAckermann-v0`` ``goal_room_ackermann.world.xml``: the same room, a small Ackermann robot
                                   (0.25 m wheelbase) with the same lidar; actions (speed, steer) normalized to
                                   [-1, 1] of ±0.6 m/s, ±35°
=================================  ===========================================================================

Both: control period 0.1 s (20 physics steps of 5 ms), observations ``"lidar"`` (181 ranges, m), ``"velocity"``
(encoder v m/s, ω rad/s) and ``"goal"`` (the goal in the vehicle frame, m), the
:class:`~mvsim_core.gym.goal_reaching.GoalReaching` task with its defaults (goal radius 0.3 m, starts at least 2 m
from the goal), episodes truncated after 300 steps (30 s). Every argument of
:class:`~mvsim_core.gym.env.MvsimEnv` can be changed, e.g. ``gymnasium.make("mvsim/GoalReaching-v0",
control_period=0.05, observations=("lidar", "odometry"))``; ``world=`` and ``vehicle=`` put the task in another
world (give it a ``task=GoalReaching(region=...)`` when the world has no occupancy grid).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mvsim_core.errors import MvsimError
from mvsim_core.gym.env import MvsimEnv
from mvsim_core.gym.goal_reaching import GoalReaching
from mvsim_core.gym.parallel_env import MvsimParallelEnv
from mvsim_core.gym.task import Task
from mvsim_core.world import World

if TYPE_CHECKING:
    from mvsim_core.gym.batched_env import MvsimBatchedVectorEnv
    from mvsim_core.gym.vector_env import MvsimVectorEnv

WORLDS = Path(__file__).parent / "worlds"
"""The world files of the registered environments."""

VARIANTS: dict[str, dict[str, Any]] = {
    "differential": {"world": WORLDS / "goal_room.world.xml", "vehicle": "robot", "max_speed": 0.6,
                     "max_omega": 2.0},
    "ackermann": {"world": WORLDS / "goal_room_ackermann.world.xml", "vehicle": "car", "max_speed": 0.6,
                  "max_steer": math.radians(35.0)},
}
"""Variant -> its arguments of :class:`~mvsim_core.gym.env.MvsimEnv`."""

DEFAULTS: dict[str, Any] = {"control_period": 0.1, "observations": ("lidar", "velocity"), "normalize_actions": True,
                            "max_episode_steps": 300}
"""Arguments common to the variants."""


class GoalReachingEnv(MvsimEnv):
    """A registered goal-reaching environment (see the module docstring).

    Args:
        variant: ``"differential"`` (``mvsim/GoalReaching-v0``) or ``"ackermann"``
            (``mvsim/GoalReachingAckermann-v0``).
        world, vehicle, task: another world file and vehicle, another task (default:
            :class:`~mvsim_core.gym.goal_reaching.GoalReaching()`).
        **kwargs: any other argument of :class:`~mvsim_core.gym.env.MvsimEnv`, overriding the variant's.
    """

    def __init__(self, variant: str = "differential", *, world: str | Path | World | None = None,
                 vehicle: str | None = None, task: Task | None = None, **kwargs: Any) -> None:
        if variant not in VARIANTS:
            raise MvsimError(f"unknown goal-reaching variant {variant!r}; variants: {', '.join(VARIANTS)}")
        args = {**DEFAULTS, **VARIANTS[variant], **kwargs}
        if world is not None:
            args["world"] = world
            args["vehicle"] = vehicle
        elif vehicle is not None:
            args["vehicle"] = vehicle
        args["task"] = task if task is not None else GoalReaching()
        self.variant = variant
        super().__init__(**args)


VECTORS = ("processes", "batched")
"""The vector environments :func:`goal_reaching_vector_env` makes: ``"processes"``, an
:class:`~mvsim_core.gym.vector_env.MvsimVectorEnv` (copies spread over processes; its ``batched=True`` steps each
process's share in one pass), and ``"batched"``, an :class:`~mvsim_core.gym.batched_env.MvsimBatchedVectorEnv` (all
copies in this process, in one pass)."""

VECTOR_ARGS: dict[str, tuple[str, ...]] = {
    "processes": ("processes", "share_main", "copy", "autoreset_mode", "context", "spin", "batched",
                  "max_episode_steps"),
    "batched": ("copy", "autoreset_mode", "max_episode_steps"),
}
"""Vector environment -> the arguments of :func:`goal_reaching_vector_env` that go to it rather than to the copies.
``max_episode_steps`` is the vector environment's, as ``gymnasium.make(id, max_episode_steps=)`` takes it for a
``TimeLimit`` wrapper and not for the environment: the copies then are what ``gymnasium.make`` makes."""


def goal_reaching_vector_env(num_envs: int = 1, vector: str = "processes",
                             **kwargs: Any) -> MvsimVectorEnv | MvsimBatchedVectorEnv:
    """``num_envs`` copies of :class:`GoalReachingEnv` as a vector environment: what
    ``gymnasium.make_vec("mvsim/GoalReaching-v0", num_envs, vector=...)`` makes.

    Args:
        num_envs: copies.
        vector: ``"processes"`` (default) or ``"batched"`` (:data:`VECTORS`).
        **kwargs: the vector environment's own arguments (:data:`VECTOR_ARGS`) and the copies' (those of
            :class:`GoalReachingEnv`).

    Raises:
        MvsimError: an unknown ``vector``, an argument of the other vector environment, ``num_envs`` below 1.
    """
    import functools

    if vector not in VECTORS:
        raise MvsimError(f"unknown vector={vector!r}; vector environments: {', '.join(map(repr, VECTORS))}")
    other = sorted(set(VECTOR_ARGS["processes"]) - set(VECTOR_ARGS[vector]) & set(kwargs))
    if other:
        raise MvsimError(f"{', '.join(other)}: an argument of vector='processes', not of vector={vector!r}; drop it "
                         f"or use vector='processes'")
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise MvsimError(f"num_envs must be a whole number of at least 1, got {num_envs!r}")
    own = {k: kwargs.pop(k) for k in VECTOR_ARGS[vector] if k in kwargs}
    fns = [functools.partial(GoalReachingEnv, **kwargs)] * num_envs
    if vector == "batched":
        from mvsim_core.gym.batched_env import MvsimBatchedVectorEnv

        return MvsimBatchedVectorEnv(fns, **own)
    from mvsim_core.gym.vector_env import MvsimVectorEnv

    return MvsimVectorEnv(fns, **own)


def goal_reaching_parallel_env(world: str | Path | World | None = None, agents: list[str] | None = None, *,
                               task: Task | None = None, **kwargs: Any) -> MvsimParallelEnv:
    """The multi-agent goal-reaching environment (PettingZoo parallel API): ``goal_room_two_robots.world.xml``, two
    ``mvsim/GoalReaching-v0`` robots (``robot1``, ``robot2``) with a goal each, with the arguments of
    ``mvsim/GoalReaching-v0``; the two see and may hit each other. ``world``, ``agents``, ``task`` and ``**kwargs``
    (any argument of :class:`~mvsim_core.gym.parallel_env.MvsimParallelEnv`) change them."""
    diff = {k: v for k, v in VARIANTS["differential"].items() if k not in ("world", "vehicle")}
    args = {**DEFAULTS, **diff, **kwargs}
    return MvsimParallelEnv(world if world is not None else WORLDS / "goal_room_two_robots.world.xml", agents,
                            task=task if task is not None else GoalReaching(), **args)
