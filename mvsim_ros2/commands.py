"""Commands into the simulation: each vehicle's ``cmd_vel`` and ``ackermann_cmd`` subscriptions and the watchdog.

* ``cmd_vel`` (geometry_msgs/Twist): (linear.x, linear.y, angular.z) → ``Vehicle.set_twist``.
* ``ackermann_cmd`` (ackermann_msgs/AckermannDriveStamped): (drive.speed, drive.steering_angle) → ``Vehicle.drive``:
  ``front_steer_pid`` takes them as given, the twist controllers of Ackermann vehicles v, ω = v·tan δ / wheelbase.
* A command the vehicle's controller refuses is ignored with one warning per vehicle and topic; the wording follows
  what the controller declares it takes (:class:`~mvsim_core.dynamics.controllers.base.Command`), never its class.
* Watchdog: a vehicle that got no accepted command for ``base_watchdog_timeout`` simulated seconds is stopped once
  (``Vehicle.stop``: twist 0, or speed 0 keeping the steering angle).

Callbacks run in the node's executor between steps and hold the World's ``step_guard`` (the ZMQ server's lock).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from ackermann_msgs.msg import AckermannDriveStamped
from geometry_msgs.msg import Twist

from mvsim_core.dynamics.controllers import Command
from mvsim_core.errors import ControllerError
from mvsim_ros2 import naming
from mvsim_ros2.vehicle_publishers import VehicleLink


class CommandInputs:
    """The command subscriptions of every vehicle, and the vehicles whose commands are active.

    Args:
        node: the rclpy node (subscriptions, logger).
        world: the World (its time and ``step_guard``).

    Attributes:
        commanded: vehicles with an active command (their latest accepted one is not older than the timeout).
    """

    def __init__(self, node: Any, world: Any) -> None:
        self.node = node
        self.world = world
        self.commanded: list[VehicleLink] = []

    def subscribe(self, link: VehicleLink) -> None:
        """``cmd_vel`` and ``ackermann_cmd`` of one vehicle (under its topic prefix)."""
        sub = self.node.create_subscription
        link.subs.append(sub(Twist, f"{link.prefix}cmd_vel", lambda m, lk=link: self.on_cmd_vel(lk, m),
                             naming.qos_command()))
        link.subs.append(sub(AckermannDriveStamped, f"{link.prefix}ackermann_cmd",
                             lambda m, lk=link: self.on_ackermann(lk, m), naming.qos_command()))

    # ------------------------------------------------------------------ callbacks
    def on_cmd_vel(self, link: VehicleLink, msg: Any) -> None:
        veh = link.vehicle
        try:
            with self._guard():
                veh.set_twist(float(msg.linear.x), float(msg.linear.y), float(msg.angular.z))
        except ControllerError:
            ctl = veh.controller
            hint = " (use ackermann_cmd)" if ctl.accepts(Command.DRIVE) else ""
            self._warn_once(link, "cmd_vel", f"its controller '{ctl.xml_class}' does not take cmd_vel (Twist) "
                                             f"commands; ignored{hint}")
            return
        self._arm(link)

    def on_ackermann(self, link: VehicleLink, msg: Any) -> None:
        veh = link.vehicle
        try:
            with self._guard():
                veh.drive(float(msg.drive.speed), float(msg.drive.steering_angle))
        except ControllerError:
            ctl = veh.controller
            why = ("it has no wheelbase (not an Ackermann vehicle)" if ctl.accepts(Command.TWIST)
                   else f"its controller '{ctl.xml_class}' takes neither steering nor twist commands")
            self._warn_once(link, "ackermann", f"cannot take ackermann_cmd: {why}; ignored")
            return
        self._arm(link)

    # ------------------------------------------------------------------ watchdog
    def watchdog(self, t: float, timeout: float) -> None:
        """Stop every vehicle whose latest command is more than ``timeout`` simulated seconds older than ``t``
        (``timeout`` ≤ 0: never)."""
        if timeout <= 0:
            return
        for link in list(self.commanded):
            if link.last_cmd is not None and t - link.last_cmd > timeout:
                link.vehicle.stop()
                link.last_cmd = None
                self.commanded.remove(link)
                self.node.get_logger().info(f"vehicle '{link.vehicle.name}': no command for {timeout:g} s: stopped")

    # ------------------------------------------------------------------ helpers
    def _guard(self) -> Any:
        return self.world.step_guard or nullcontext()

    def _arm(self, link: VehicleLink) -> None:
        if link.last_cmd is None:
            self.commanded.append(link)
        link.last_cmd = self.world.time

    def _warn_once(self, link: VehicleLink, key: str, text: str) -> None:
        if key not in link.warned:
            link.warned.add(key)
            self.node.get_logger().warning(f"vehicle '{link.vehicle.name}': {text}")
