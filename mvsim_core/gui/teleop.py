"""Keyboard teleoperation, as in upstream MVSim's window (reference §3.5): what each key does to the selected vehicle.

No OpenGL or glfw here: the viewer turns key presses into characters and calls :meth:`Teleop.key`; tests call it
directly.

Keys:

* ``1`` … ``9``: select vehicle 1 … 9 (file order).
* ``w``/``s``/``a``/``d``/space change the controller's *native* command (the first of its ``commands``, see
  :class:`~mvsim_core.dynamics.controllers.base.Command`) by the controller's class steps; one handler per command
  kind (:data:`KEY_HANDLERS`), none per controller class:

  - twist (``twist_pid``, ``twist_ideal``, ``twist_front_steer_pid``): ``w``/``s`` change the linear setpoint by
    ±``SPEED_STEP`` (0.1 m/s); ``a``/``d`` the angular one by ±``OMEGA_STEP`` (2 °/s; 1 °/s for
    ``twist_front_steer_pid``); space stops.
  - drive (``front_steer_pid``): ``w``/``s`` speed ±0.1 m/s, ``a``/``d`` steering ±``STEER_STEP`` (1°, clamped to the
    vehicle's maximum), space sets the speed to 0.
  - torques (``raw``): without steering (differential) — ``w``/``s`` change both wheel torques by ∓``TORQUE_STEP``
    (0.05 N·m; negative torque drives forward), ``a``/``d`` turn left/right (left +, right − and the reverse), space
    zeroes them; with steering (Ackermann) — ``w``/``s`` change every torque by ∓1 N·m, ``a``/``d`` steer ±1°
    (clamped), space zeroes the torques.
  - a controller that takes no commands ignores these keys.
* ``L``: start/stop the selected vehicle's CSV loggers; ``C``: clear their files; ``N``: new logging session.

Keys are case-insensitive. Units: m/s, rad/s (setpoints are stored in rad), N·m, rad.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mvsim_core.dynamics.controllers import (
    AckermannRaw,
    AckermannTwistFrontSteerPid,
    Command,
    Controller,
    DifferentialRaw,
)

if TYPE_CHECKING:
    from mvsim_core.objects.vehicles.base import Vehicle
    from mvsim_core.world import World

# the default steps, as the controller classes declare them (each class may override its own)
TWIST_STEP = Controller.SPEED_STEP  # m/s per w/s press
OMEGA_STEP = Controller.OMEGA_STEP  # rad/s per a/d press (twist controllers)
OMEGA_STEP_ACKERMANN = AckermannTwistFrontSteerPid.OMEGA_STEP  # rad/s per a/d press (twist_front_steer_pid)
STEER_STEP = Controller.STEER_STEP  # rad per a/d press (steering controllers)
RAW_DIFF_TORQUE_STEP = DifferentialRaw.TORQUE_STEP  # N·m per press (raw differential)
RAW_ACKERMANN_TORQUE_STEP = AckermannRaw.TORQUE_STEP  # N·m per press (raw Ackermann, raw drivetrain)


class Teleop:
    """Selected vehicle and key handling for a world.

    Attributes:
        world: the :class:`~mvsim_core.world.World`. selected: index of the selected vehicle (file order), 0 at
            start. last_message: what the last key did, for the status overlay.
    """

    def __init__(self, world: World) -> None:
        self.world = world
        self.selected = 0
        self.last_message = ""

    @property
    def vehicle(self) -> Any | None:
        """The selected vehicle, or None in a world without vehicles."""
        vehicles = list(self.world.vehicles.values())
        return vehicles[self.selected] if 0 <= self.selected < len(vehicles) else None

    def key(self, char: str) -> bool:
        """Handle one key press (a character; case-insensitive). Returns True when the key did something."""
        if len(char) != 1:
            return False
        c = char.lower()
        if c in "123456789":
            k = int(c) - 1
            if k < len(self.world.vehicles):
                self.selected = k
                self.last_message = f"selected {list(self.world.vehicles)[k]}"
                return True
            return False
        veh = self.vehicle
        if veh is None:
            return False
        if c in "lcn":
            return self._logging(veh, c)
        if c in "wsad ":
            return self._drive(veh, c)
        return False

    # ------------------------------------------------------------------ loggers
    def _logging(self, veh: Vehicle, c: str) -> bool:
        log = veh.logger
        assert log is not None  # made when the world starts (World.start), before any key reaches a vehicle
        if c == "l":
            if log.recording:
                log.stop()
                self.last_message = f"{veh.name}: logging stopped"
            else:
                log.start()
                self.last_message = f"{veh.name}: logging to {log.dir}"
        elif c == "c":
            log.clear()
            self.last_message = f"{veh.name}: log files cleared"
        else:
            log.new_session()
            self.last_message = f"{veh.name}: new logging session"
        return True

    # ------------------------------------------------------------------ controllers
    def _drive(self, veh: Vehicle, c: str) -> bool:
        ctrl = veh.controller
        native = _native(ctrl)
        handler = KEY_HANDLERS.get(native) if native is not None else None
        if handler is None:
            return False
        self.last_message = handler(veh, ctrl, c)
        return True

    def help_lines(self) -> list[str]:
        """Key help for the selected vehicle's controller (status overlay)."""
        veh = self.vehicle
        if veh is None:
            return []
        ctrl = veh.controller
        ctrl_class = getattr(ctrl, "xml_class", "?")
        native = _native(ctrl)
        if native is None:
            return [f"[{veh.name}: {ctrl_class}] 1-9 select, L/C/N logs"]
        what = "torques" if native is Command.TORQUES else "speed"
        return [f"[{veh.name}: {ctrl_class}] 1-9 select, w/s {what}, a/d turn, space stop, L/C/N logs"]


def _native(ctrl: Any) -> Command | None:
    """The command the keys change: the first the controller accepts, or None."""
    commands = getattr(ctrl, "commands", ())
    return commands[0] if commands else None


def _max_steer(veh: Vehicle) -> float:
    return float(getattr(veh.dynamics, "max_steer", math.inf))


def _twist_keys(veh: Vehicle, ctrl: Any, c: str) -> str:
    """w/s: vx ± SPEED_STEP; a/d: ω ± OMEGA_STEP; space: (0, 0, 0)."""
    sp = ctrl.setpoint
    vx, omega = sp.vx, sp.omega
    if c == " ":
        vx, omega = 0.0, 0.0
    else:
        vx += {"w": ctrl.SPEED_STEP, "s": -ctrl.SPEED_STEP}.get(c, 0.0)
        omega += {"a": ctrl.OMEGA_STEP, "d": -ctrl.OMEGA_STEP}.get(c, 0.0)
    ctrl.set_twist(vx, 0.0 if c == " " else sp.vy, omega)
    return f"{veh.name}: v={vx:.2f} m/s, w={math.degrees(omega):.1f} deg/s"


def _drive_keys(veh: Vehicle, ctrl: Any, c: str) -> str:
    """w/s: speed ± SPEED_STEP; a/d: steering ± STEER_STEP (clamped); space: speed 0."""
    speed, steer = ctrl.speed, ctrl.steer_angle
    if c == " ":
        speed = 0.0
    speed += {"w": ctrl.SPEED_STEP, "s": -ctrl.SPEED_STEP}.get(c, 0.0)
    steer = _clamp(steer + {"a": ctrl.STEER_STEP, "d": -ctrl.STEER_STEP}.get(c, 0.0), _max_steer(veh))
    ctrl.drive(speed, steer)
    return f"{veh.name}: v={speed:.2f} m/s, steer={math.degrees(steer):.1f} deg"


def _torque_keys(veh: Vehicle, ctrl: Any, c: str) -> str:
    """Torques ∓ TORQUE_STEP (w/s); a/d: steering ± STEER_STEP (clamped) or, without steering, left/right torques
    apart (a: left +, right −); space: torques 0."""
    d = ctrl.TORQUE_STEP
    torques = [0.0 if c == " " else t for t in ctrl.torques]
    if ctrl.steering:
        dt = {"w": -d, "s": d}.get(c, 0.0)
        torques = [t + dt for t in torques]
        steer = _clamp(ctrl.steer_angle + {"a": ctrl.STEER_STEP, "d": -ctrl.STEER_STEP}.get(c, 0.0),
                       _max_steer(veh))
        ctrl.set_torques(torques, steer)
        return f"{veh.name}: torque={torques[0]:.2f} N·m, steer={math.degrees(steer):.1f} deg"
    if c != " ":
        dl, dr = {"w": (-d, -d), "s": (d, d), "a": (d, -d), "d": (-d, d)}[c]
        torques[0] += dl
        torques[1] += dr
    ctrl.set_torques(torques)
    return f"{veh.name}: torque l={torques[0]:.2f} r={torques[1]:.2f} N·m"


KEY_HANDLERS: dict[Command, Callable[[Any, Any, str], str]] = {
    Command.TWIST: _twist_keys,
    Command.DRIVE: _drive_keys,
    Command.TORQUES: _torque_keys,
}
"""Native command kind → what w/s/a/d/space do to it (returns the status message)."""


def _clamp(value: float, limit: float) -> float:
    return max(-limit, min(limit, value))
