"""Joint commands, as ros2_control's command interfaces give them: wheel joints by velocity, steering joints by
position, mapped to the vehicle's own twist or drive command.

:meth:`Vehicle.set_joint_commands <mvsim_core.objects.vehicles.base.Vehicle.set_joint_commands>` goes through one
:class:`JointCommands` per vehicle, built from its robot description
(:mod:`mvsim_core.objects.vehicles.description`):

* **Commandable joints.** A ``SPIN`` joint is commanded by velocity (rad/s); on a differential class only when each
  of its wheels is driven (a caster's joint is not). A ``STEER`` or ``STEER_CENTRE`` joint of a steering class is
  commanded by position (rad). A ``MIMIC`` joint that follows a commandable joint is accepted and *ignored*: the
  followed joint's own command is what counts, as ros2_control itself derives a mimic joint's value from the joint it
  follows. Any other name is refused with :class:`~mvsim_core.errors.ArgumentValueError` listing the commandable
  joints.
* **Joint values → simulator.** A joint's value is ``multiplier · source + offset`` (description convention), so a
  wheel joint's rate ``q̇`` means a spin of ``q̇ / multiplier`` (rad/s, positive rolls forward) of each of its wheels,
  i.e. a rim speed ``s = spin · radius`` (m/s); a steering joint's position ``q`` means a wheel angle (or centre
  angle) ``(q − offset) / multiplier`` (rad, positive turns left).
* **Differential classes** (2, 3 or 4 wheels): each side's rim speed ``s_L``, ``s_R`` and sideways position ``y_L``,
  ``y_R`` (m) are the means over its commanded wheels (a skid-steer side: both wheels); then, as the wheel odometry
  reads it back (:meth:`Vehicle.odometry_velocity`), ``ω = (s_R − s_L)/(y_L − y_R)`` and ``v = s_L + ω·y_L``
  (= ``(s_L + s_R)/2`` for wheels symmetric about the reference point), commanded as ``set_twist(v, 0, ω)``.
* **Ackermann classes**: the centre (bicycle) steering angle δ is the mean of what the steering joints imply
  (a steered wheel at (x, y) turned by a: turn radius ``R = (x − x_rear)/tan a + y``, ``δ = atan(wheelbase/R)``; a
  ``STEER_CENTRE`` joint gives δ itself). The speed v (m/s, at the reference point) is the one whose rigid motion
  ``(v, 0, v·tan δ/wheelbase)`` best explains the commanded rim speeds: each wheel at (x, y) turned by its steering
  angle a_i for δ rolls at ``k_i·v`` with ``k_i = (1 − y·tan δ/wheelbase)·cos a_i + (x·tan δ/wheelbase)·sin a_i``,
  so ``v = Σ s_i / Σ k_i`` (exact when the rates agree, as an ackermann_steering_controller's do). Commanded as
  ``drive(v, δ)``, which every Ackermann controller but ``raw`` takes.
* **Memory.** A joint left out of a call keeps its last commanded value (0 before any), like a command interface;
  a refused call (bad name, NaN/inf, a controller that takes no such command) changes nothing. ``Vehicle.stop``
  zeroes the remembered wheel rates and keeps the steering positions.

The twist or drive command then goes through the vehicle's command gate (:mod:`mvsim_core.dynamics.command_limits`):
the same limits and NaN rules as ``set_twist`` / ``drive``. URDF joint limits are not applied.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from mvsim_core import arguments as arg
from mvsim_core.errors import ArgumentValueError, CommandValueError, ControllerError
from mvsim_core.objects.vehicles.description import Joint, JointSource, RobotDescription

if TYPE_CHECKING:
    from mvsim_core.objects.vehicles.base import Vehicle

VERB = "set_joint_commands"


class JointCommands:
    """The commandable joints of one vehicle and their last commanded values (see the module docstring).

    Args:
        vehicle: the vehicle (its dynamics class decides which joints drive it).
        description: its robot description.

    Attributes:
        description: the description it was built from.
        velocity_joints: name -> joint, the wheel joints commanded by velocity (rad/s), in tree order.
        position_joints: name -> joint, the steering joints commanded by position (rad), in tree order.
        mimics: name of a mimic joint of a commandable joint -> the joint it follows (accepted, ignored).
        velocities, positions: the last commanded value of each (rad/s, rad; 0 before any command).
    """

    def __init__(self, vehicle: Vehicle, description: RobotDescription) -> None:
        self.description = description
        dyn = vehicle.dynamics
        sides = getattr(dyn, "lr_pattern", ())
        steerable = bool(getattr(dyn, "steerable", False))
        n = len(vehicle.wheels)
        self.velocity_joints: dict[str, Joint] = {}
        self.position_joints: dict[str, Joint] = {}
        for j in description.joints:
            if not j.movable or not j.wheels or any(not 0 <= w < n for w in j.wheels) or j.multiplier == 0:
                continue
            if j.source is JointSource.SPIN and (steerable or all(w < len(sides) and sides[w] is not None
                                                                   for w in j.wheels)):
                self.velocity_joints[j.name] = j
            elif j.source in (JointSource.STEER, JointSource.STEER_CENTRE) and steerable:
                self.position_joints[j.name] = j
        self.mimics: dict[str, str] = {}
        commandable = self.velocity_joints.keys() | self.position_joints.keys()
        for j in description.joints:  # parents before children: a mimic of a mimic follows its root
            if j.source is JointSource.MIMIC and j.movable:
                root = self.mimics.get(j.mimic, j.mimic)
                if root in commandable:
                    self.mimics[j.name] = root
        self.velocities: dict[str, float] = dict.fromkeys(self.velocity_joints, 0.0)
        self.positions: dict[str, float] = dict.fromkeys(self.position_joints, 0.0)

    @property
    def names(self) -> tuple[str, ...]:
        """The commandable joints: wheel joints (velocity) then steering joints (position)."""
        return tuple(self.velocity_joints) + tuple(self.position_joints)

    def apply(self, veh: Vehicle, velocities: Mapping[str, float], positions: Mapping[str, float]
              ) -> tuple[float, ...]:
        """Command ``velocities`` (rad/s) and ``positions`` (rad) by joint name; what ``set_twist`` / ``drive``
        commanded.

        Raises:
            ArgumentTypeError: a mapping that is no mapping of names to numbers.
            ArgumentValueError: an unknown or non-commandable name, or a joint given the wrong kind of command.
            CommandValueError: a NaN or infinite value (nothing changes).
            ControllerError: the controller takes no such command, or the description has no joint that drives
                the vehicle.
        """
        own = f"vehicle '{veh.name}'"
        vel = self._checked(veh, "velocities", velocities, self.velocity_joints, self.position_joints, own,
                            "velocity", "a position (rad)")
        pos = self._checked(veh, "positions", positions, self.position_joints, self.velocity_joints, own,
                            "position", "a velocity (rad/s)")
        new_vel = {**self.velocities, **vel}
        new_pos = {**self.positions, **pos}
        if getattr(veh.dynamics, "steerable", False):
            done: tuple[float, ...] = veh.drive(*self._drive(veh, new_vel, new_pos))
        else:
            v, w = self._twist(veh, new_vel)
            done = veh.set_twist(v, 0.0, w)
        self.velocities, self.positions = new_vel, new_pos
        return done

    def stopped(self) -> None:
        """The vehicle was stopped: the remembered wheel rates become 0 (steering positions stay)."""
        self.velocities = dict.fromkeys(self.velocities, 0.0)

    # ------------------------------------------------------------------ checks
    def _checked(self, veh: Vehicle, argument: str, given: Mapping[str, float], own_kind: Mapping[str, Joint],
                 other_kind: Mapping[str, Joint], owner: str, what: str, other: str) -> dict[str, float]:
        if not isinstance(given, Mapping):
            arg.instance(VERB, argument, given, Mapping, "a mapping of joint names to numbers", owner)
        out: dict[str, float] = {}
        for name, value in given.items():
            if name in self.mimics:
                continue
            if name not in own_kind:
                if name in other_kind:
                    raise ArgumentValueError(VERB, argument, f"keyed by joints commanded by {what}; joint {name!r} "
                                                             f"takes {other}", owner)
                raise ArgumentValueError(VERB, argument, f"keyed by commandable joints ({self._listing()}), not "
                                                         f"{name!r}", owner)
            v = arg.real(VERB, f"{argument}[{name!r}]", value, owner)
            if not math.isfinite(v):
                raise CommandValueError(veh.name, f"{name} {what}", v)
            out[name] = v
        return out

    def _listing(self) -> str:
        parts = [f"{n} (velocity)" for n in self.velocity_joints] + [f"{n} (position)" for n in self.position_joints]
        return ", ".join(parts) or "none"

    # ------------------------------------------------------------------ kinematics
    def _rim_speeds(self, veh: Vehicle, velocities: Mapping[str, float]) -> dict[int, float]:
        """Wheel index -> rim speed (m/s, positive forward) that the wheel joints' rates mean."""
        wheels = veh.wheels
        out: dict[int, float] = {}
        for name, j in self.velocity_joints.items():
            spin = velocities[name] / j.multiplier
            for i in j.wheels:
                out[i] = spin * wheels[i].radius
        if not out:
            raise ControllerError(f"vehicle '{veh.name}': its description has no wheel joint that drives it; "
                                  "nothing to command")
        return out

    def _twist(self, veh: Vehicle, velocities: Mapping[str, float]) -> tuple[float, float]:
        """(v m/s, ω rad/s) of a differential vehicle for the wheel rates."""
        rims = self._rim_speeds(veh, velocities)
        sides = veh.dynamics.lr_pattern  # WheelSide values: "l", "r"; None (no torque) is never commandable
        side_s: dict[str, list[float]] = {"l": [], "r": []}
        side_y: dict[str, list[float]] = {"l": [], "r": []}
        for i, s in rims.items():
            side = sides[i]
            assert side is not None
            side_s[side.value].append(s)
            side_y[side.value].append(veh.wheels[i].y)
        for key, word in (("l", "left"), ("r", "right")):
            if not side_s[key]:
                raise ControllerError(f"vehicle '{veh.name}': its description has no wheel joint on the {word} "
                                      f"side; commandable joints: {self._listing()}")
        s_l, s_r = (sum(side_s[k]) / len(side_s[k]) for k in ("l", "r"))
        y_l, y_r = (sum(side_y[k]) / len(side_y[k]) for k in ("l", "r"))
        w = (s_r - s_l) / (y_l - y_r)
        return s_l + w * y_l, w

    def _drive(self, veh: Vehicle, velocities: Mapping[str, float], positions: Mapping[str, float]
               ) -> tuple[float, float]:
        """(speed m/s, centre steering angle rad) of an Ackermann vehicle for the joint commands."""
        dyn = veh.dynamics
        wheels = veh.wheels
        x_rear = wheels[0].x
        wb = float(dyn.wheelbase)  # type: ignore[attr-defined]
        deltas = []
        for name, j in self.position_joints.items():
            a = (positions[name] - j.offset) / j.multiplier
            if j.source is JointSource.STEER_CENTRE:
                deltas.append(a)
                continue
            for i in j.wheels:
                deltas.append(_centre_angle(a, wheels[i].x - x_rear, wheels[i].y, wb))
        delta = sum(deltas) / len(deltas) if deltas else 0.0
        rims = self._rim_speeds(veh, velocities)
        steer_of = dict(zip((2, 3), dyn.front_wheel_angles(delta), strict=True))  # type: ignore[attr-defined]
        c = math.tan(max(-dyn.max_steer, min(dyn.max_steer, delta))) / wb  # type: ignore[attr-defined]
        k_sum = 0.0
        for i in rims:
            a_i = steer_of.get(i, 0.0)
            k_sum += (1.0 - wheels[i].y * c) * math.cos(a_i) + wheels[i].x * c * math.sin(a_i)
        speed = sum(rims.values()) / k_sum if abs(k_sum) > 1e-9 else 0.0
        return speed, delta


def joint_commands_of(veh: Vehicle) -> JointCommands:
    """The :class:`JointCommands` of ``veh`` for its current robot description (made on first use, remade when the
    description changes)."""
    desc = veh.robot_description()
    jc = veh._joints
    if jc is None or jc.description is not desc:
        jc = veh._joints = JointCommands(veh, desc)
    return jc


def _centre_angle(a: float, dx: float, y: float, wheelbase: float) -> float:
    """The centre (bicycle) steering angle (rad) for which a wheel ``dx`` m ahead of the rear axle and ``y`` m to the
    left turns by ``a`` rad: the turn centre lies on the rear axle line, ``R = dx/tan a + y`` to the left."""
    if abs(a) < 1e-12:
        return 0.0
    r = dx / math.tan(a) + y
    if r == 0.0:
        return math.copysign(0.5 * math.pi, a)
    return math.atan(wheelbase / r)
