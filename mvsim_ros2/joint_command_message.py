"""How a ``joint_commands`` message (sensor_msgs/JointState) is read: joint names to wheel velocities (rad/s) and
steering positions (rad) for :meth:`Vehicle.set_joint_commands
<mvsim_core.objects.vehicles.base.Vehicle.set_joint_commands>`.

Two layouts are accepted for each of ``velocity[]`` and ``position[]``:

* **aligned**: as long as ``name[]``; entry i belongs to ``name[i]`` (values of joints commanded the other way — a
  wheel's position, a steering joint's velocity — are not read);
* **packed**: as topic_based_ros2_control's ``TopicBasedSystem`` publishes them, one entry per joint that has that
  command interface, in the order of ``name[]``: ``velocity[]`` for the wheel joints, ``position[]`` for the
  steering joints (and their mimic joints).

An empty array commands nothing of its kind. Anything else (another length, a name twice, a joint that is not
commandable) makes the message malformed: :class:`MalformedJointCommand`, whose text says what is wrong. No ROS
import here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence


class MalformedJointCommand(ValueError):
    """A joint command message that cannot be read (the message says why; one cause, one wording)."""


def read_joint_command(names: Sequence[str], velocity: Sequence[float], position: Sequence[float],
                       velocity_joints: Collection[str], position_joints: Collection[str],
                       mimics: Mapping[str, str]) -> tuple[dict[str, float], dict[str, float]]:
    """(velocities rad/s, positions rad) by joint name from the arrays of a JointState message.

    Args:
        names, velocity, position: the message's ``name``, ``velocity`` and ``position``.
        velocity_joints, position_joints: the vehicle's joints commanded by velocity and by position.
        mimics: mimic joint -> the commandable joint it follows (their values are not read).

    Raises:
        MalformedJointCommand: see the module docstring.
    """
    names = list(names)
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise MalformedJointCommand(f"joint {twice[0]!r} is named twice")
    for n in names:
        if n not in velocity_joints and n not in position_joints and n not in mimics:
            listing = ", ".join([*velocity_joints, *position_joints]) or "none"
            raise MalformedJointCommand(f"unknown joint {n!r} (commandable joints: {listing})")
    return (_read(names, velocity, "velocity", velocity_joints, mimics),
            _read(names, position, "position", position_joints, mimics))


def _read(names: list[str], values: Sequence[float], kind: str, own: Collection[str],
          mimics: Mapping[str, str]) -> dict[str, float]:
    values = list(values)
    if not values:
        return {}
    if len(values) == len(names):
        return {n: float(v) for n, v in zip(names, values, strict=True) if n in own}
    takers = [n for n in names if n in own or mimics.get(n) in own]
    if len(values) == len(takers):
        return {n: float(v) for n, v in zip(takers, values, strict=True) if n in own}
    raise MalformedJointCommand(f"{len(values)} {kind} values for {len(names)} names (expected {len(names)}, one per "
                                f"name, or {len(takers)}, one per {kind}-commanded joint named, or none)")
