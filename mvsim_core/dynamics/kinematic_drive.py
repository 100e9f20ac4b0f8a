"""Driving the kinematic bodies of keyframed blocks and walking actors along their tracks: one compiled call per step
(:func:`drive_tracks`), used by :meth:`Physics.animate <mvsim_core.dynamics.physics.Physics.animate>`.

Every step each track's pose at the step's end is computed (:func:`~.keyframes.track_advance`). A body near a
dynamic body (vehicles, pushed blocks: within :data:`NEAR_MARGIN` beyond both bounding circles, at its track's pose
or where its body was left) is given the velocity that takes it there over the step, written into Box2D's memory
(through the accessors of :mod:`.box2d_raw`), so that it pushes what it meets. A body far from every dynamic body
sleeps: Box2D then spends nothing on it (an awake kinematic body is an island of its own in every step: about 0.3 µs
each on the dev machine), and sensors read the tracks' poses, not the bodies. Python only handles the bodies that
change state (woken, put to sleep, or jumping to the start of their period): the kernel lists them.

Measured on the dev machine (bench_physics (v): 25 robots, 20 actors, 20 keyframed blocks): the whole stage costs
a few µs per step, against ~60 µs when every body was driven through numpy and the Box2D API.

Frames and units: world frame, metres, radians, seconds.
"""

from __future__ import annotations

import math

import numpy as np

from mvsim_core.dynamics.box2d_raw import (
    body_angle,
    body_local_center,
    body_position,
    body_rotation,
    is_awake,
    set_com_velocity,
)
from mvsim_core.dynamics.keyframes import track_advance
from mvsim_core.jit import njit

NEAR_MARGIN = 0.5
"""m: a kinematic body is simulated by Box2D only while it is this close to a dynamic body (beyond both bounding
circles); farther away it sleeps. Nothing moves half a metre in one step below 100 m/s at 5 ms."""

KEEP, WAKE, SLEEP, JUMP = 0, 1, 2, 3
"""What :func:`drive_tracks` asks of the caller for each body (``change``)."""


@njit(cache=True)
def _near(x: float, y: float, r: float, dyn: np.ndarray, dyn_r: np.ndarray, margin: float, box: np.ndarray) -> bool:
    """Whether the circle (x, y, r + margin) meets a dynamic body's; ``box``: their bounding box (x0, y0, x1, y1,
    largest radius), which rules most far circles out at once."""
    reach = r + box[4] + margin
    if x < box[0] - reach or x > box[2] + reach or y < box[1] - reach or y > box[3] + reach:
        return False
    for j in range(dyn.shape[0]):
        dx, dy = x - dyn[j, 0], y - dyn[j, 1]
        d = r + dyn_r[j] + margin
        if dx * dx + dy * dy <= d * d:
            return True
    return False


@njit(cache=True)
def drive_tracks(t0: float, t1: float, start: np.ndarray, times: np.ndarray, frames: np.ndarray, base: np.ndarray,
                 loop_from: np.ndarray, period: np.ndarray, out: np.ndarray, jump: np.ndarray,
                 f32: np.ndarray, i32: np.ndarray, body: np.ndarray, flag_idx: np.ndarray, radius: np.ndarray,
                 dyn_idx: np.ndarray, dyn_r: np.ndarray, dyn: np.ndarray, awake: np.ndarray, stale: np.ndarray,
                 change: np.ndarray) -> int:
    """One step of every track, from ``t0`` to ``t1`` (s).

    Args:
        start .. period: the arrays of :class:`~.keyframes.KeyframeTracks`.
        out, jump: (N, 6) poses at ``t1`` and (N,) period wraps in (t0, t1], written.
        f32, i32: the address-space views of :func:`~.box2d_raw.memory`.
        body: (B,) float32 index of each kinematic body's struct (tracks 0..B-1 have bodies); flag_idx: (B,) int32
            index of its flags word. radius: (B,) bounding radius of each (m).
        dyn_idx: (D, 2) float32 indices of the dynamic bodies' origins; dyn_r: (D,) their radii (m); dyn: (D, 2)
            scratch for their positions.
        awake: (B,) which bodies Box2D simulates now (as this module left them; read only).
        stale: (B, 2) where each sleeping body was left (m).
        change: (B,) written: :data:`KEEP`, :data:`WAKE` (put it at its pose at ``t0`` and wake it; give it the
            velocity to ``out``), :data:`SLEEP` (stop it and let it sleep) or :data:`JUMP` (put it at ``out``).

    Returns:
        The number of bodies whose ``change`` is not KEEP.
    """
    track_advance(t0, t1, start, times, frames, base, loop_from, period, out, jump)
    box = np.empty(5)
    box[0] = box[1] = np.inf
    box[2] = box[3] = -np.inf
    box[4] = 0.0
    for j in range(dyn_idx.shape[0]):
        x, y = float(f32[dyn_idx[j, 0]]), float(f32[dyn_idx[j, 1]])
        dyn[j, 0], dyn[j, 1] = x, y
        box[0], box[1] = min(box[0], x), min(box[1], y)
        box[2], box[3] = max(box[2], x), max(box[3], y)
        box[4] = max(box[4], dyn_r[j])
    dt = t1 - t0
    todo = 0
    for i in range(body.shape[0]):
        near = _near(out[i, 0], out[i, 1], radius[i], dyn, dyn_r, NEAR_MARGIN, box)
        if not near and not awake[i]:
            near = _near(stale[i, 0], stale[i, 1], radius[i], dyn, dyn_r, NEAR_MARGIN, box)
        if not near:
            change[i] = SLEEP if awake[i] else KEEP
            todo += change[i] != KEEP
            continue
        if not awake[i] or not is_awake(i32, flag_idx[i]):
            change[i] = WAKE
            todo += 1
            continue
        b = body[i]
        if jump[i]:
            change[i] = JUMP
            todo += 1
            set_com_velocity(f32, b, 0.0, 0.0, 0.0)
            continue
        change[i] = KEEP
        x, y = body_position(f32, b)
        a = body_angle(f32, b)
        s, c = body_rotation(f32, b)
        lx, ly = body_local_center(f32, b)
        vx = (out[i, 0] - x) / dt
        vy = (out[i, 1] - y) / dt
        w = ((out[i, 3] - a + math.pi) % (2.0 * math.pi) - math.pi) / dt
        dx = c * lx - s * ly  # origin -> COM, world frame
        dy = s * lx + c * ly
        set_com_velocity(f32, b, vx - w * dy, vy + w * dx, w)
    return todo
