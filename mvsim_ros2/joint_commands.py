"""Each vehicle's ``joint_commands`` subscription: ros2_control-style joint commands (sensor_msgs/JointState) as
topic_based_ros2_control's ``TopicBasedSystem`` publishes them.

* Topic: node parameter ``joint_commands_topic`` (default ``joint_commands``), under the vehicle's topic prefix like
  ``cmd_vel`` (an absolute name is used as given); QoS as ``cmd_vel`` (reliable, depth 10).
* ``name[]`` with ``velocity[]`` for wheel joints (rad/s) and ``position[]`` for steering joints (rad), read by
  :func:`mvsim_ros2.joint_command_message.read_joint_command` (aligned or packed arrays; empty arrays allowed) →
  ``Vehicle.set_joint_commands`` (:mod:`mvsim_core.objects.vehicles.joint_commands`: the twist or drive command the
  wheel rates and steering imply, through the vehicle's command limits).
* A NaN or infinite value used by the command: ignored, the last good command stays (warned as ``cmd_vel``'s are,
  throttled per topic). A malformed message (array lengths, a joint named twice, an unknown joint) or one the
  controller cannot take: ignored with one warning per vehicle and cause; the node goes on.
* An accepted command arms the watchdog like ``cmd_vel``'s; ``cmd_vel`` / ``ackermann_cmd`` and ``joint_commands``
  take turns by arrival (the newest wins), said once per vehicle (:meth:`CommandInputs.note_input
  <mvsim_ros2.commands.CommandInputs.note_input>`).
"""

from __future__ import annotations

from typing import Any

from sensor_msgs.msg import JointState

from mvsim_core.errors import ArgumentValueError, CommandValueError, ControllerError
from mvsim_core.objects.vehicles.joint_commands import joint_commands_of
from mvsim_ros2 import naming
from mvsim_ros2.commands import CommandInputs
from mvsim_ros2.joint_command_message import MalformedJointCommand, read_joint_command
from mvsim_ros2.vehicle_publishers import VehicleLink


class JointCommandInputs:
    """The ``joint_commands`` subscriptions of every vehicle.

    Args:
        node: the rclpy node (subscriptions).
        commands: the node's other command inputs (watchdog, step guard, warnings, the newest-wins note).
    """

    def __init__(self, node: Any, commands: CommandInputs) -> None:
        self.node = node
        self.commands = commands

    def subscribe(self, link: VehicleLink) -> None:
        """The vehicle's ``joint_commands`` subscription (kept in ``link.subs``)."""
        topic = self.commands.opts.joint_commands_topic
        if not topic.startswith("/"):
            topic = f"{link.prefix}{topic}"
        sub = self.node.create_subscription(JointState, topic, lambda m, lk=link: self.on_joint_commands(lk, m),
                                            naming.qos_command())
        link.subs.append(sub)
        self.commands.joint_topics[id(link)] = str(getattr(sub, "topic_name", topic))

    def on_joint_commands(self, link: VehicleLink, msg: Any) -> None:
        """A JointState of wheel velocities and steering positions."""
        c = self.commands
        topic = c.joint_topics.get(id(link), f"{link.prefix}joint_commands")
        veh = link.vehicle
        try:
            with c.guard():
                jc = joint_commands_of(veh)
                vel, pos = read_joint_command(msg.name, msg.velocity, msg.position, jc.velocity_joints,
                                              jc.position_joints, jc.mimics)
                veh.set_joint_commands(vel, pos)
        except MalformedJointCommand as e:
            c.warn_once(link, f"joint_commands {e}", f"{topic}: {e}; message ignored (said once)")
            return
        except CommandValueError as e:
            c.reject(topic, e.field, e.value)
            return
        except (ControllerError, ArgumentValueError) as e:
            c.warn_once(link, f"joint_commands {type(e).__name__}", f"{topic}: {e}; ignored (said once)")
            return
        c.accepted(link, topic)
