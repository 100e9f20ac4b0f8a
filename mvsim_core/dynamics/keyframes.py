"""Keyframe animation (``<animation type="keyframes">``, reference §1.13): where an animated object is at time t.

An object's pose at time t is its initial pose composed with its keyframe track at u = fmod(t, t_last) (a track
may also repeat only its part after some time, or hold its last pose: actors' walks, :func:`_track_time`): the
keyframe pose relative to the initial pose's frame (x, y, z in m, and a rotation), interpolated between the two
keyframes around u, linearly in position and by spherical linear interpolation (slerp) in rotation. Before the first
keyframe's time the object holds the first keyframe; a track whose last time is 0 holds its only pose.

Rotations follow MRPT's yaw, pitch, roll convention: R = Rz(yaw)·Ry(pitch)·Rx(roll). All tracks of a world are
evaluated in one compiled call (:func:`track_poses`), as flat arrays: track k owns keyframes
``start[k]:start[k + 1]`` of ``times`` (s) and ``frames`` (x, y, z, qw, qx, qy, qz).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from mvsim_core.jit import njit


@njit(cache=True)
def _quat(yaw: float, pitch: float, roll: float) -> tuple[float, float, float, float]:
    """(w, x, y, z) of Rz(yaw)·Ry(pitch)·Rx(roll)."""
    cy, sy = math.cos(0.5 * yaw), math.sin(0.5 * yaw)
    cp, sp = math.cos(0.5 * pitch), math.sin(0.5 * pitch)
    cr, sr = math.cos(0.5 * roll), math.sin(0.5 * roll)
    return (cy * cp * cr + sy * sp * sr, cy * cp * sr - sy * sp * cr, cy * sp * cr + sy * cp * sr,
            sy * cp * cr - cy * sp * sr)


@njit(cache=True)
def _ypr(w: float, x: float, y: float, z: float) -> tuple[float, float, float]:
    """(yaw, pitch, roll) of the unit quaternion (w, x, y, z)."""
    yaw = math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    s = 2.0 * (w * y - z * x)
    pitch = math.asin(min(max(s, -1.0), 1.0))
    roll = math.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    return yaw, pitch, roll


@njit(cache=True)
def _rotate(w: float, x: float, y: float, z: float, vx: float, vy: float, vz: float) -> tuple[float, float, float]:
    """The vector v rotated by the unit quaternion (w, x, y, z)."""
    # t = 2·(q_vec × v); v' = v + w·t + q_vec × t
    tx = 2.0 * (y * vz - z * vy)
    ty = 2.0 * (z * vx - x * vz)
    tz = 2.0 * (x * vy - y * vx)
    return (vx + w * tx + (y * tz - z * ty), vy + w * ty + (z * tx - x * tz), vz + w * tz + (x * ty - y * tx))


@njit(cache=True)
def _track_time(t: float, t_last: float, loop_from: float) -> float:
    """Where in its track a track is at time t (s): t until its last keyframe time, then periodic over
    [loop_from, t_last] (fmod(t, t_last) when loop_from = 0), or held at t_last when loop_from >= t_last."""
    if t < t_last:
        return t
    period = t_last - loop_from
    if period <= 0.0:
        return t_last if t_last > 0.0 else 0.0
    d = t - loop_from
    return loop_from + d - period * math.floor(d / period)


@njit(cache=True)
def track_poses(t: float, start: np.ndarray, times: np.ndarray, frames: np.ndarray, base: np.ndarray,
                loop_from: np.ndarray, out: np.ndarray) -> None:
    """World pose (x, y, z, yaw, pitch, roll; m, rad) of every track at time ``t`` (s), into ``out`` (N, 6).

    Args:
        start: (N + 1,) keyframe offsets per track.
        times: (K,) keyframe times (s), increasing within a track.
        frames: (K, 8) keyframe poses relative to the track's base: x, y, z (m), unit quaternion w, x, y, z, yaw
            (rad).
        base: (N, 9) each track's initial pose, as frames, then 1.0 for a planar track (base and keyframes turn
            about z only: their yaws are interpolated instead of their quaternions, the same rotation for less).
        loop_from: (N,) where each track's periodic part starts (s; 0 for animations, see :func:`_track_time`).
    """
    for k in range(start.shape[0] - 1):
        a, b = start[k], start[k + 1]
        u = _track_time(t, times[b - 1], loop_from[k])
        j = a
        while j + 1 < b and times[j + 1] <= u:
            j += 1
        if base[k, 8] != 0.0:  # planar track: turns about z only, so slerp is the shorter-arc yaw interpolation
            f0 = frames[j]
            px, py, pz, yaw = f0[0], f0[1], f0[2], f0[7]
            if j + 1 < b and u > times[j]:
                s = (u - times[j]) / (times[j + 1] - times[j])
                f1 = frames[j + 1]
                px += s * (f1[0] - px)
                py += s * (f1[1] - py)
                pz += s * (f1[2] - pz)
                yaw += s * ((f1[7] - yaw + math.pi) % (2.0 * math.pi) - math.pi)
            c, sn = math.cos(base[k, 7]), math.sin(base[k, 7])
            out[k, 0] = base[k, 0] + c * px - sn * py
            out[k, 1] = base[k, 1] + sn * px + c * py
            out[k, 2] = base[k, 2] + pz
            out[k, 3] = math.pi - (math.pi - (base[k, 7] + yaw)) % (2.0 * math.pi)  # in (-pi, pi]
            out[k, 4] = 0.0
            out[k, 5] = 0.0
            continue
        if j + 1 < b and u > times[j]:
            s = (u - times[j]) / (times[j + 1] - times[j])
            f0, f1 = frames[j], frames[j + 1]
            px = f0[0] + s * (f1[0] - f0[0])
            py = f0[1] + s * (f1[1] - f0[1])
            pz = f0[2] + s * (f1[2] - f0[2])
            # slerp along the shorter arc
            w1, x1, y1, z1 = f1[3], f1[4], f1[5], f1[6]
            d = f0[3] * w1 + f0[4] * x1 + f0[5] * y1 + f0[6] * z1
            if d < 0.0:
                w1, x1, y1, z1, d = -w1, -x1, -y1, -z1, -d
            if d > 0.9995:
                c0, c1 = 1.0 - s, s
            else:
                th = math.acos(min(d, 1.0))
                c0 = math.sin((1.0 - s) * th) / math.sin(th)
                c1 = math.sin(s * th) / math.sin(th)
            qw = c0 * f0[3] + c1 * w1
            qx = c0 * f0[4] + c1 * x1
            qy = c0 * f0[5] + c1 * y1
            qz = c0 * f0[6] + c1 * z1
            n = math.sqrt(qw * qw + qx * qx + qy * qy + qz * qz)
            qw, qx, qy, qz = qw / n, qx / n, qy / n, qz / n
        else:
            f = frames[j]
            px, py, pz, qw, qx, qy, qz = f[0], f[1], f[2], f[3], f[4], f[5], f[6]
        bw, bx, by, bz = base[k, 3], base[k, 4], base[k, 5], base[k, 6]
        rx, ry, rz = _rotate(bw, bx, by, bz, px, py, pz)
        out[k, 0] = base[k, 0] + rx
        out[k, 1] = base[k, 1] + ry
        out[k, 2] = base[k, 2] + rz
        # composed rotation: base · keyframe
        cw = bw * qw - bx * qx - by * qy - bz * qz
        cx = bw * qx + bx * qw + by * qz - bz * qy
        cy = bw * qy - bx * qz + by * qw + bz * qx
        cz = bw * qz + bx * qy - by * qx + bz * qw
        out[k, 3], out[k, 4], out[k, 5] = _ypr(cw, cx, cy, cz)


@njit(cache=True)
def track_advance(t0: float, t1: float, start: np.ndarray, times: np.ndarray, frames: np.ndarray, base: np.ndarray,
                  loop_from: np.ndarray, period: np.ndarray, out: np.ndarray, jump: np.ndarray) -> None:
    """:func:`track_poses` at ``t1`` and, into ``jump``, whether each track wraps within (t0, t1] (the rule of
    :meth:`KeyframeTracks.wraps`)."""
    track_poses(t1, start, times, frames, base, loop_from, out)
    for k in range(period.shape[0]):
        p = period[k]
        if p <= 0.0:
            jump[k] = False
            continue
        lo = loop_from[k]
        n0 = math.floor((t0 - lo) / p + 1e-12)
        n1 = math.floor((t1 - lo) / p + 1e-12)
        jump[k] = (t1 - lo > p - 1e-12) and n1 > n0


def _frame(pose: Sequence[float]) -> list[float]:
    x, y, z, yaw, pitch, roll = (float(v) for v in pose)
    return [x, y, z, *_quat(yaw, pitch, roll), yaw]


def _planar(pose: Sequence[float]) -> bool:
    return float(pose[4]) == 0.0 and float(pose[5]) == 0.0


class KeyframeTracks:
    """The keyframe tracks of some objects, evaluated together.

    Args:
        tracks: per object, its initial pose (x, y, z, yaw, pitch, roll) and its keyframes as (t, pose) pairs (the
            :class:`mvsim_core.xml.simulable.Keyframe` list); every list has at least one keyframe.
        loop_from: per track, where its periodic part starts (s): 0 (the default) repeats the whole track, as
            animations do; a time at or after the last keyframe holds the last pose for ever.

    Attributes:
        period: (N,) each track's period (s): its last keyframe time minus ``loop_from`` (0: it never repeats).
        last_poses, last_jump: the arrays :meth:`poses` and :meth:`advance` write into (reused by every call).
    """

    SNAPSHOT: ClassVar[tuple[str, ...]] = ("_out", "_jump")
    """The arrays that change while running (``last_poses`` and ``last_jump``; a world snapshot saves them)."""

    def __init__(self, tracks: Sequence[tuple[Sequence[float], Sequence]],
                 loop_from: Sequence[float] | None = None) -> None:
        counts = [len(kf) for _, kf in tracks]
        self.start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.times = np.array([f.t for _, kf in tracks for f in kf], dtype=np.float64)
        self.frames = np.array([_frame(f.pose) for _, kf in tracks for f in kf], dtype=np.float64).reshape(-1, 8)
        self.base = np.array([[*_frame(p), float(_planar(p) and all(_planar(f.pose) for f in kf))]
                              for p, kf in tracks], dtype=np.float64).reshape(-1, 9)
        last = self.times[self.start[1:] - 1] if len(tracks) else np.zeros(0)
        self.loop_from = np.zeros(len(tracks)) if loop_from is None else np.array(loop_from, dtype=np.float64)
        self.period = np.maximum(last - self.loop_from, 0.0)
        self._out = np.zeros((len(tracks), 6))
        self._jump = np.zeros(len(tracks), dtype=np.bool_)
        self.last_poses, self.last_jump = self._out, self._jump  # what poses / advance wrote last

    def __len__(self) -> int:
        return len(self.base)

    def poses(self, t: float) -> np.ndarray:
        """(N, 6) world poses at time ``t`` (s): x, y, z (m), yaw, pitch, roll (rad). The array is reused by the
        next call."""
        track_poses(float(t), self.start, self.times, self.frames, self.base, self.loop_from, self._out)
        return self._out

    def advance(self, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray]:
        """(N, 6) poses at ``t1`` (as :meth:`poses`) and (N,) whether each track starts its period again within
        (t0, t1] (as :meth:`wraps`), in one compiled call; both arrays are reused by the next call."""
        track_advance(float(t0), float(t1), self.start, self.times, self.frames, self.base, self.loop_from,
                      self.period, self._out, self._jump)
        return self._out, self._jump

    def wraps(self, t0: float, t1: float) -> np.ndarray:
        """(N,) whether a track starts its period again within (t0, t1] (s): its pose jumps there."""
        p = self.period
        safe = np.where(p > 0, p, 1.0)
        lo = self.loop_from
        n0 = np.floor((t0 - lo) / safe + 1e-12)
        n1 = np.floor((t1 - lo) / safe + 1e-12)
        return (p > 0) & (t1 - lo > safe - 1e-12) & (n1 > n0)
