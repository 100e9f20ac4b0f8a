"""A vehicle's robot description: its URDF text, its link tree and what moves each joint.

Every vehicle has one (:meth:`Vehicle.robot_description
<mvsim_core.objects.vehicles.base.Vehicle.robot_description>`): a vehicle built from a user's URDF
(``<vehicle:class urdf="...">``, ``mvsim import-urdf``) keeps that URDF's text, names and tree; any other vehicle gets
one generated from its chassis, wheels and sensors. Adapters publish it (ROS ``robot_description``) and its joints'
state (``joint_states``, :meth:`Vehicle.joint_state <mvsim_core.objects.vehicles.base.Vehicle.joint_state>`).

Frames: the root link of the tree is the vehicle's own frame (the child of ``odom``); its origin is ``height`` metres
above the ground under the vehicle's reference point (0 for a generated description, whose root is ``base_link`` on
the ground). Each :class:`Joint`'s ``origin`` is the URDF ``<origin>`` of its child link in its parent link (m, rad,
URDF's fixed-axis roll-pitch-yaw); its ``axis`` is a unit vector in the joint frame.

Joint positions are in rad (continuous, revolute) or m (prismatic); a joint's position is
``multiplier · value(source) + offset``, where the source value is (:class:`JointSource`) a wheel's spin angle
(positive rolls the vehicle forward), a wheel's steering angle, the vehicle's equivalent (bicycle) steering angle, or
another joint's position (a URDF ``<mimic>``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class JointSource(enum.Enum):
    """What moves a joint of the description."""

    FIXED = "fixed"  # nothing: a fixed joint (sensor mounts, casters, the chassis' own parts)
    SPIN = "spin"  # the mean spin angle (rad) / spin rate (rad/s) of ``wheels``: a wheel's rolling joint
    STEER = "steer"  # the mean steering angle (rad, yaw minus mounting yaw) of ``wheels``: a steered wheel's joint
    STEER_CENTRE = "steer_centre"  # the equivalent centre (bicycle) steering angle (rad) of ``wheels``' steering
    MIMIC = "mimic"  # ``multiplier`` · the position of joint ``mimic`` + ``offset`` (URDF ``<mimic>``)
    PASSIVE = "passive"  # a movable joint the simulator does not move: position and rate 0


@dataclass(frozen=True)
class Joint:
    """One joint of a robot description (URDF names and geometry) and what moves it.

    Attributes:
        name: the joint's name (URDF ``<joint name>``).
        type: URDF joint type: ``continuous``, ``revolute``, ``prismatic``, ``fixed``, ``floating`` or ``planar``.
        parent, child: link names.
        origin: (x, y, z, roll, pitch, yaw) of the child link's frame in the parent link (m, rad), as URDF's
            ``<origin xyz rpy>``.
        axis: unit rotation (or translation) axis in the joint frame.
        source: what moves it (:class:`JointSource`).
        wheels: the vehicle's wheel indices (into ``vehicle.wheels``) the source reads (SPIN, STEER, STEER_CENTRE).
        multiplier, offset: position = multiplier · source value + offset (rad or m). The multiplier also maps the
            simulator's conventions to the joint's axis (−1 when the axis points to the vehicle's right).
        mimic: the followed joint's name (MIMIC).
        lower, upper: position limits (rad or m; ±inf when unlimited).
        velocity_limit: |rate| limit (rad/s or m/s; inf when none).
    """

    name: str
    type: str
    parent: str
    child: str
    origin: tuple[float, float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    axis: tuple[float, float, float] = (1.0, 0.0, 0.0)
    source: JointSource = JointSource.FIXED
    wheels: tuple[int, ...] = ()
    multiplier: float = 1.0
    offset: float = 0.0
    mimic: str = ""
    lower: float = -float("inf")
    upper: float = float("inf")
    velocity_limit: float = float("inf")

    @property
    def movable(self) -> bool:
        """Whether the joint has a position (every type but ``fixed``)."""
        return self.type != "fixed"


@dataclass(frozen=True)
class RobotDescription:
    """A vehicle's robot description.

    Attributes:
        urdf: the URDF text (what ``robot_description`` carries): the user's own (after xacro) when the vehicle came
            from one, else generated (:func:`mvsim_core.objects.vehicles.generated_urdf.generated_description`).
        root: the root link: the vehicle's frame (the child of ``odom`` on tf).
        height: height (m) of the root link's origin above the ground under the vehicle's reference point.
        joints: every joint of the tree, parents before children.
        links: every link name.
        source: the user's URDF (or xacro) file it came from; "" when generated.
    """

    urdf: str
    root: str
    height: float
    joints: tuple[Joint, ...]
    links: tuple[str, ...]
    source: str = ""

    @property
    def movable_joints(self) -> tuple[Joint, ...]:
        """The joints with a position (what ``joint_states`` lists), in tree order."""
        return tuple(j for j in self.joints if j.movable)

    def joint(self, name: str) -> Joint:
        """The joint called ``name``.

        Raises:
            KeyError: no such joint (the message lists the joints).
        """
        for j in self.joints:
            if j.name == name:
                return j
        raise KeyError(f"no joint {name!r}; joints: {', '.join(j.name for j in self.joints) or 'none'}")


@dataclass(frozen=True)
class JointState:
    """The state of a vehicle's movable joints at one instant (what ``sensor_msgs/JointState`` carries).

    Attributes:
        names: joint names, in the description's tree order.
        positions: rad or m, per joint.
        velocities: rad/s or m/s, per joint.
    """

    names: tuple[str, ...]
    positions: tuple[float, ...]
    velocities: tuple[float, ...]
