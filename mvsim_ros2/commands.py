"""Commands into the simulation: each vehicle's ``cmd_vel`` and ``ackermann_cmd`` subscriptions and the watchdog.

* ``cmd_vel`` (geometry_msgs/Twist or TwistStamped, parameter ``cmd_vel_type``): (linear.x, linear.y, angular.z)
  → ``Vehicle.set_twist``. ``auto`` (default) subscribes as Twist and follows the type of the topic's publishers:
  one DDS participant cannot subscribe to one topic with two types (rmw_fastrtps refuses the second subscription:
  "create_subscription() called for existing topic name rt/cmd_vel with incompatible type"), and rmw_fastrtps
  raises no incompatible-type event, so the graph is looked at every :data:`POLL_PERIOD` wall seconds: a new
  publisher of the other type (Nav2 on Kilted publishes TwistStamped, teleop_twist_keyboard Twist), or publishers
  of the other type only, switch the subscription to that type (said in the log). ``twist`` / ``twist_stamped``
  subscribe with that type only, as ros_gz_bridge does.
* ``ackermann_cmd`` (ackermann_msgs/AckermannDriveStamped): (drive.speed, drive.steering_angle) → ``Vehicle.drive``:
  ``front_steer_pid`` takes them as given, the twist controllers of Ackermann vehicles v, ω = v·tan δ / wheelbase.
* ``joint_commands`` (sensor_msgs/JointState): its own subscription, :mod:`mvsim_ros2.joint_commands`, sharing
  the watchdog, the NaN rule and the warnings of these.
* Several inputs of one vehicle: the newest accepted command wins; the first time a vehicle's commands come from
  ``joint_commands`` and from another topic, the node warns once, naming both.
* Values: a message with a NaN or infinite number in any field of its twist (or of ``drive``) is ignored — the last
  good command stays in force — with a warning naming the topic and the field, at most one per topic every
  :data:`WARN_PERIOD` wall seconds (counting the ones in between). Finite values beyond the vehicle's command limits
  (:mod:`mvsim_core.dynamics.command_limits`; parameters ``max_linear_speed`` and ``max_angular_speed`` override
  them, 0 = the vehicle's own) are clamped, said once per vehicle and field.
* A command the vehicle's controller refuses is ignored with one warning per vehicle and topic; the wording follows
  what the controller declares it takes (:class:`~mvsim_core.dynamics.controllers.base.Command`), never its class.
* Watchdog: a vehicle that got no accepted command for ``base_watchdog_timeout`` simulated seconds is stopped once
  (``Vehicle.stop``: twist 0, or speed 0 keeping the steering angle).

Callbacks run in the node's executor between steps and hold the World's ``step_guard`` (the ZMQ server's lock).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ackermann_msgs.msg import AckermannDriveStamped
from geometry_msgs.msg import Twist, TwistStamped
from rclpy._rclpy_pybind11 import RCLError
from rclpy.clock import Clock, ClockType

from mvsim_core.dynamics.controllers import Command
from mvsim_core.errors import CommandValueError, ControllerError
from mvsim_ros2 import naming
from mvsim_ros2.params import Options
from mvsim_ros2.vehicle_publishers import VehicleLink

if TYPE_CHECKING:
    from mvsim_core.objects.vehicles.base import Vehicle
    from mvsim_core.world import World

POLL_PERIOD = 0.25
"""Wall seconds between two looks at the publishers of each ``cmd_vel`` (``cmd_vel_type`` auto)."""
WARN_PERIOD = 5.0
"""Wall seconds between two warnings about ignored (non-finite) messages on one topic."""

TWIST_FIELDS = ("linear.x", "linear.y", "linear.z", "angular.x", "angular.y", "angular.z")
DRIVE_FIELDS = ("speed", "steering_angle", "steering_angle_velocity", "acceleration", "jerk")
CMD_VEL_TYPES: dict[str, Any] = {"twist": Twist, "twist_stamped": TwistStamped}
"""``cmd_vel_type`` values other than ``auto`` → message class."""
ROS_TYPE_NAMES: dict[str, Any] = {"geometry_msgs/msg/Twist": Twist, "geometry_msgs/msg/TwistStamped": TwistStamped}


@dataclass
class CmdVelInput:
    """The ``cmd_vel`` subscription of one vehicle and, in auto mode, what its publishers were at the last look.

    Attributes:
        msg_type: Twist or TwistStamped, the type subscribed now (or about to be).
        sub: the subscription; None while a switch waits for the old one to go.
        seen: publishers per message class at the last look.
    """

    link: VehicleLink
    topic: str
    msg_type: Any
    sub: Any = None
    seen: dict[Any, int] = field(default_factory=dict)
    both: bool = False  # publishers of both types at the last switch


class CommandInputs:
    """The command subscriptions of every vehicle, and the vehicles whose commands are active.

    Args:
        node: the rclpy node (subscriptions, timer, graph queries, logger).
        world: the World (its time and ``step_guard``).
        opts: the node's options (``cmd_vel_type``, ``max_linear_speed``, ``max_angular_speed``); defaults if None.

    Attributes:
        commanded: vehicles with an active command (their latest accepted one is not older than the timeout).
        cmd_vel: the ``cmd_vel`` input of every vehicle, in subscription order.
    """

    def __init__(self, node: Any, world: World, opts: Options | None = None) -> None:
        self.node = node
        self.world = world
        self.opts = opts if opts is not None else Options()
        self.commanded: list[VehicleLink] = []
        self.cmd_vel: list[CmdVelInput] = []
        self._timer: Any = None
        self._rejected: dict[str, tuple[float, int]] = {}  # topic -> (wall time of the last warning, ignored since)
        self._topics: dict[int, str] = {}  # id(link) -> resolved cmd_vel topic (/bot1/cmd_vel)
        self._ackermann_topics: dict[int, str] = {}  # id(link) -> resolved ackermann_cmd topic
        self.joint_topics: dict[int, str] = {}  # id(link) -> resolved joint_commands topic (mvsim_ros2.joint_commands)
        self._last_input: dict[int, str] = {}  # id(link) -> topic of its latest accepted command

    def subscribe(self, link: VehicleLink) -> None:
        """``cmd_vel`` and ``ackermann_cmd`` of one vehicle (under its topic prefix), and its command limits."""
        self._apply_limits(link.vehicle)
        kind = self.opts.cmd_vel_type
        cv = CmdVelInput(link, f"{link.prefix}cmd_vel", CMD_VEL_TYPES.get(kind, Twist))
        self._subscribe_cmd_vel(cv)
        self.cmd_vel.append(cv)
        topic = f"{link.prefix}ackermann_cmd"
        sub = self.node.create_subscription(AckermannDriveStamped, topic, lambda m, lk=link: self.on_ackermann(lk, m),
                                            naming.qos_command())
        link.subs.append(sub)
        self._ackermann_topics[id(link)] = str(getattr(sub, "topic_name", topic))
        if kind == "auto" and self._timer is None:
            self._timer = self.node.create_timer(POLL_PERIOD, self.poll_cmd_vel_types, clock=_steady_clock())

    def _apply_limits(self, veh: Vehicle) -> None:
        o = self.opts
        changes = {}
        if o.max_linear_speed > 0:
            changes["max_speed"] = o.max_linear_speed
        if o.max_angular_speed > 0:
            changes["max_omega"] = o.max_angular_speed
        if changes:
            veh.command_limits = veh.command_limits.replace(**changes)

    # ------------------------------------------------------------------ cmd_vel type
    def _subscribe_cmd_vel(self, cv: CmdVelInput) -> bool:
        """Subscribe ``cv.topic`` as ``cv.msg_type``; False when the participant still holds the topic with the
        other type (a subscription destroyed inside a callback of the EventsExecutor goes only after it)."""
        link = cv.link
        if cv.msg_type is TwistStamped:
            def callback(m: Any, lk: VehicleLink = link) -> None:
                self.on_cmd_vel(lk, m.twist, "twist.")
        else:
            def callback(m: Any, lk: VehicleLink = link) -> None:
                self.on_cmd_vel(lk, m)
        try:
            cv.sub = self.node.create_subscription(cv.msg_type, cv.topic, callback, naming.qos_command())
        except RCLError:
            cv.sub = None
            return False
        link.subs.append(cv.sub)
        self._topics[id(link)] = str(getattr(cv.sub, "topic_name", cv.topic))
        return True

    def poll_cmd_vel_types(self) -> None:
        """Auto mode: switch each ``cmd_vel`` subscription to the type of its publishers — to the other type when a
        publisher of it appeared since the last look, or when only the other type is published."""
        for cv in self.cmd_vel:
            if cv.sub is None:  # a switch waiting for the old subscription to go
                if self._subscribe_cmd_vel(cv):
                    self._said_switched(cv)
                continue
            counts = {Twist: 0, TwistStamped: 0}
            for info in self.node.get_publishers_info_by_topic(self._topics[id(cv.link)]):
                t = ROS_TYPE_NAMES.get(info.topic_type)
                if t is not None:
                    counts[t] += 1
            other = TwistStamped if cv.msg_type is Twist else Twist
            new_other = counts[other] > cv.seen.get(other, 0)
            cv.seen = counts
            if counts[other] and (new_other or not counts[cv.msg_type]):
                self._switch(cv, other, both=counts[cv.msg_type] > 0)

    def _switch(self, cv: CmdVelInput, msg_type: Any, both: bool) -> None:
        old = cv.sub
        cv.link.subs.remove(old)
        self.node.destroy_subscription(old)
        cv.msg_type = msg_type
        cv.both = both
        if self._subscribe_cmd_vel(cv):  # else at the next look
            self._said_switched(cv)

    def _said_switched(self, cv: CmdVelInput) -> None:
        name = f"geometry_msgs/msg/{cv.msg_type.__name__}"
        why = (f"a {name} publisher appeared; the publishers of the other type are not heard now" if cv.both
               else f"its publishers send {name}")
        self.node.get_logger().info(f"{self._topics[id(cv.link)]}: subscribed as {name} ({why}; parameter cmd_vel_type "
                                    f"picks one type for good)")

    # ------------------------------------------------------------------ callbacks
    def on_cmd_vel(self, link: VehicleLink, msg: Any, path: str = "") -> None:
        """A Twist (of a Twist or TwistStamped message; ``path``: how its fields are named in the message)."""
        topic = self._topics.get(id(link), f"{link.prefix}cmd_vel")
        values = (msg.linear.x, msg.linear.y, msg.linear.z, msg.angular.x, msg.angular.y, msg.angular.z)
        if self._non_finite(topic, path, TWIST_FIELDS, values):
            return
        veh = link.vehicle
        lim = veh.command_limits
        if not self._command(link, topic, path, veh.set_twist,
                             (float(msg.linear.x), float(msg.linear.y), float(msg.angular.z)),
                             (("linear.x", lim.max_speed, "m/s", "max_linear_speed"),
                              ("linear.y", lim.max_speed, "m/s", "max_linear_speed"),
                              ("angular.z", lim.max_omega, "rad/s", "max_angular_speed"))):
            ctl = veh.controller
            hint = " (use ackermann_cmd)" if ctl.accepts(Command.DRIVE) else ""
            self._warn_once(link, "cmd_vel", f"its controller '{ctl.xml_class}' does not take cmd_vel (Twist) "
                                             f"commands; ignored{hint}")

    def on_ackermann(self, link: VehicleLink, msg: Any) -> None:
        topic = self._ackermann_topics.get(id(link), f"{link.prefix}ackermann_cmd")
        d = msg.drive
        values = (d.speed, d.steering_angle, d.steering_angle_velocity, d.acceleration, d.jerk)
        if self._non_finite(topic, "drive.", DRIVE_FIELDS, values):
            return
        veh = link.vehicle
        lim = veh.command_limits
        if not self._command(link, topic, "drive.", veh.drive, (float(d.speed), float(d.steering_angle)),
                             (("speed", lim.max_speed, "m/s", "max_linear_speed"),
                              ("steering_angle", lim.max_steer, "rad", ""))):
            ctl = veh.controller
            why = ("it has no wheelbase (not an Ackermann vehicle)" if ctl.accepts(Command.TWIST)
                   else f"its controller '{ctl.xml_class}' takes neither steering nor twist commands")
            self._warn_once(link, "ackermann", f"cannot take ackermann_cmd: {why}; ignored")

    def note_input(self, link: VehicleLink, topic: str) -> None:
        """Remember where the vehicle's latest accepted command came from (``topic``); say once per vehicle when
        ``joint_commands`` (:mod:`mvsim_ros2.joint_commands`) and another input take turns (the newest wins)."""
        before = self._last_input.get(id(link))
        self._last_input[id(link)] = topic
        joints = self.joint_topics.get(id(link))
        if before is None or before == topic or joints not in (before, topic):
            return
        other = topic if before == joints else before
        self._warn_once(link, "joint_commands and others",
                        f"commands arrive on both {joints} and {other}; the newest wins (said once)")

    def _command(self, link: VehicleLink, topic: str, path: str, verb: Callable[..., tuple[float, ...]],
                 asked: tuple[float, ...], limits: tuple[tuple[str, float, str, str], ...]) -> bool:
        """Give ``asked`` to a vehicle command ``verb`` under the step guard, say what it clamped (``limits``: per
        value its field name, limit, unit and the node parameter that sets it) and arm the watchdog. False when
        the controller does not take this kind of command (nothing else happens then)."""
        try:
            with self._guard():
                done = verb(*asked)
        except CommandValueError as e:  # the fields were checked for NaN/inf before; kept as the core's last word
            self._reject(topic, e.field, e.value)
            return True
        except ControllerError:
            return False
        self._say_clamped(link, topic, path, asked, done, limits)
        self._arm(link)
        self.note_input(link, topic)
        return True

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

    # ------------------------------------------------------------------ vehicles leaving, resets
    def forget(self, link: VehicleLink) -> None:
        """Drop a vehicle that left the world: its subscriptions (destroyed), its cmd_vel type polling, its active
        command."""
        for sub in link.subs:
            self.node.destroy_subscription(sub)
        link.subs.clear()
        self.cmd_vel[:] = [cv for cv in self.cmd_vel if cv.link is not link]
        self._topics.pop(id(link), None)
        self._ackermann_topics.pop(id(link), None)
        self.joint_topics.pop(id(link), None)
        self._last_input.pop(id(link), None)
        if link in self.commanded:
            self.commanded.remove(link)

    def clear(self) -> None:
        """No command is active any more (after a reset of the world's state); the next one arms the watchdog."""
        self.commanded.clear()

    # ------------------------------------------------------------------ for the other inputs (joint_commands)
    def guard(self) -> Any:
        """The World's step guard (a context manager; a no-op without one)."""
        return self._guard()

    def accepted(self, link: VehicleLink, topic: str) -> None:
        """A command from ``topic`` was accepted: arm the watchdog and note where it came from."""
        self._arm(link)
        self.note_input(link, topic)

    def warn_once(self, link: VehicleLink, key: str, text: str) -> None:
        """Warn ``text`` about the vehicle once for ``key``."""
        self._warn_once(link, key, text)

    def reject(self, topic: str, name: str, value: float) -> None:
        """A non-finite ``value`` of field ``name`` on ``topic`` was ignored (warned about, throttled per topic)."""
        self._reject(topic, name, value)

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

    def _non_finite(self, topic: str, path: str, names: tuple[str, ...], values: tuple[float, ...]) -> bool:
        """Whether a value is NaN or infinite (then warned about, throttled per topic)."""
        for name, v in zip(names, values, strict=True):
            if not math.isfinite(v):
                self._reject(topic, path + name, v)
                return True
        return False

    def _reject(self, topic: str, name: str, value: float) -> None:
        t = time.monotonic()
        last, since = self._rejected.get(topic, (-math.inf, 0))
        if t - last < WARN_PERIOD:
            self._rejected[topic] = (last, since + 1)
            return
        more = f" ({since} more ignored since the last warning)" if since else ""
        self.node.get_logger().warning(f"{topic}: {name} is {value}; command ignored, the last good one stays{more}")
        self._rejected[topic] = (t, 0)

    def _say_clamped(self, link: VehicleLink, topic: str, path: str, asked: tuple[float, ...],
                     done: tuple[float, ...], limits: tuple[tuple[str, float, str, str], ...]) -> None:
        """Warn once per vehicle and field about values clamped to the vehicle's limits."""
        for a, d, (name, limit, unit, param) in zip(asked, done, limits, strict=True):
            key = f"clamp {name}"  # Twist or TwistStamped: the same field
            if a != d and key not in link.warned:
                link.warned.add(key)
                how = f"parameter {param}" if param else "the vehicle's command_limits"
                self.node.get_logger().warning(
                    f"{topic}: {path}{name} = {a:g} {unit} is beyond the limit of vehicle '{link.vehicle.name}', "
                    f"{limit:g} {unit}; clamped ({how}; said once)")


def _steady_clock() -> Clock:
    return Clock(clock_type=ClockType.STEADY_TIME)
