"""One vehicle as the agent of an environment: its action space and how an action becomes a command, its observation
space and how an observation is read from the world. Shared by the single-vehicle Gymnasium environment
(:mod:`mvsim_core.gym.env`) and the PettingZoo one (:mod:`mvsim_core.gym.parallel_env`).

Actions (a float32 :class:`~gymnasium.spaces.Box` of two values, held for one control period):

* ``"twist"``: (v, ω) — forward speed (m/s) and turn rate (rad/s) in the vehicle frame, given to
  :meth:`Vehicle.set_twist <mvsim_core.objects.vehicles.base.Vehicle.set_twist>` as (v, 0, ω). Any vehicle whose
  controller takes twists (``twist_pid``, ``twist_ideal``, ``twist_front_steer_pid``).
* ``"ackermann"``: (speed, steer) — forward speed (m/s) and steering angle (rad, positive turns left), given to
  :meth:`Vehicle.drive <mvsim_core.objects.vehicles.base.Vehicle.drive>`. Ackermann vehicles.
* ``"auto"``: ``"ackermann"`` for Ackermann vehicles, else ``"twist"``.

Bounds are ±the vehicle's :attr:`~mvsim_core.objects.vehicles.base.Vehicle.command_limits` (``max_speed``,
``max_omega``, ``max_steer``), after the overrides given here (which are written into the vehicle's limits). With
``normalize=True`` the space is [-1, 1]² and an action is scaled by the bounds. Actions outside the space are clipped
to it.

Observations (a dict; each entry a :class:`~gymnasium.spaces.Box`, copied out of the world):

* one entry per sensor, under its name, by the kind of its output (:data:`SENSOR_VIEWS`): a scan (a 2D lidar,
  ``laser``) gives its ranges, (nrays,) float32 in [0, max_range] m (a ray that hits nothing reads max_range); a
  point cloud (a 3D lidar, ``lidar3d``) its range image, (vert_nrays, horz_nrays) float32 m, rings from the lowest
  up, azimuths counter-clockwise from −180° (max_range where there is no return); an image (``camera``) its image,
  (nrows, ncols, 3) uint8, row 0 at the top; an IMU sample (``imu``) (6,) float32: angular velocity (rad/s) then
  linear acceleration (m/s²), sensor frame, then the orientation quaternion (x, y, z, w) when it measures one (10
  values); sensors whose outputs are of other kinds (RGB-D, fix) cannot be observed;
* ``"odometry"``: (5,) float32 — the wheel odometry's pose since the episode started (x, y m, yaw rad in [−π, π],
  in the frame of the start pose; noisy, it drifts) and the encoders' velocities (v m/s, ω rad/s);
* ``"velocity"``: (2,) float32 — the encoders' (v m/s, ω rad/s) alone; bounded by twice the vehicle's
  ``max_speed`` and ``max_omega`` (a vehicle pushed faster reads the bound);
* ``"pose"``: (3,) float32 — the true pose (x, y m, yaw rad in [−π, π]) in the world frame (ground truth).

Sensors are sampled on their own schedule (every ``sensor_period``); an observation holds the latest sample. A
control period that is a multiple of the sensor periods gives a fresh sample at every step. At a reset the observed
sensors are sampled at once (:meth:`VehicleAgent.prime`), so that the first observation is real too.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

from mvsim_core.dynamics.controllers.base import Command, Family
from mvsim_core.errors import MvsimError
from mvsim_core.sensors.outputs import OutputKind, outputs_of

if TYPE_CHECKING:
    from mvsim_core.objects.vehicles.base import Vehicle
    from mvsim_core.sensors.base import Sensor
    from mvsim_core.world import World

READER = "gym"
"""The reader an agent wants the sensors of its observations as (``Sensor.want``, :mod:`mvsim_core.sensors.demand`)."""
ACTION_KINDS = ("auto", "twist", "ackermann")
BUILTIN_KEYS = ("odometry", "velocity", "pose")
VELOCITY_MARGIN = 2.0
"""The ``velocity`` (and the velocities of ``odometry``) are bounded by this many times the command limits."""
MIN_TURN_RADIUS = 0.1
"""m: the turn rate bound of a vehicle without a ``max_omega`` limit is max_speed over this radius."""
INF = np.float32(np.inf)


@dataclass(frozen=True)
class SensorView:
    """How a sensor with an output of one kind appears in observations: its space, and the array of an observation
    (None: nothing measured yet); ``write`` puts that array into a given one of the space's shape and dtype (None:
    :meth:`VehicleAgent.observe_into` copies what ``read`` makes)."""

    space: Callable[[Any], spaces.Box]
    read: Callable[[Any, Any], np.ndarray]
    write: Callable[[Any, Any, np.ndarray], None] | None = None


def _laser_space(s: Any) -> spaces.Box:
    return spaces.Box(0.0, float(s.max_range), (int(s.nrays),), np.float32)


def _laser_read(s: Any, obs: Any) -> np.ndarray:
    if obs is None:
        return np.full(int(s.nrays), s.max_range, dtype=np.float32)
    return np.array(obs.ranges, dtype=np.float32)


def _laser_write(s: Any, obs: Any, out: np.ndarray) -> None:
    if obs is None:
        out.fill(s.max_range)
    else:
        np.copyto(out, obs.ranges, casting="unsafe")


def _lidar3d_space(s: Any) -> spaces.Box:
    return spaces.Box(0.0, float(s.max_range), (int(s.vert_nrays), int(s.horz_nrays)), np.float32)


def _lidar3d_read(s: Any, obs: Any) -> np.ndarray:
    img = np.full((int(s.vert_nrays), int(s.horz_nrays)), s.max_range, dtype=np.float32)
    if obs is not None:
        img[obs.ring.astype(np.intp), obs.azimuth_index.astype(np.intp)] = np.clip(obs.ranges, 0.0, s.max_range)
    return img


def _camera_space(s: Any) -> spaces.Box:
    return spaces.Box(0, 255, (int(s.height), int(s.width), 3), np.uint8)


def _camera_read(s: Any, obs: Any) -> np.ndarray:
    if obs is None:
        return np.zeros((int(s.height), int(s.width), 3), dtype=np.uint8)
    return np.array(obs.rgb, dtype=np.uint8)


def _imu_size(s: Any) -> int:
    return 10 if bool(s.params["measure_orientation"]) else 6


def _imu_space(s: Any) -> spaces.Box:
    return spaces.Box(-INF, INF, (_imu_size(s),), np.float32)


def _imu_read(s: Any, obs: Any) -> np.ndarray:
    out = np.zeros(_imu_size(s), dtype=np.float32)
    if obs is not None:
        out[:3], out[3:6] = obs.angular_velocity, obs.linear_acceleration
        if obs.orientation is not None and len(out) == 10:
            out[6:] = obs.orientation
    return out


SENSOR_VIEWS: dict[OutputKind, SensorView] = {
    OutputKind.SCAN: SensorView(_laser_space, _laser_read, _laser_write),
    OutputKind.POINT_CLOUD: SensorView(_lidar3d_space, _lidar3d_read),
    OutputKind.IMAGE: SensorView(_camera_space, _camera_read),
    OutputKind.IMU: SensorView(_imu_space, _imu_read),
}
"""Output kind (:mod:`mvsim_core.sensors.outputs`) -> its view; a sensor is observed through its first output of a
kind here; sensors with none cannot be observed."""

OBSERVABLE_CLASSES = ("laser", "lidar3d", "camera", "imu")
"""For messages only (what the error of an unobservable sensor suggests): the built-in sensor classes whose outputs
have a view. Which sensors are observed is decided by their outputs' kinds, never by this list."""


def sensor_view(sensor: Sensor) -> SensorView | None:
    """The view of ``sensor``: that of its first output of a kind in :data:`SENSOR_VIEWS`; None when it has none."""
    for o in outputs_of(sensor):
        view = SENSOR_VIEWS.get(o.kind)
        if view is not None:
            return view
    return None


def wrap_angle(a: float) -> float:
    """``a`` (rad) wrapped to [−π, π]."""
    return math.atan2(math.sin(a), math.cos(a))


class VehicleAgent:
    """Vehicle ``name`` of ``world`` as an agent (see the module docstring).

    Args:
        world: the world (not started yet, or started).
        name: the vehicle.
        action: ``"auto"``, ``"twist"`` or ``"ackermann"``.
        observations: the keys observed: sensor names and :data:`BUILTIN_KEYS` (default: every sensor of a class in
            :data:`SENSOR_VIEWS`, then ``"odometry"``).
        normalize_actions: actions in [-1, 1], scaled by the bounds.
        max_speed, max_omega, max_steer: new command limits of the vehicle (m/s, rad/s, rad); None keeps its own.

    Attributes:
        name, vehicle, kind (``"twist"`` or ``"ackermann"``), keys (observed, in order), action_space,
        observation_spaces (key -> Box), high (the physical action bounds, (2,) float64: m/s, then rad/s or rad).

    Raises:
        MvsimError: no such vehicle; an action kind its controller does not take; an unknown key or a sensor that
            cannot be observed (the message lists what can); an action bound that is infinite.
    """

    def __init__(self, world: World, name: str, *, action: str = "auto", observations: Sequence[str] | None = None,
                 normalize_actions: bool = False, max_speed: float | None = None, max_omega: float | None = None,
                 max_steer: float | None = None) -> None:
        if name not in world.vehicles:
            raise MvsimError(f"no vehicle '{name}' in {world.path}; vehicles: {', '.join(world.vehicles) or 'none'}")
        veh = world.vehicles[name]
        self.world, self.name, self.vehicle = world, name, veh
        self.kind = _action_kind(veh, action)
        changes = {k: float(v) for k, v in (("max_speed", max_speed), ("max_omega", max_omega),
                                             ("max_steer", max_steer)) if v is not None}
        if changes:
            veh.command_limits = veh.command_limits.replace(**changes)
        lim = veh.command_limits
        second, second_name = (lim.max_omega, "max_omega") if self.kind == "twist" else (lim.max_steer, "max_steer")
        if not (math.isfinite(lim.max_speed) and math.isfinite(second)):
            raise MvsimError(f"vehicle '{name}': its command limits (max_speed = {lim.max_speed:g}, {second_name} = "
                             f"{second:g}) bound the actions and must be finite; pass max_speed= and {second_name}=")
        self.high = np.array([lim.max_speed, second], dtype=np.float64)
        self.normalize = bool(normalize_actions)
        bound = np.ones(2, np.float32) if self.normalize else self.high.astype(np.float32)
        self.action_space = spaces.Box(-bound, bound, dtype=np.float32)
        self._bounds = (float(bound[0]), float(bound[1]))
        self._high = (float(self.high[0]), float(self.high[1]))
        omega = lim.max_omega if math.isfinite(lim.max_omega) else lim.max_speed / MIN_TURN_RADIUS
        self._vel_bound = (VELOCITY_MARGIN * np.array([lim.max_speed, omega])).astype(np.float32)
        self._vel_limits = (float(self._vel_bound[0]), float(self._vel_bound[1]))
        self._sensors: dict[str, Sensor] = {}
        self._views: dict[str, SensorView] = {}
        self.keys = list(observations) if observations is not None else self._default_keys()
        if len(set(self.keys)) != len(self.keys):
            raise MvsimError(f"vehicle '{name}': an observation is named twice in {self.keys}")
        self.observation_spaces: dict[str, spaces.Box] = {k: self._space(k) for k in self.keys}

    def _default_keys(self) -> list[str]:
        return [n for n, s in self.vehicle.sensors.items() if sensor_view(s) is not None] + ["odometry"]

    def _space(self, key: str) -> spaces.Box:
        v = self._vel_bound
        if key == "odometry":
            hi = np.array([INF, INF, np.pi, v[0], v[1]], dtype=np.float32)
            return spaces.Box(-hi, hi, dtype=np.float32)
        if key == "velocity":
            return spaces.Box(-v, v, dtype=np.float32)
        if key == "pose":
            hi = np.array([INF, INF, np.pi], dtype=np.float32)
            return spaces.Box(-hi, hi, dtype=np.float32)
        sensor = self.vehicle.sensors.get(key)
        view = sensor_view(sensor) if sensor is not None else None
        if sensor is None or view is None:
            usable = [n for n, s in self.vehicle.sensors.items() if sensor_view(s) is not None]
            what = (f"sensor '{key}' is of class {sensor.xml_class}, which cannot be observed" if sensor is not None
                    else f"no observation '{key}'")
            raise MvsimError(f"vehicle '{self.name}': {what}; observations: {', '.join([*usable, *BUILTIN_KEYS])} "
                             f"(sensor classes {', '.join(OBSERVABLE_CLASSES)})")
        self._sensors[key] = sensor
        self._views[key] = view
        sensor.want(READER)  # observed: sampled even where the world samples on demand
        return view.space(sensor)

    # ------------------------------------------------------------------ actions
    def command(self, action: Any) -> tuple[float, float]:
        """The physical command of ``action`` (clipped to the action space, scaled when normalized): (v m/s,
        ω rad/s) for twists, (speed m/s, steer rad) for Ackermann.

        Raises:
            MvsimError: an action of the wrong shape, or with a NaN.
        """
        a = np.asarray(action, dtype=np.float64).reshape(-1)
        if a.shape != (2,):
            raise MvsimError(f"vehicle '{self.name}': an action is 2 numbers ({self.kind}), got {action!r}")
        first, second = float(a[0]), float(a[1])  # plain floats: a few microseconds less than numpy on two values
        if math.isnan(first) or math.isnan(second):
            raise MvsimError(f"vehicle '{self.name}': an action is 2 numbers ({self.kind}), got {action!r}")
        b0, b1 = self._bounds
        first, second = min(max(first, -b0), b0), min(max(second, -b1), b1)
        if self.normalize:
            return first * self._high[0], second * self._high[1]
        return first, second

    def act(self, action: Any) -> tuple[float, float]:
        """Give the vehicle the command of ``action`` (see :meth:`command`); returns it."""
        first, second = self.command(action)
        if self.kind == "twist":
            self.vehicle.set_twist(first, 0.0, second)
        else:
            self.vehicle.drive(first, second)
        return first, second

    def stop(self) -> None:
        """Command a standstill (speed 0, and for Ackermann the steering kept)."""
        self.vehicle.stop()

    # ------------------------------------------------------------------ observations
    def prime(self) -> None:
        """Sample now the observed sensors that have no observation yet (after a reset), in batches per class, at
        the world's current time; noise comes from each sensor's own generator as in any sample."""
        waiting = [s for s in self._sensors.values() if s.last is None]
        if not waiting:
            return
        ctx = self.world.sensor_scheduler.ctx
        groups: dict[type[Sensor], list[Sensor]] = defaultdict(list)
        for s in waiting:
            groups[type(s)].append(s)
        for cls, group in groups.items():
            for s, obs in zip(group, cls.sample_batch(group, ctx, self.world.time), strict=True):
                s.last = obs

    def observe(self) -> dict[str, np.ndarray]:
        """The observation now: fresh arrays, one per key (see the module docstring)."""
        out: dict[str, np.ndarray] = {}
        for key in self.keys:
            sensor = self._sensors.get(key)
            if sensor is not None:
                out[key] = self._views[key].read(sensor, sensor.last)
            elif key == "pose":
                x, y, _, yaw, _, _ = self.vehicle.pose
                out[key] = np.array([x, y, wrap_angle(yaw)], dtype=np.float32)
            else:
                v, _, w = self.vehicle.odometry_velocity()
                vel = np.clip(np.array([v, w], dtype=np.float32), -self._vel_bound, self._vel_bound)
                if key == "velocity":
                    out[key] = vel
                else:
                    ox, oy, oyaw = self.vehicle.odometry
                    out[key] = np.array([ox, oy, wrap_angle(oyaw), vel[0], vel[1]], dtype=np.float32)
        return out

    def observe_into(self, out: dict[str, np.ndarray]) -> None:
        """Write the observation now into ``out`` (key -> an array of the key's space: shape and dtype), in place:
        the values :meth:`observe` returns, bit for bit, without making arrays where the view can write (batched
        environments hand rows of their output arrays)."""
        for key in self.keys:
            dst = out[key]
            sensor = self._sensors.get(key)
            if sensor is not None:
                view = self._views[key]
                if view.write is not None:
                    view.write(sensor, sensor.last, dst)
                else:
                    dst[...] = view.read(sensor, sensor.last)
            elif key == "pose":
                x, y, _, yaw, _, _ = self.vehicle.pose
                dst[0], dst[1], dst[2] = x, y, wrap_angle(yaw)
            else:  # clipped to the float32 bounds before the cast to float32: the same as after it (exact bounds)
                v, _, w = self.vehicle.odometry_velocity()
                bv, bw = self._vel_limits
                v, w = min(max(v, -bv), bv), min(max(w, -bw), bw)
                if key == "velocity":
                    dst[0], dst[1] = v, w
                else:
                    ox, oy, oyaw = self.vehicle.odometry
                    dst[0], dst[1], dst[2], dst[3], dst[4] = ox, oy, wrap_angle(oyaw), v, w


def _action_kind(veh: Vehicle, action: str) -> str:
    """The action kind ``action`` stands for on ``veh``, checked against its controller."""
    if action not in ACTION_KINDS:
        raise MvsimError(f"unknown action kind {action!r}; choose one of {', '.join(ACTION_KINDS)}")
    ackermann = veh.controller.family in (Family.ACKERMANN, Family.ACKERMANN_DRIVETRAIN)
    kind = ("ackermann" if ackermann else "twist") if action == "auto" else action
    ctrl = veh.controller.xml_class
    if kind == "ackermann" and not ackermann:
        raise MvsimError(f"vehicle '{veh.name}' ({veh.dynamics.xml_class}) does not steer: use action='twist'")
    if kind == "ackermann" and Command.DRIVE not in veh.controller.commands:
        raise MvsimError(f"vehicle '{veh.name}': its controller {ctrl} takes no speed and steering; give it a "
                         f"front_steer_pid, twist_front_steer_pid or twist_ideal controller")
    if kind == "twist" and not veh.controller.accepts_twist:
        raise MvsimError(f"vehicle '{veh.name}': its controller {ctrl} takes no twists; give it a twist_pid, "
                         f"twist_ideal or twist_front_steer_pid controller"
                         + (", or use action='ackermann'" if ackermann else ""))
    return kind
