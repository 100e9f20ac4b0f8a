"""The goal-reaching task: drive to a goal drawn at random, without touching anything.

Episodes: every agent's vehicle is put at a random pose (x, y uniform in the region, yaw uniform in [−π, π)) where a
disc of its radius plus ``margin`` is clear of the static obstacles (:mod:`mvsim_core.gym.free_space`) and of the
other agents, and gets a goal point, uniform in the region, clear by its radius, at least ``min_goal_distance`` from
its start and away from the other agents' starts and goals. Every draw comes from ``world.rng``. A visual-only disc
(``goal_<agent>``, seen by the viewer and nobody else) marks each goal.

Observation added: ``"goal"``, (2,) float32 — the goal in the vehicle frame (x ahead, y to the left; m), from the
true pose, each component within ± the region's diagonal.

Reward of a step (d = distance from the vehicle's reference point to the goal, m, before and after the step):

    progress_weight · (d_before − d_after) − step_penalty
    + goal_reward          when d_after < goal_radius: the episode terminates (info["is_success"] True)
    − collision_penalty    when the vehicle touched anything during the step: the episode terminates

The progress term sums to progress_weight · (d_start − d_end) over an episode; the goal reward dominates it, so
reaching the goal is what pays. Truncation: by the environment's time limit (``max_episode_steps``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

from mvsim_core.errors import MvsimError
from mvsim_core.gym.free_space import FreeSpace
from mvsim_core.gym.task import Outcome, Task

if TYPE_CHECKING:
    from mvsim_core.objects.vehicles.base import Vehicle
    from mvsim_core.world import World

MARKER = ('<block name="{name}"><visual_only>true</visual_only><static>true</static><color>{color}</color>'
          '<init_pose>0 0 0</init_pose><geometry type="cylinder" radius="{radius}" length="0.01" '
          'vertex_count="24"/></block>')
"""The goal marker: a flat disc of the goal radius, drawn by the viewer only."""
MARKER_COLORS = ("#20c040", "#e0c020", "#c040c0", "#20c0c0")


def vehicle_radius(veh: Vehicle) -> float:
    """Radius (m) of the smallest disc around the vehicle's reference point that holds its chassis and wheels."""
    from mvsim_core.objects.vehicles.base import wheels_outline

    pts = np.vstack([np.asarray(veh.chassis.footprint, dtype=np.float64).reshape(-1, 2), wheels_outline(veh.wheels)])
    return float(np.hypot(pts[:, 0], pts[:, 1]).max())


def world_region(world: World) -> tuple[float, float, float, float]:
    """(x_min, x_max, y_min, y_max) in m: the extent of the world's occupancy grids, else of its tangible blocks.

    Raises:
        MvsimError: the world has neither (the task then needs ``region=``).
    """
    from mvsim_core.elements.occupancy_grid import OccupancyGrid

    grids = [e.grid for e in world.elements if isinstance(e, OccupancyGrid)]
    if grids:
        return (min(g.x_min for g in grids), max(g.x_max for g in grids), min(g.y_min for g in grids),
                max(g.y_max for g in grids))
    polys = FreeSpace(world).polygons
    if polys:
        pts = np.vstack(polys)
        return (float(pts[:, 0].min()), float(pts[:, 0].max()), float(pts[:, 1].min()), float(pts[:, 1].max()))
    raise MvsimError(f"{world.path} has no occupancy grid and no blocks to draw starts and goals within; pass "
                     f"region=(x_min, x_max, y_min, y_max)")


class GoalReaching(Task):
    """Reach a random goal without collisions (see the module docstring).

    Args:
        region: (x_min, x_max, y_min, y_max), m, world frame, where starts and goals are drawn (default:
            :func:`world_region`).
        goal_radius: the goal counts as reached within this distance (m).
        min_goal_distance: the least distance from a start to its goal (m).
        margin: clearance (m) around a vehicle at its start, beyond its radius.
        progress_weight: reward per metre of approach.
        goal_reward, collision_penalty, step_penalty: reward on reaching the goal, penalty on a collision, cost of
            each step.
        terminate_on_collision: a collision ends the episode (else it is only penalized).
        markers: add a visual-only disc marking each goal (viewer and rgb_array frames).
        max_draws: draws of a pose before giving up (MvsimError: the region has no room).
    """

    def __init__(self, *, region: tuple[float, float, float, float] | None = None, goal_radius: float = 0.3,
                 min_goal_distance: float = 2.0, margin: float = 0.15, progress_weight: float = 1.0,
                 goal_reward: float = 10.0, collision_penalty: float = 10.0, step_penalty: float = 0.01,
                 terminate_on_collision: bool = True, markers: bool = True, max_draws: int = 10000) -> None:
        self.region = region
        self.goal_radius = float(goal_radius)
        self.min_goal_distance = float(min_goal_distance)
        self.margin = float(margin)
        self.progress_weight = float(progress_weight)
        self.goal_reward = float(goal_reward)
        self.collision_penalty = float(collision_penalty)
        self.step_penalty = float(step_penalty)
        self.terminate_on_collision = bool(terminate_on_collision)
        self.markers = bool(markers)
        self.max_draws = int(max_draws)
        self.goals: dict[str, tuple[float, float]] = {}
        self.distances: dict[str, float] = {}
        self._radius: dict[str, float] = {}
        self._free: FreeSpace | None = None
        self._reach = 1.0

    # ------------------------------------------------------------------ Task
    def setup(self, world: World, agents: Sequence[str]) -> None:
        if self.region is None:
            self.region = world_region(world)
        x0, x1, y0, y1 = self.region
        if not (x1 > x0 and y1 > y0):
            raise MvsimError(f"goal-reaching region {self.region} is empty; give (x_min, x_max, y_min, y_max) in m")
        self._reach = float(math.hypot(x1 - x0, y1 - y0))
        self._free = FreeSpace(world)
        self._radius = {a: vehicle_radius(world.vehicles[a]) for a in agents}
        if not self.markers or world.object_parser is None:
            return
        for k, a in enumerate(agents):
            name = f"goal_{a}"
            if name not in world.blocks:
                world.spawn(MARKER.format(name=name, color=MARKER_COLORS[k % len(MARKER_COLORS)],
                                          radius=self.goal_radius))

    def observation_spaces(self, world: World, agent: str) -> dict[str, spaces.Box]:
        return {"goal": spaces.Box(-self._reach, self._reach, (2,), np.float32)}

    def reset(self, world: World, agents: Sequence[str]) -> None:
        gen = world.rng.generator
        starts: dict[str, tuple[float, float]] = {}
        self.goals = {}
        for a in agents:
            r = self._radius[a]
            x, y = self._draw(gen, r + self.margin, lambda x, y, r=r: all(
                math.hypot(x - sx, y - sy) >= r + self._radius[b] + self.margin for b, (sx, sy) in starts.items()))
            yaw = float(gen.uniform(-math.pi, math.pi))
            starts[a] = (x, y)
            world.set_pose(a, x, y, yaw)
        for a in agents:
            r = self._radius[a]
            sx, sy = starts[a]
            self.goals[a] = self._draw(gen, r, lambda x, y, a=a, r=r, sx=sx, sy=sy: (
                math.hypot(x - sx, y - sy) >= self.min_goal_distance
                and all(math.hypot(x - px, y - py) >= r + self._radius[b] + self.margin
                        for b, (px, py) in starts.items() if b != a)
                and all(math.hypot(x - gx, y - gy) >= 2.0 * self.goal_radius for gx, gy in self.goals.values())))
            marker = f"goal_{a}"
            if marker in world.blocks:
                world.set_pose(marker, *self.goals[a], 0.0)
        self.distances = {a: self._distance(world, a) for a in agents}

    def observe(self, world: World, agent: str) -> dict[str, np.ndarray]:
        return {"goal": np.array(self._goal(world, agent), np.float32)}

    def observe_into(self, world: World, agent: str, out: dict[str, np.ndarray]) -> None:
        goal = out["goal"]
        goal[0], goal[1] = self._goal(world, agent)

    def evaluate(self, world: World, agent: str) -> Outcome:
        d = self._distance(world, agent)
        before = self.distances.get(agent, d)
        self.distances[agent] = d
        reward = self.progress_weight * (before - d) - self.step_penalty
        collided = bool(world.vehicles[agent].had_collision)
        reached = d < self.goal_radius
        if reached:
            reward += self.goal_reward
        elif collided:
            reward -= self.collision_penalty
        terminated = reached or (collided and self.terminate_on_collision)
        return Outcome(float(reward), terminated, info={"distance": d, "is_success": reached, "collision": collided})

    def state(self) -> dict[str, Any]:
        return {"goals": dict(self.goals), "distances": dict(self.distances)}

    def set_state(self, state: dict[str, Any]) -> None:
        self.goals = {a: (float(g[0]), float(g[1])) for a, g in state["goals"].items()}
        self.distances = {a: float(d) for a, d in state["distances"].items()}

    # ------------------------------------------------------------------ helpers
    def _goal(self, world: World, agent: str) -> tuple[float, float]:
        """The goal in ``agent``'s vehicle frame (x ahead, y to the left; m), each component clipped to ± the
        region's diagonal."""
        x, y, _, yaw, _, _ = world.vehicles[agent].pose
        gx, gy = self.goals[agent]
        c, s = math.cos(yaw), math.sin(yaw)
        dx, dy, m = gx - x, gy - y, self._reach
        return min(max(c * dx + s * dy, -m), m), min(max(-s * dx + c * dy, -m), m)

    def _distance(self, world: World, agent: str) -> float:
        x, y, *_ = world.vehicles[agent].pose
        gx, gy = self.goals[agent]
        return math.hypot(gx - x, gy - y)

    def _draw(self, gen: np.random.Generator, clearance: float, accept: Any) -> tuple[float, float]:
        """A point (m) of the region, ``clearance`` m from the region's edges and the obstacles, that ``accept``s."""
        assert self.region is not None and self._free is not None
        x0, x1, y0, y1 = self.region
        lo_x, hi_x, lo_y, hi_y = x0 + clearance, x1 - clearance, y0 + clearance, y1 - clearance
        if not (hi_x > lo_x and hi_y > lo_y):
            raise MvsimError(f"goal-reaching region {self.region} is too small for a clearance of {clearance:g} m")
        for _ in range(self.max_draws):
            x, y = float(gen.uniform(lo_x, hi_x)), float(gen.uniform(lo_y, hi_y))
            if self._free.is_free(x, y, clearance) and accept(x, y):
                return x, y
        raise MvsimError(f"no free place found in region {self.region} after {self.max_draws} draws (clearance "
                         f"{clearance:g} m); widen the region or lower min_goal_distance / margin")
