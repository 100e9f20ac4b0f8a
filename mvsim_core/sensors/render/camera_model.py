"""Pinhole cameras for rendering: the optical frame, projection and view matrices (numpy only, no OpenGL).

Frames:

* **optical frame** (what a camera sees along): +z forward along the optical axis, +x to the right in the image, +y
  down in the image. A point (X, Y, Z) in it, Z > 0, lands on pixel ``u = cx + fx·X/Z`` (column, from the left),
  ``v = cy + fy·Y/Z`` (row, from the top); pixel centres sit at integer (u, v), as in OpenCV and ROS
  ``CameraInfo``, so the pixel that holds the point is ``(round(u), round(v))``.
* **MVSim body frames** (vehicles, the depth sensor of an RGB-D camera): +x forward, +y left, +z up. The optical
  frame of a camera looking along +x of such a frame is that frame rotated by :data:`OPTICAL_WRT_BODY`
  (yaw −90°, pitch 0, roll −90° in MVSim's yaw-pitch-roll convention): optical z = body x, optical x = body −y,
  optical y = body −z.

The projection matrix maps optical coordinates straight to OpenGL clip space with the image rows flipped, so that row
0 of the framebuffer (what ``glReadPixels`` returns first) is the *top* row of the image: no flip is needed after
reading. Depth is not taken from the depth buffer: renderers write the optical-frame Z of every fragment to a float
attachment (see :mod:`.renderer`); the depth buffer only orders surfaces.
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from mvsim_core.geometry.rotations import OPTICAL_WRT_BODY  # noqa: F401 - the camera models use it from here

OPTICAL_WRT_BODY_YPR: tuple[float, float, float] = (math.radians(-90.0), 0.0, math.radians(-90.0))
""":data:`OPTICAL_WRT_BODY` as (yaw, pitch, roll) in rad."""


class Intrinsics(Protocol):
    """What a pinhole model provides (``mvsim_core.sensors.camera.PinholeModel`` fits): image size in px and
    focal lengths / principal point in px. Read-only members, so frozen dataclasses and properties fit."""

    @property
    def ncols(self) -> int: ...

    @property
    def nrows(self) -> int: ...

    @property
    def cx(self) -> float: ...

    @property
    def cy(self) -> float: ...

    @property
    def fx(self) -> float: ...

    @property
    def fy(self) -> float: ...


def projection_matrix(k: Intrinsics, near: float, far: float, *, zero_to_one: bool) -> np.ndarray:
    """4×4 matrix from optical coordinates (X, Y, Z, 1) (m) to OpenGL clip space, rows flipped (row 0 = image top).

    x_ndc = (2u + 1)/W − 1 and y_ndc = (2v + 1)/H − 1 for the (u, v) of the pinhole model, i.e. pixel (u, v) is the
    fragment whose window centre is (u + ½, v + ½). The clip w is Z. The depth range is [near, far] (m):

    * ``zero_to_one`` (``glClipControl(GL_LOWER_LEFT, GL_ZERO_TO_ONE)``): *reversed* Z, z_ndc = 1 at ``near`` and 0 at
      ``far`` — with a float depth buffer this keeps nearly constant relative precision at any distance (use
      ``glDepthFunc(GL_GREATER)`` and clear depth to 0);
    * otherwise the classic [−1, 1] mapping (−1 at ``near``; ``GL_LESS``, clear to 1).

    The image-row flip mirrors the window y axis, so triangles wound counter-clockwise seen from outside appear
    clockwise in the window: front faces are ``GL_CW``.
    """
    w, h = float(k.ncols), float(k.nrows)
    n, f = float(near), float(far)
    p = np.zeros((4, 4))
    p[0, 0] = 2.0 * k.fx / w
    p[0, 2] = (2.0 * k.cx + 1.0) / w - 1.0
    p[1, 1] = 2.0 * k.fy / h
    p[1, 2] = (2.0 * k.cy + 1.0) / h - 1.0
    if zero_to_one:
        p[2, 2] = -n / (f - n)
        p[2, 3] = n * f / (f - n)
    else:
        p[2, 2] = (f + n) / (f - n)
        p[2, 3] = -2.0 * n * f / (f - n)
    p[3, 2] = 1.0
    return p


def orthographic_matrix(width: int, height: int, half_height: float, near: float, far: float, *,
                        zero_to_one: bool) -> np.ndarray:
    """4×4 orthographic matrix from optical coordinates (m) to clip space, rows flipped like
    :func:`projection_matrix`: the image is ``2·half_height`` m tall and as wide as ``width``/``height`` says,
    centred on the optical axis (pixel centres at (W − 1)/2, (H − 1)/2); depth [near, far] along the axis, reversed
    with ``zero_to_one`` (1 at ``near``, 0 at ``far``) or the classic [−1, 1]."""
    n, f = float(near), float(far)
    p = np.eye(4)
    p[0, 0] = float(height) / (float(width) * half_height)
    p[1, 1] = 1.0 / half_height
    if zero_to_one:
        p[2, 2] = -1.0 / (f - n)
        p[2, 3] = f / (f - n)
    else:
        p[2, 2] = 2.0 / (f - n)
        p[2, 3] = -(f + n) / (f - n)
    return p


def view_matrix(rot: np.ndarray, pos: np.ndarray, origin: np.ndarray | None = None) -> np.ndarray:
    """4×4 matrix from world coordinates (minus ``origin``) to the optical frame.

    Args:
        rot: 3×3 rotation whose columns are the optical x, y, z axes in the world frame.
        pos: optical centre in the world frame (m).
        origin: world point (m) that scene vertices are stored relative to (None: the world origin).
    """
    r = np.asarray(rot, dtype=np.float64)
    c = np.asarray(pos, dtype=np.float64) - (np.zeros(3) if origin is None else np.asarray(origin, dtype=np.float64))
    v = np.eye(4)
    v[:3, :3] = r.T
    v[:3, 3] = -r.T @ c
    return v


def project(points: np.ndarray, k: Intrinsics) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pixel coordinates (u, v) and depth Z of (N, 3) optical-frame points (m); see the module docstring."""
    p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    z = p[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        u = k.cx + k.fx * p[:, 0] / z
        v = k.cy + k.fy * p[:, 1] / z
    return u, v, z


def world_to_optical(points: np.ndarray, rot: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """(N, 3) world points (m) in the optical frame posed by ``rot`` (columns = optical axes in the world) and
    ``pos`` (optical centre, m)."""
    p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    return (p - np.asarray(pos, dtype=np.float64)) @ np.asarray(rot, dtype=np.float64)
