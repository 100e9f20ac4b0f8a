"""Unit direction vectors of the rays of rotating sensors, without a cosine and sine per ray and step.

A lidar's rays sit at fixed angles θ_i in its own frame; in the world frame a ray points along yaw + θ_i + n_i, with
n_i the ray-direction noise of this scan. The unit vectors (cos θ_i, sin θ_i) are computed once per sensor; each
scan rotates them by the sensor's yaw (one cosine and sine per sensor) and by the noise. The noise is a small angle
(upstream's default is 0.01°), so its rotation uses the Taylor series of cos and sin to the 6th/7th power — below
1e-14 off the exact rotation for |n| ≤ :data:`SERIES_LIMIT` — and the exact functions above it.

Frames and units: angles in radians, counter-clockwise from +x; vectors in the world frame (x, y).
"""

from __future__ import annotations

import math

import numpy as np

from mvsim_core.jit import njit

SERIES_LIMIT = 0.05
"""rad: noise angles up to this size are rotated with the Taylor series (error < 1e-14)."""


@njit(cache=True)
def rotate_directions(base_c: np.ndarray, base_s: np.ndarray, ray_sensor: np.ndarray, yaw_c: np.ndarray,
                      yaw_s: np.ndarray, noise: np.ndarray, dx: np.ndarray, dy: np.ndarray) -> None:
    """World-frame unit vectors of R rays.

    Args:
        base_c, base_s: (R,) cos θ_i, sin θ_i of each ray's angle in its sensor frame.
        ray_sensor: (R,) index of the sensor of each ray into ``yaw_c``/``yaw_s``.
        yaw_c, yaw_s: (S,) cos and sin of each sensor's yaw (world frame).
        noise: (R,) direction noise of each ray (rad), or an empty array for none.
        dx, dy: (R,) out: the unit vectors of yaw + θ_i + n_i.
    """
    noisy = noise.shape[0] > 0
    for i in range(base_c.shape[0]):
        k = ray_sensor[i]
        c = yaw_c[k] * base_c[i] - yaw_s[k] * base_s[i]
        s = yaw_s[k] * base_c[i] + yaw_c[k] * base_s[i]
        if noisy:
            a = noise[i]
            if abs(a) <= SERIES_LIMIT:
                a2 = a * a
                cn = 1.0 - a2 * (0.5 - a2 * (1.0 / 24.0 - a2 * (1.0 / 720.0)))
                sn = a * (1.0 - a2 * (1.0 / 6.0 - a2 * (1.0 / 120.0 - a2 * (1.0 / 5040.0))))
            else:
                cn = math.cos(a)
                sn = math.sin(a)
            c, s = c * cn - s * sn, s * cn + c * sn
        dx[i] = c
        dy[i] = s


@njit(cache=True)
def ray_origins(pos: np.ndarray, ray_sensor: np.ndarray, ox: np.ndarray, oy: np.ndarray, h: np.ndarray) -> None:
    """Where R rays start: the position of each ray's sensor.

    Args:
        pos: (S, 3) sensor positions x, y, z (m, world frame).
        ray_sensor: (R,) index of the sensor of each ray into ``pos``.
        ox, oy, h: (R,) out: each ray's origin x, y and height z (m).
    """
    for i in range(ray_sensor.shape[0]):
        k = ray_sensor[i]
        ox[i] = pos[k, 0]
        oy[i] = pos[k, 1]
        h[i] = pos[k, 2]
