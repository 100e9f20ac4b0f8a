"""Keyboard teleoperation, as in upstream MVSim's window (reference §3.5): what each key does to the selected vehicle.

No OpenGL or glfw here: the viewer turns key presses into characters and calls :meth:`Teleop.key`; tests call it
directly.

Keys:

* ``1`` … ``9``: select vehicle 1 … 9 (file order).
* Twist controllers (``twist_pid``, ``twist_ideal``, ``twist_front_steer_pid``): ``w``/``s`` change the linear
  setpoint by ±0.1 m/s; ``a``/``d`` the angular one by ±2 °/s (±1 °/s for ``twist_front_steer_pid``); space stops.
* ``front_steer_pid``: ``w``/``s`` speed ±0.1 m/s, ``a``/``d`` steering ±1° (clamped to the vehicle's maximum),
  space sets the speed to 0.
* ``raw``: differential — ``w``/``s`` change both wheel torques by ∓0.05 N·m (negative torque drives forward),
  ``a``/``d`` turn left/right (left +, right − and the reverse), space zeroes them; Ackermann — ``w``/``s`` change
  both front torques (or the drivetrain torque) by ∓1 N·m, ``a``/``d`` steer ±1° (clamped), space zeroes the torques.
* ``L``: start/stop the selected vehicle's CSV loggers; ``C``: clear their files; ``N``: new logging session.

Keys are case-insensitive. Units: m/s, rad/s (setpoints are stored in rad), N·m, rad.
"""

from __future__ import annotations

import math
from typing import Any

TWIST_STEP = 0.1  # m/s per w/s press
OMEGA_STEP = math.radians(2.0)  # rad/s per a/d press (twist controllers)
OMEGA_STEP_ACKERMANN = math.radians(1.0)  # rad/s per a/d press (twist_front_steer_pid)
STEER_STEP = math.radians(1.0)  # rad per a/d press (steering controllers)
RAW_DIFF_TORQUE_STEP = 0.05  # N·m per press (raw differential)
RAW_ACKERMANN_TORQUE_STEP = 1.0  # N·m per press (raw Ackermann, raw drivetrain)


class Teleop:
    """Selected vehicle and key handling for a world.

    Attributes:
        world: the :class:`~mvsim_core.world.World`. selected: index of the selected vehicle (file order), 0 at
            start. last_message: what the last key did, for the status overlay.
    """

    def __init__(self, world: Any) -> None:
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
                self.last_message = f"selected {self.vehicle.name}"
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
    def _logging(self, veh: Any, c: str) -> bool:
        log = veh.logger
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
    def _drive(self, veh: Any, c: str) -> bool:
        from mvsim_core.dynamics.controllers.base import TwistController
        from mvsim_core.dynamics.controllers.front_steer_pid import FrontSteerPid
        from mvsim_core.dynamics.controllers.raw import AckermannDrivetrainRaw, AckermannRaw, DifferentialRaw

        ctrl = veh.controller
        if isinstance(ctrl, TwistController):
            sp = ctrl.setpoint
            w_step = OMEGA_STEP_ACKERMANN if ctrl.xml_class == "twist_front_steer_pid" else OMEGA_STEP
            vx, omega = sp.vx, sp.omega
            if c == " ":
                vx, omega = 0.0, 0.0
            else:
                vx += {"w": TWIST_STEP, "s": -TWIST_STEP}.get(c, 0.0)
                omega += {"a": w_step, "d": -w_step}.get(c, 0.0)
            ctrl.set_twist(vx, 0.0 if c == " " else sp.vy, omega)
            self.last_message = f"{veh.name}: v={vx:.2f} m/s, w={math.degrees(omega):.1f} deg/s"
            return True
        max_steer = float(getattr(veh.dynamics, "max_steer", math.inf))
        if isinstance(ctrl, FrontSteerPid):
            speed, steer = ctrl.speed, ctrl.steer_angle
            if c == " ":
                speed = 0.0
            speed += {"w": TWIST_STEP, "s": -TWIST_STEP}.get(c, 0.0)
            steer = _clamp(steer + {"a": STEER_STEP, "d": -STEER_STEP}.get(c, 0.0), max_steer)
            ctrl.set_command(speed, steer)
            self.last_message = f"{veh.name}: v={speed:.2f} m/s, steer={math.degrees(steer):.1f} deg"
            return True
        if isinstance(ctrl, DifferentialRaw):
            d = RAW_DIFF_TORQUE_STEP
            if c == " ":
                ctrl.torque_l = ctrl.torque_r = 0.0
            else:
                dl, dr = {"w": (-d, -d), "s": (d, d), "a": (d, -d), "d": (-d, d)}[c]
                ctrl.torque_l += dl
                ctrl.torque_r += dr
            self.last_message = f"{veh.name}: torque l={ctrl.torque_l:.2f} r={ctrl.torque_r:.2f} N·m"
            return True
        if isinstance(ctrl, (AckermannRaw, AckermannDrivetrainRaw)):
            d = RAW_ACKERMANN_TORQUE_STEP
            dt = {"w": -d, "s": d}.get(c, 0.0)
            if isinstance(ctrl, AckermannRaw):
                if c == " ":
                    ctrl.torque_fl = ctrl.torque_fr = 0.0
                ctrl.torque_fl += dt
                ctrl.torque_fr += dt
                torque = ctrl.torque_fl
            else:
                if c == " ":
                    ctrl.torque = 0.0
                ctrl.torque += dt
                torque = ctrl.torque
            ctrl.steer_angle = _clamp(ctrl.steer_angle + {"a": STEER_STEP, "d": -STEER_STEP}.get(c, 0.0), max_steer)
            self.last_message = (f"{veh.name}: torque={torque:.2f} N·m, "
                                 f"steer={math.degrees(ctrl.steer_angle):.1f} deg")
            return True
        return False

    def help_lines(self) -> list[str]:
        """Key help for the selected vehicle's controller (status overlay)."""
        veh = self.vehicle
        if veh is None:
            return []
        ctrl_class = getattr(veh.controller, "xml_class", "?")
        what = "torques" if ctrl_class == "raw" else "speed"
        return [f"[{veh.name}: {ctrl_class}] 1-9 select, w/s {what}, a/d turn, space stop, L/C/N logs"]


def _clamp(value: float, limit: float) -> float:
    return max(-limit, min(limit, value))
