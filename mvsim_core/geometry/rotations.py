"""Rotations and poses: yaw-pitch-roll angles, rotation matrices, quaternions, SE(3) and SE(2) poses.

Conventions (MRPT's ``CPose3D``, used by every part of the simulator):

* angles in radians, positions in metres;
* a 3D pose is ``(x, y, z, yaw, pitch, roll)``: the frame's origin and its rotation
  ``R = Rz(yaw) · Ry(pitch) · Rx(roll)`` in the parent frame; ``R`` maps vectors of the posed frame to the parent
  frame (its columns are the frame's axes), so a point ``p`` of the frame is at ``R · p + (x, y, z)`` in the parent;
* a 2D pose is ``(x, y, yaw)``;
* quaternions are ``(x, y, z, w)`` (ROS order), ``w`` the scalar part.

Nothing here imports numba (loading a world stays numba-free); compiled kernels use the numba versions in
:mod:`mvsim_core.geometry.rotation_kernels`, built from :func:`rotation_terms`, so a kernel and these functions
evaluate the same expressions in the same order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

OPTICAL_WRT_BODY: np.ndarray = np.array([[0.0, 0.0, 1.0],
                                         [-1.0, 0.0, 0.0],
                                         [0.0, -1.0, 0.0]])
"""Rotation of a camera's optical frame (z forward, x right, y down; REP 103) in an x-forward, z-up body or sensor
frame: its columns are the optical x, y, z axes in that frame (MVSim's ``yaw −90°, pitch 0, roll −90°``). The one
definition: the renderer, the RGB-D camera and the ROS optical frames use it."""

Pose6 = tuple[float, float, float, float, float, float]
"""(x, y, z, yaw, pitch, roll): m, rad."""

Pose2 = tuple[float, float, float]
"""(x, y, yaw): m, rad."""

Entries9 = tuple[float, float, float, float, float, float, float, float, float]
"""The nine entries of a 3×3 matrix, row-major: r00, r01, r02, r10, r11, r12, r20, r21, r22."""


# ---------------------------------------------------------------------------------- yaw, pitch, roll -> rotation
def rotation_terms(cy: Any, sy: Any, cp: Any, sp: Any, cr: Any, sr: Any) -> tuple[Any, ...]:
    """Entries of ``R = Rz(yaw) · Ry(pitch) · Rx(roll)``, row-major (9 values), from the cosines and sines of the
    three angles (``cy = cos(yaw)``, ``sy = sin(yaw)``, ``cp``, ``sp`` of pitch, ``cr``, ``sr`` of roll).

    Element-wise: the arguments may be floats, numpy arrays of one shape, or values inside a numba kernel (see
    :mod:`mvsim_core.geometry.rotation_kernels`); every form evaluates these same expressions.
    """
    return (cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,
            sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,
            -sp, cp * sr, cp * cr)


def rotation_entries(yaw: float, pitch: float, roll: float) -> Entries9:
    """The 9 entries, row-major, of ``R = Rz(yaw) · Ry(pitch) · Rx(roll)`` (angles in rad), as floats."""
    return rotation_terms(math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch), math.cos(roll),
                          math.sin(roll))


def rotation(yaw: float, pitch: float, roll: float) -> np.ndarray:
    """``R = Rz(yaw) · Ry(pitch) · Rx(roll)`` (angles in rad): (3, 3) float64, posed-frame vectors → parent frame.

    Sines and cosines come from :mod:`math`; :func:`rotations` is the same matrix from numpy's ``cos``/``sin``.
    """
    return np.array(rotation_entries(yaw, pitch, roll)).reshape(3, 3)


def rotations(yaw: Any, pitch: Any, roll: Any) -> np.ndarray:
    """Batched :func:`rotation`: (n,) yaw, pitch, roll (rad; array-likes, scalars count as n = 1, or one of length
    1 broadcast against the others) → (n, 3, 3) float64.

    Sines and cosines come from ``np.cos``/``np.sin``; where those equal :mod:`math`'s (they do on the supported
    platforms), each matrix is bit-identical to :func:`rotation` of the same angles.
    """
    yaw, pitch, roll = (np.asarray(a, dtype=np.float64).reshape(-1) for a in (yaw, pitch, roll))
    terms = rotation_terms(np.cos(yaw), np.sin(yaw), np.cos(pitch), np.sin(pitch), np.cos(roll), np.sin(roll))
    r = np.empty((max(len(yaw), len(pitch), len(roll)), 3, 3))
    for k, v in enumerate(terms):
        r[:, k // 3, k % 3] = v
    return r


# ---------------------------------------------------------------------------------- rotation -> yaw, pitch, roll
def ypr_from_rotation(r: np.ndarray) -> tuple[float, float, float]:
    """(yaw, pitch, roll) in rad of a rotation matrix ``r`` (3, 3) = Rz(yaw)·Ry(pitch)·Rx(roll).

    yaw = atan2(r10, r00) ∈ [−π, π], pitch = atan2(−r20, hypot(r00, r10)) ∈ [−π/2, π/2],
    roll = atan2(r21, r22) ∈ [−π, π].

    Gimbal lock: when the x axis is exactly vertical (r00 = r10 = r21 = r22 = 0, pitch = ±π/2 exactly) only
    roll − yaw (pitch = +π/2) or roll + yaw (pitch = −π/2) is defined; yaw and roll then come from atan2(±0, ±0)
    (0, or ±π by the signs of the zeros), so the angles do not reproduce ``r`` unless that difference (sum) is 0.
    ``rotation(yaw, ±math.pi / 2, roll)`` is not exactly locked (cos(π/2) in floats is 6.1e-17), and its angles
    come back.
    """
    yaw = math.atan2(r[1, 0], r[0, 0])
    pitch = math.atan2(-r[2, 0], math.hypot(r[0, 0], r[1, 0]))
    roll = math.atan2(r[2, 1], r[2, 2])
    return yaw, pitch, roll


def ypr_from_rotations(r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Batched :func:`ypr_from_rotation`: (n, 3, 3) rotation matrices → (yaw, pitch, roll), each (n,) in rad (numpy's
    ``arctan2``/``hypot``; same formulas and gimbal-lock behaviour)."""
    yaw = np.arctan2(r[:, 1, 0], r[:, 0, 0])
    pitch = np.arctan2(-r[:, 2, 0], np.hypot(r[:, 0, 0], r[:, 1, 0]))
    roll = np.arctan2(r[:, 2, 1], r[:, 2, 2])
    return yaw, pitch, roll


# ---------------------------------------------------------------------------------- quaternions
def quaternion_from_ypr(yaw: float, pitch: float, roll: float) -> tuple[float, float, float, float]:
    """Unit quaternion (x, y, z, w) of ``R = Rz(yaw) · Ry(pitch) · Rx(roll)`` (angles in rad), from the half-angle
    products; ``w`` may be negative (``q`` and ``−q`` are the same rotation)."""
    cy, sy = math.cos(0.5 * yaw), math.sin(0.5 * yaw)
    cp, sp = math.cos(0.5 * pitch), math.sin(0.5 * pitch)
    cr, sr = math.cos(0.5 * roll), math.sin(0.5 * roll)
    return (sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy,
            cr * cp * cy + sr * sp * sy)


def quaternion_from_rotation(r: np.ndarray, normalize: bool = False) -> tuple[float, float, float, float]:
    """Quaternion (x, y, z, w), w ≥ 0, of a rotation matrix ``r`` (3, 3) (Shepperd's method: the branch of the
    largest of trace, r00, r11, r22).

    Args:
        r: rotation matrix (array-like, 3×3).
        normalize: divide the result by its norm (``np.linalg.norm``); without it the quaternion is unit up to
            the rounding of ``r``'s orthonormality.
    """
    m = np.asarray(r, dtype=float)
    tr = m[0, 0] + m[1, 1] + m[2, 2]
    if tr > 0.0:
        s = 2.0 * math.sqrt(tr + 1.0)
        q = ((m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, 0.25 * s)
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = (0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s, (m[2, 1] - m[1, 2]) / s)
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = ((m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s, (m[0, 2] - m[2, 0]) / s)
    else:
        s = 2.0 * math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = ((m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s, (m[1, 0] - m[0, 1]) / s)
    if q[3] < 0.0:
        q = (-q[0], -q[1], -q[2], -q[3])
    if normalize:
        v = np.array(q)
        v /= np.linalg.norm(v)
        q = tuple(v)
    return (float(q[0]), float(q[1]), float(q[2]), float(q[3]))


# ---------------------------------------------------------------------------------- SE(3) poses
def compose_rt(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Pose ``a ⊕ b`` as (R (3, 3), t (3,) in m): ``b`` (x, y, z, yaw, pitch, roll; m, rad) given in the frame of
    ``a``, ``a`` in some parent frame; the result is ``b``'s frame in that parent frame."""
    ra = rotation(a[3], a[4], a[5])
    rb = rotation(b[3], b[4], b[5])
    t = np.array(a[:3], dtype=float) + ra @ np.array(b[:3], dtype=float)
    return ra @ rb, t


def compose(a: Sequence[float], b: Sequence[float]) -> Pose6:
    """Pose ``a ⊕ b`` as (x, y, z, yaw, pitch, roll) (m, rad): :func:`compose_rt` with the rotation turned into
    angles by :func:`ypr_from_rotation`."""
    r, t = compose_rt(a, b)
    yaw, pitch, roll = ypr_from_rotation(r)
    return (float(t[0]), float(t[1]), float(t[2]), yaw, pitch, roll)


def relative(base: Sequence[float], other: Sequence[float]) -> Pose6:
    """Pose of ``other`` in the frame of ``base`` (``base ⊖ other``, so ``compose(base, relative(base, other))``
    is ``other``); both (x, y, z, yaw, pitch, roll) (m, rad) in the same parent frame."""
    rb = rotation(base[3], base[4], base[5])
    t = rb.T @ (np.asarray(other[:3], dtype=float) - np.asarray(base[:3], dtype=float))
    yaw, pitch, roll = ypr_from_rotation(rb.T @ rotation(other[3], other[4], other[5]))
    return (float(t[0]), float(t[1]), float(t[2]), yaw, pitch, roll)


# ---------------------------------------------------------------------------------- SE(2) poses
def compose2d(a: Sequence[float], b: Sequence[float]) -> Pose2:
    """SE(2) composition ``a ⊕ b`` of (x, y, yaw) poses (m, rad): ``b`` given in the frame of ``a``; the yaw of
    the result is wrapped to [−π, π)."""
    c, s = math.cos(a[2]), math.sin(a[2])
    return (a[0] + c * b[0] - s * b[1], a[1] + s * b[0] + c * b[1], _wrap(a[2] + b[2]))


def inverse2d(a: Sequence[float]) -> Pose2:
    """SE(2) inverse ``⊖a`` of an (x, y, yaw) pose (m, rad): the parent frame's pose in the frame of ``a`` (yaw
    −a.yaw, not wrapped)."""
    c, s = math.cos(a[2]), math.sin(a[2])
    return (-c * a[0] - s * a[1], s * a[0] - c * a[1], -a[2])


def _wrap(a: float) -> float:
    """Angle ``a`` (rad) wrapped to [−π, π)."""
    return (a + math.pi) % (2.0 * math.pi) - math.pi
