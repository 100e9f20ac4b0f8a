"""``<controller class="twist_ideal">``: the commanded twist is imposed after every step (kinematic, no torques).

Wheel torques are 0; after each physics step the vehicle's velocity is set to the setpoint. During the step the
wheels' friction and the slope force act on the chassis as for any controller, and the wheels spin by the friction
law (``friction_in_step``). That is what the C++ MVSim 1.2.0 engine does, although its vehicle code carries a flag
meant to skip those forces for ideal controllers (reference §2.1 says they are skipped; the recorded trajectories
``jackal_ideal_B`` and ``jackal_ellipse_B`` of ``cpp-1.2.0`` show they are not). We match the engine, not the intent:
users compare with MVSim.

Why a skid-steer vehicle then turns slower than commanded: a four-wheel differential vehicle (the Jackal) turning
on the spot drags its wheels sideways, since they sit ahead of and behind the axis of rotation. Their lateral
friction (up to μ·m·g per wheel) opposes the rotation, so Box2D advances the yaw by less than ω·dt in each step;
post-step puts ω back to the command, and the vehicle reports w_local = ω while its pose turns at about 0.36 rad/s
for 0.5 commanded (Jackal, default friction). A two-wheel robot, whose wheels lie on the axis, follows the exact arc.

Differential vehicles take (vx, ω) as is. Ackermann vehicles (new in upstream 1.2.0) also steer:
δ = atan(ω·L/vx) when |vx| > 1e-3, else sign(ω)·min(|ω·L|, max_steer), clamped to ±max_steer (L = wheelbase).
Not available for ``ackermann_drivetrain``.

It reads no parameter and starts at rest. As upstream, the PID tags (``KP``, ``KI``, ``KD``, ``max_torque``, ...) and
``V``/``W`` are accepted and ignored, so that a vehicle file can switch between ``twist_pid`` and ``twist_ideal``
without edits (``jackal.vehicle.xml`` does exactly that).
"""

from __future__ import annotations

import math
from typing import ClassVar

from mvsim_core.dynamics.controllers.base import Command, Family, TwistController
from mvsim_core.dynamics.controllers.pid import LEGACY_IGNORED, pid_params
from mvsim_core.dynamics.controllers.setpoints import STEER_ANG, TWIST_SETPOINT_PARAMS
from mvsim_core.xml.params import table_names

_IGNORED = (table_names(pid_params(kp=0.0, max_torque=1.0, thresholds=True), TWIST_SETPOINT_PARAMS, (STEER_ANG,))
            | LEGACY_IGNORED)


class TwistIdealController(TwistController):
    """Common base of the ``twist_ideal`` controllers (not registered itself)."""

    xml_class: ClassVar[str] = "twist_ideal"
    IGNORED_TAGS: ClassVar[frozenset[str]] = _IGNORED
    friction_in_step: ClassVar[bool] = True  # the C++ engine's behaviour (module docstring)

    def ideal_twist(self) -> tuple[float, float, float]:
        """The body-frame twist imposed after each physics step (vy = 0: these vehicles are non-holonomic)."""
        sp = self.setpoint
        return (sp.vx, 0.0, sp.omega)


class DifferentialTwistIdeal(TwistIdealController):
    """``twist_ideal`` for differential vehicles."""

    families: ClassVar[tuple[Family, ...]] = (Family.DIFFERENTIAL,)

    def control(self, veh, dt: float) -> None:
        """No torques: the twist is imposed after the physics step (:meth:`ideal_twist`)."""
        veh.dynamics.set_lr_torques(veh, 0.0, 0.0)


class AckermannTwistIdeal(TwistIdealController):
    """``twist_ideal`` for Ackermann vehicles (steering derived from the twist); takes drive commands too."""

    families: ClassVar[tuple[Family, ...]] = (Family.ACKERMANN,)
    commands: ClassVar[tuple[Command, ...]] = (Command.TWIST, Command.DRIVE)

    def control(self, veh, dt: float) -> None:
        """No torques; steer the front wheels to match the twist (module docstring)."""
        dyn = veh.dynamics
        sp = self.setpoint
        if abs(sp.vx) > 1e-3:
            steer = math.atan(sp.omega * dyn.wheelbase / sp.vx)
        else:
            steer = math.copysign(min(abs(sp.omega * dyn.wheelbase), dyn.max_steer), sp.omega)
        steer = max(-dyn.max_steer, min(dyn.max_steer, steer))
        dyn.set_drive(veh, 0.0, 0.0, 0.0, 0.0)
        dyn.steer(veh, steer)

