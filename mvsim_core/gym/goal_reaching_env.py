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


VECTOR_ARGS = ("processes", "share_main", "copy", "autoreset_mode", "context", "spin")
"""Arguments of :func:`goal_reaching_vector_env` that go to the vector environment rather than to the copies."""


def goal_reaching_vector_env(num_envs: int = 1, **kwargs: Any) -> MvsimVectorEnv:
    """``num_envs`` copies of :class:`GoalReachingEnv` as an :class:`~mvsim_core.gym.vector_env.MvsimVectorEnv`: what
    ``gymnasium.make_vec("mvsim/GoalReaching-v0", num_envs)`` makes. ``kwargs``: the vector environment's own
    (:data:`VECTOR_ARGS`) and the copies' (those of :class:`GoalReachingEnv`)."""
    import functools

    from mvsim_core.gym.vector_env import MvsimVectorEnv

    own = {k: kwargs.pop(k) for k in VECTOR_ARGS if k in kwargs}
    return MvsimVectorEnv([functools.partial(GoalReachingEnv, **kwargs)] * num_envs, **own)


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
