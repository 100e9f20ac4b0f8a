"""A vehicle's robot-description joints as tf transforms: what robot_state_publisher would send, made in the node.

Each joint places its child link in its parent link: the URDF ``<origin>`` (translation, fixed-axis roll-pitch-yaw)
composed with the joint's motion about (revolute, continuous: rotation by the position, rad) or along (prismatic:
translation by the position, m) its axis, given in the joint frame. :class:`JointFrames` keeps one ``TFMessage``
with a ``TransformStamped`` per joint it carries and refills it in place from a
:class:`~mvsim_core.objects.vehicles.description.JointState` (positions by index, precomputed once): the movable
joints, and any fixed joints it is given (constant, restamped). Floating and planar joints have no single position
and are left out. Frame names get the vehicle's frame prefix (shared tf tree).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from geometry_msgs.msg import TransformStamped
from std_msgs.msg import Header
from tf2_msgs.msg import TFMessage

from mvsim_core.geometry.rotations import quaternion_from_ypr
from mvsim_ros2 import conversions as cv

if TYPE_CHECKING:
    from mvsim_core.objects.vehicles.description import Joint, JointState

Quaternion = tuple[float, float, float, float]  # (x, y, z, w)
MOVING_TYPES = frozenset({"revolute", "continuous", "prismatic"})


def origin_quaternion(joint: Joint) -> Quaternion:
    """The rotation (x, y, z, w) of a joint's ``<origin rpy>`` (roll about x, pitch about y, yaw about z; fixed
    axes)."""
    _, _, _, roll, pitch, yaw = joint.origin
    return quaternion_from_ypr(yaw, pitch, roll)


def multiply(a: Quaternion, b: Quaternion) -> Quaternion:
    """The Hamilton product a·b of two (x, y, z, w) quaternions (b's rotation first, then a's)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


def rotate(q: Quaternion, v: tuple[float, float, float]) -> tuple[float, float, float]:
    """Vector ``v`` turned by the unit quaternion ``q``."""
    x, y, z, w = q
    vx, vy, vz = v
    # v + 2w (u × v) + 2 u × (u × v), u = (x, y, z)
    cx, cy, cz = y * vz - z * vy, z * vx - x * vz, x * vy - y * vx
    return (vx + 2.0 * (w * cx + y * cz - z * cy),
            vy + 2.0 * (w * cy + z * cx - x * cz),
            vz + 2.0 * (w * cz + x * cy - y * cx))


def joint_transform(joint: Joint, position: float) -> tuple[tuple[float, float, float], Quaternion]:
    """(translation (m), rotation (x, y, z, w)) of ``joint``'s child link in its parent at ``position`` (rad or m;
    ignored by a fixed joint)."""
    t = (float(joint.origin[0]), float(joint.origin[1]), float(joint.origin[2]))
    q = origin_quaternion(joint)
    if joint.type in ("revolute", "continuous"):
        ax, ay, az = joint.axis
        n = math.sqrt(ax * ax + ay * ay + az * az) or 1.0
        s, c = math.sin(0.5 * position) / n, math.cos(0.5 * position)
        q = multiply(q, (ax * s, ay * s, az * s, c))
    elif joint.type == "prismatic":
        dx, dy, dz = rotate(q, joint.axis)
        t = (t[0] + dx * position, t[1] + dy * position, t[2] + dz * position)
    return t, q


def _transform_msg(parent: str, child: str) -> TransformStamped:
    return TransformStamped(header=Header(frame_id=parent), child_frame_id=child)


def _set(msg: TransformStamped, tq: tuple[tuple[float, float, float], Quaternion]) -> None:
    (x, y, z), (qx, qy, qz, qw) = tq
    tr, r = msg.transform.translation, msg.transform.rotation
    tr.x, tr.y, tr.z = x, y, z
    r.x, r.y, r.z, r.w = qx, qy, qz, qw


class JointFrames:
    """The tf transforms of a vehicle's movable joints (and the given fixed ones), refilled in place each period.

    Args:
        joints: the description's joints (any order; only movable ones of :data:`MOVING_TYPES` are placed by a
            position).
        names: the joint-state names, in the order of the :class:`JointState` the frames will be filled from.
        fixed: fixed joints to send with them (constant transforms).
        prefix: the vehicle's frame prefix.
    """

    def __init__(self, joints: Sequence[Joint], names: Sequence[str], fixed: Sequence[Joint] = (),
                 prefix: str = "") -> None:
        index = {n: k for k, n in enumerate(names)}
        self._moving: list[tuple[int, Joint, TransformStamped]] = []
        transforms: list[TransformStamped] = []
        for j in joints:
            if j.type in MOVING_TYPES and j.name in index:
                m = _transform_msg(prefix + j.parent, prefix + j.child)
                self._moving.append((index[j.name], j, m))
                transforms.append(m)
        for j in fixed:
            m = _transform_msg(prefix + j.parent, prefix + j.child)
            _set(m, joint_transform(j, 0.0))
            transforms.append(m)
        self.msg: Any = TFMessage(transforms=transforms)

    def __bool__(self) -> bool:
        return bool(self.msg.transforms)

    def fill(self, state: JointState, t: float) -> Any:
        """The ``TFMessage`` with every transform at the joint positions of ``state`` (rad, m), stamped ``t``
        (simulated s); refilled in place and returned."""
        positions = state.positions
        for k, j, m in self._moving:
            _set(m, joint_transform(j, positions[k]))
        for m in self.msg.transforms:
            cv.set_stamp(m.header.stamp, t)
        return self.msg
