"""A scripted policy for goal reaching: head for the goal along the free corridor nearest to its direction, seen in
the 2D lidar's scan. A baseline for the goal-reaching environments (the tests measure how often it arrives) and the
policy of ``python -m mvsim_core.gym.demo``.

From one observation (vehicle frame: x ahead, y to the left; m, rad):

* the scan's returns (rays shorter than the reach) become points around the vehicle (the lidar's pose on it taken
  into account);
* candidate headings every 5° across the lidar's field of view, plus the goal's own bearing when it lies in it; the
  corridor of a heading is the strip as wide as the vehicle plus ``margin`` each side, ahead along it; its free length
  is the distance to the first point in the strip;
* the heading taken is the one nearest to the goal's bearing whose corridor is free for min(goal distance,
  ``lookahead``); if none is, the freest one;
* twist vehicles turn toward that heading (ω = ``turn_gain`` · heading) and go forward at a speed that falls with the
  heading's angle, the free length ahead and the distance to the goal; a goal behind (outside the field of view) is
  turned to on the spot. Ackermann vehicles steer toward the heading (an angle proportional to it, up to their
  limit) at the same speed, at least 30 % of the top one, and back up when boxed in;
* either holds its turn (goes straight) while a return lies within ``side_margin`` of the vehicle's circle on the side
  it would turn to: the lidar does not see beside and behind the vehicle, which the turn would swing into it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mvsim_core.errors import MvsimError
from mvsim_core.gym.goal_reaching import vehicle_radius
from mvsim_core.sensors.outputs import OutputKind, output_of


class GoalSeeker:
    """The scripted policy (see the module docstring) for an environment whose vehicle has a 2D lidar and whose task
    observes ``"goal"``.

    Args:
        env: a :class:`~mvsim_core.gym.env.MvsimEnv` (or a wrapper of one), or a
            :class:`~mvsim_core.gym.parallel_env.MvsimParallelEnv`.
        lidar: the lidar's observation key (default: the first observed 2D lidar).
        agent_name: in a parallel environment, the agent this seeker drives.
        lookahead: m of free corridor wanted ahead. margin: m of clearance each side of the vehicle.
        side_margin: m beyond the vehicle's radius within which a return on one side stops turns toward that side.
        turn_gain: 1/s, turn rate per radian of heading.

    Raises:
        MvsimError: no 2D lidar observed, or no ``"goal"`` observation; no ``agent_name`` in a parallel environment.
    """

    def __init__(self, env: Any, lidar: str | None = None, *, agent_name: str | None = None, lookahead: float = 1.2,
                 margin: float = 0.12, side_margin: float = 0.12, turn_gain: float = 2.5) -> None:
        base = env.unwrapped
        if hasattr(base, "vehicle_agents"):  # a parallel environment: one seeker per agent
            if agent_name is None:
                raise MvsimError("give agent_name= for a seeker in a parallel environment")
            agent = base.vehicle_agents[agent_name]
            keys = list(base.observation_space(agent_name).spaces)
        else:
            agent = base.agent
            keys = list(base.observation_space.spaces)
        if "goal" not in keys:
            raise MvsimError("the goal seeker needs a 'goal' observation (the goal-reaching task's)")
        lidars = [k for k in agent.keys if output_of(agent.vehicle.sensors.get(k), OutputKind.SCAN) is not None]
        if lidar is None and not lidars:
            raise MvsimError(f"the goal seeker needs a 2D lidar among the observations {keys}")
        self.key = lidar if lidar is not None else lidars[0]
        sensor = agent.vehicle.sensors[self.key]
        x, y, _, yaw, _, _ = sensor.pose
        a = sensor.angles() + yaw
        self._cos, self._sin, self._origin = np.cos(a), np.sin(a), (x, y)
        self.reach = float(sensor.max_range)
        self.half_fov = 0.5 * float(sensor.fov)
        fp = np.asarray(agent.vehicle.chassis.footprint, dtype=np.float64)
        self.half_width = float(np.abs(fp[:, 1]).max()) + margin
        self.radius = vehicle_radius(agent.vehicle)
        self.lookahead, self.turn_gain, self.side_margin = float(lookahead), float(turn_gain), float(side_margin)
        self.kind, self.high, self.normalize = agent.kind, agent.high, agent.normalize
        self.headings = np.radians(np.arange(-90.0, 90.1, 5.0))
        self.headings = self.headings[np.abs(self.headings) <= self.half_fov]

    def free_lengths(self, points: np.ndarray, headings: np.ndarray) -> np.ndarray:
        """Free length (m) of the corridor along each heading (rad) among ``points`` ((n, 2), vehicle frame)."""
        c, s = np.cos(headings)[:, None], np.sin(headings)[:, None]
        along = c * points[:, 0] + s * points[:, 1]
        side = -s * points[:, 0] + c * points[:, 1]
        blocked = (np.abs(side) < self.half_width) & (along > 0.0)
        out: np.ndarray = np.where(blocked, along, np.inf).min(axis=1, initial=np.inf)
        return out

    def __call__(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        """The action for ``obs``."""
        r = np.asarray(obs[self.key], dtype=np.float64)
        hit = r < self.reach - 1e-3
        points = np.column_stack([self._origin[0] + r[hit] * self._cos[hit], self._origin[1] + r[hit] * self._sin[hit]])
        gx, gy = (float(v) for v in obs["goal"])
        dist, bearing = math.hypot(gx, gy), math.atan2(gy, gx)
        vmax, second = self.high
        if abs(bearing) > self.half_fov and self.kind == "twist":  # behind: turn on the spot
            return self._scaled(0.0, math.copysign(second, bearing))
        heads = self.headings
        if abs(bearing) <= self.half_fov:
            heads = np.append(heads, bearing)
        free = self.free_lengths(points, heads)
        need = min(dist, self.lookahead)
        ok = free >= need
        k = int(np.argmin(np.abs(heads - bearing) + np.where(ok, 0.0, 10.0))) if ok.any() else int(np.argmax(free))
        heading = float(heads[k])
        ahead = float(self.free_lengths(points, np.zeros(1))[0])
        speed = vmax * max(0.0, math.cos(heading)) ** 2 * min(1.0, max(0.0, ahead - self.radius) / 0.6, dist / 0.5)
        if self.kind == "twist":
            if not ok.any() and ahead < self.radius + 0.1:  # boxed in: turn toward the freest side on the spot
                return self._scaled(0.0, math.copysign(second, heading))
            return self._scaled(speed, self._hold(points, float(np.clip(self.turn_gain * heading, -second, second))))
        steer = self._hold(points, float(np.clip(1.5 * heading, -second, second)))
        if ahead < self.radius + 0.1:  # boxed in: back up, steering the other way
            return self._scaled(-0.5 * vmax, -math.copysign(second, heading))
        return self._scaled(max(speed, 0.3 * vmax), steer)

    def _hold(self, points: np.ndarray, turn: float) -> float:
        """``turn`` (a turn rate or steering angle, positive to the left), or 0 when a return lies within
        ``side_margin`` of the vehicle's circle on that side: turning would swing the vehicle into it."""
        near = points[np.hypot(points[:, 0], points[:, 1]) < self.radius + self.side_margin]
        if (turn > 0.0 and (near[:, 1] > 0.0).any()) or (turn < 0.0 and (near[:, 1] < 0.0).any()):
            return 0.0
        return turn

    def _scaled(self, first: float, second: float) -> np.ndarray:
        a = np.array([first, second], dtype=np.float64)
        if self.normalize:
            a = a / self.high
        return a.astype(np.float32)
