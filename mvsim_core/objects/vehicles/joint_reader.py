"""Reading a vehicle's joint state from its wheels: what :meth:`Vehicle.joint_state
<mvsim_core.objects.vehicles.base.Vehicle.joint_state>` returns.

For each movable joint of the description (:class:`~mvsim_core.objects.vehicles.description.Joint`), position =
``multiplier · value + offset`` and rate = ``multiplier · rate`` (rad, rad/s; m, m/s), with the value by its source:

* SPIN: the mean spin angle ``phi`` (rad) and rate ``omega`` (rad/s) of its wheels (positive rolls forward);
* STEER: the mean steering angle of its wheels: the wheel's yaw minus its mounting yaw (rad, positive turns left).
  A wheel its dynamics class steers (Ackermann's front wheels) has its yaw set outright to the steering angle, so
  its mounting yaw counts as 0; any other wheel keeps the yaw it was built with, which is its mounting yaw. The rate
  is 0: steering is commanded as an angle that the wheels take at once;
* STEER_CENTRE: the equivalent bicycle steering angle of its wheels' steering angles (δ with cot δ = the mean of
  their cotangents; 0 when they point straight on average), rate 0;
* MIMIC: the followed joint's position and rate (times multiplier, plus offset for the position);
* PASSIVE: position ``offset``, rate 0.

The reader is made once per vehicle (index arrays precomputed); each call costs a few float operations per joint.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from mvsim_core.objects.vehicles.description import JointSource, JointState, RobotDescription
from mvsim_core.objects.vehicles.generated_urdf import steered_wheels

if TYPE_CHECKING:
    from mvsim_core.objects.vehicles.base import Vehicle


class JointReader:
    """The joint state of one vehicle's description, read from its wheel arrays (``veh.phi``, ``veh.omega``) and
    wheel yaws at each call."""

    def __init__(self, veh: Vehicle, description: RobotDescription) -> None:
        movable = description.movable_joints
        self.names: tuple[str, ...] = tuple(j.name for j in movable)
        steered = set(steered_wheels(veh))
        self._mount = tuple(0.0 if i in steered else float(w.yaw) for i, w in enumerate(veh.wheels))
        index = {name: k for k, name in enumerate(self.names)}
        self._plan: list[tuple[JointSource, tuple[int, ...], float, float]] = []
        self._mimics: list[tuple[int, int, float, float]] = []  # (joint, followed joint, multiplier, offset)
        for k, j in enumerate(movable):
            wheels = tuple(i for i in j.wheels if 0 <= i < len(veh.wheels))
            source = j.source
            if source is JointSource.MIMIC:
                followed = index.get(j.mimic)
                if followed is not None:
                    self._mimics.append((k, followed, j.multiplier, j.offset))
                source = JointSource.PASSIVE
            elif source in (JointSource.SPIN, JointSource.STEER, JointSource.STEER_CENTRE) and not wheels:
                source = JointSource.PASSIVE
            self._plan.append((source, wheels, j.multiplier, j.offset))
        self._mimics = _dependency_order(self._mimics)
        self._n_wheels = len(veh.wheels)

    def read(self, veh: Vehicle) -> JointState:
        """The joint state now (units in the module docstring); before the world starts (no wheel arrays yet)
        every wheel's spin counts as 0."""
        phi: Any = veh.phi  # (wheels,) float64 array, or zeros before the world starts
        omega: Any = veh.omega
        wheels, mount = veh.wheels, self._mount
        if len(phi) < self._n_wheels:
            phi = omega = (0.0,) * self._n_wheels
        pos: list[float] = []
        vel: list[float] = []
        for source, idx, mult, off in self._plan:
            if source is JointSource.SPIN:
                if len(idx) == 1:
                    i = idx[0]
                    p, v = float(phi[i]), float(omega[i])
                else:
                    p = sum(float(phi[i]) for i in idx) / len(idx)
                    v = sum(float(omega[i]) for i in idx) / len(idx)
                pos.append(mult * p + off)
                vel.append(mult * v)
            elif source is JointSource.STEER:
                if len(idx) == 1:
                    p = wheels[idx[0]].yaw - mount[idx[0]]
                else:
                    p = sum(wheels[i].yaw - mount[i] for i in idx) / len(idx)
                pos.append(mult * p + off)
                vel.append(0.0)
            elif source is JointSource.STEER_CENTRE:
                pos.append(mult * centre_angle([wheels[i].yaw - mount[i] for i in idx]) + off)
                vel.append(0.0)
            else:
                pos.append(off)
                vel.append(0.0)
        for k, followed, mult, off in self._mimics:
            pos[k] = mult * pos[followed] + off
            vel[k] = mult * vel[followed]
        return JointState(self.names, tuple(pos), tuple(vel))


def centre_angle(angles: list[float]) -> float:
    """The equivalent bicycle steering angle (rad) of wheel steering angles (rad): δ with cot δ the mean of their
    cotangents (for an Ackermann pair, the angle of a virtual wheel midway between them); 0 when a wheel points
    straight on or the cotangents cancel."""
    if not angles:
        return 0.0
    tans = [math.tan(a) for a in angles]
    if any(t == 0.0 for t in tans):
        return 0.0
    mean_cot = sum(1.0 / t for t in tans) / len(tans)
    return math.atan(1.0 / mean_cot) if mean_cot != 0.0 else 0.0


def _dependency_order(mimics: list[tuple[int, int, float, float]]) -> list[tuple[int, int, float, float]]:
    """Mimic joints ordered so that one following another mimic joint comes after it (a cycle keeps its order)."""
    pending = list(mimics)
    done: list[tuple[int, int, float, float]] = []
    while pending:
        waiting = {m[0] for m in pending}
        ready = [m for m in pending if m[1] not in waiting]
        if not ready:
            done.extend(pending)
            break
        done.extend(ready)
        pending = [m for m in pending if m not in ready]
    return done
