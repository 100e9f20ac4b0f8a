"""The viewer's orbit camera: where it looks from, its OpenGL matrices, and what the mouse does to it.

The camera orbits a target point (``cam_point_to``) at ``cam_distance`` m, seen from azimuth ``cam_azimuth`` (from
+x towards +y) and elevation ``cam_elevation`` above the ground plane, with +z up — MRPT's orbit camera, which the
world's ``<gui>`` options describe (reference §1.5). The vertical field of view is ``fov_deg``; in orthographic mode
the view is ``2 · distance · tan(fov/2)`` m tall, so switching modes keeps the scale at the target.

Frames and units: world frame x, y horizontal, z up, metres; angles in radians; matrices are 4 × 4 float64 numpy
arrays in the usual OpenGL convention (column vectors: clip = P · V · world), handed to GL transposed (row-major
upload with ``transpose=True``). Window pixels: x to the right, y down, origin at the top-left corner.

No OpenGL here: the window code reads :meth:`OrbitCamera.view_matrix` / :meth:`projection_matrix`; tests use
:meth:`project` to find where a world point lands in a screenshot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

MIN_ELEVATION = math.radians(-89.0)
MAX_ELEVATION = math.radians(89.0)
ORBIT_RAD_PER_PX = math.radians(0.3)  # mouse drag: radians per pixel
ZOOM_PER_STEP = 1.1  # scroll wheel: distance factor per step
MIN_DISTANCE = 0.1  # m


@dataclass
class OrbitCamera:
    """Orbit camera state (see the module docstring).

    Attributes:
        target: (x, y, z) point looked at (m, world). distance: eye–target distance (m).
        azimuth, elevation: direction from the target to the eye (rad). fov: vertical field of view (rad).
        ortho: orthographic projection instead of perspective. near, far: clip planes (m).
        follow: name of the vehicle the target follows ("" for none).
    """

    target: tuple[float, float, float] = (0.0, 0.0, 0.0)
    distance: float = 80.0
    azimuth: float = math.radians(45.0)
    elevation: float = math.radians(40.0)
    fov: float = math.radians(60.0)
    ortho: bool = False
    near: float = 0.05
    far: float = 10000.0
    follow: str = ""

    @classmethod
    def from_gui(cls, gui: Any) -> OrbitCamera:
        """The camera a world's ``<gui>`` options describe (``World.gui``)."""
        x, y, z = (tuple(gui["cam_point_to"]) + (0.0,))[:3]
        return cls(target=(float(x), float(y), float(z)), distance=float(gui["cam_distance"]),
                   azimuth=float(gui["cam_azimuth"]), elevation=float(gui["cam_elevation"]),
                   fov=math.radians(float(gui["fov_deg"])), ortho=bool(gui["ortho"]),
                   near=float(gui["clip_plane_min"]), far=float(gui["clip_plane_max"]),
                   follow=str(gui["follow_vehicle"]))

    # ------------------------------------------------------------------ geometry
    def eye(self) -> np.ndarray:
        """Eye position (m, world)."""
        ce = math.cos(self.elevation)
        d = np.array([ce * math.cos(self.azimuth), ce * math.sin(self.azimuth), math.sin(self.elevation)])
        return np.asarray(self.target, dtype=float) + self.distance * d

    def view_matrix(self) -> np.ndarray:
        """World → eye transform (4 × 4): eye at the origin looking down −z, +y up on screen."""
        eye = self.eye()
        f = np.asarray(self.target, dtype=float) - eye
        f /= np.linalg.norm(f)
        up = np.array([0.0, 0.0, 1.0])
        s = np.cross(f, up)
        if np.linalg.norm(s) < 1e-9:  # looking straight down/up: use the azimuth for "up" on screen
            s = np.array([math.sin(self.azimuth), -math.cos(self.azimuth), 0.0])
        s /= np.linalg.norm(s)
        u = np.cross(s, f)
        m = np.eye(4)
        m[0, :3], m[1, :3], m[2, :3] = s, u, -f
        m[:3, 3] = -m[:3, :3] @ eye
        return m

    def projection_matrix(self, width: int, height: int) -> np.ndarray:
        """Eye → clip transform (4 × 4) for a ``width`` × ``height`` px viewport."""
        aspect = width / max(height, 1)
        n, f = self.near, self.far
        if self.ortho:
            top = self.distance * math.tan(0.5 * self.fov)
            right = top * aspect
            m = np.eye(4)
            m[0, 0], m[1, 1] = 1.0 / right, 1.0 / top
            m[2, 2], m[2, 3] = -2.0 / (f - n), -(f + n) / (f - n)
            return m
        t = 1.0 / math.tan(0.5 * self.fov)
        m = np.zeros((4, 4))
        m[0, 0], m[1, 1] = t / aspect, t
        m[2, 2], m[2, 3] = (f + n) / (n - f), 2.0 * f * n / (n - f)
        m[3, 2] = -1.0
        return m

    def optical_frame(self) -> tuple[np.ndarray, np.ndarray]:
        """The camera as the renderers pose cameras: (rot, pos) with rot's columns the optical x (screen right),
        y (screen down) and z (forward) axes in the world, and pos the eye (m)."""
        m = self.view_matrix()
        rot = np.column_stack([m[0, :3], -m[1, :3], -m[2, :3]])
        return rot, self.eye()

    def render_matrices(self, width: int, height: int, origin: Any = None, *,
                        zero_to_one: bool) -> tuple[np.ndarray, np.ndarray]:
        """(view, proj) for :meth:`~mvsim_core.sensors.render.renderer.SceneRenderer.render_matrices`: the same
        picture as :meth:`view_matrix` / :meth:`projection_matrix` (so :meth:`project` finds its pixels), written in
        the renderer's optical frame with image rows flipped, for vertices stored relative to ``origin`` (m)."""
        from mvsim_core.sensors.camera import PinholeModel
        from mvsim_core.sensors.render.camera_model import orthographic_matrix, projection_matrix, view_matrix

        rot, pos = self.optical_frame()
        view = view_matrix(rot, pos, origin)
        if self.ortho:
            half = self.distance * math.tan(0.5 * self.fov)
            return view, orthographic_matrix(width, height, half, self.near, self.far, zero_to_one=zero_to_one)
        f = 0.5 * height / math.tan(0.5 * self.fov)
        k = PinholeModel(int(width), int(height), 0.5 * (width - 1), 0.5 * (height - 1), f, f)
        return view, projection_matrix(k, self.near, self.far, zero_to_one=zero_to_one)

    def project(self, point: Any, width: int, height: int) -> tuple[float, float] | None:
        """Window pixel (x right, y down; pixel centres at +0.5) where a world point (m) is drawn, or None when it
        is behind the camera or outside the clip planes."""
        p = np.append(np.asarray(point, dtype=float)[:3], 1.0)
        clip = self.projection_matrix(width, height) @ (self.view_matrix() @ p)
        if clip[3] <= 0.0:
            return None
        ndc = clip[:3] / clip[3]
        if not -1.0 <= ndc[2] <= 1.0:
            return None
        return (0.5 * (ndc[0] + 1.0) * width, 0.5 * (1.0 - ndc[1]) * height)

    # ------------------------------------------------------------------ mouse
    def orbit(self, dx_px: float, dy_px: float) -> None:
        """Left-drag by (dx, dy) px: turn around the target (drag right → azimuth decreases, as in MRPT)."""
        self.azimuth -= dx_px * ORBIT_RAD_PER_PX
        self.elevation = min(MAX_ELEVATION, max(MIN_ELEVATION, self.elevation + dy_px * ORBIT_RAD_PER_PX))

    def zoom(self, steps: float) -> None:
        """Scroll ``steps`` (positive = towards the target)."""
        self.distance = max(MIN_DISTANCE, self.distance / ZOOM_PER_STEP ** steps)

    def pan(self, dx_px: float, dy_px: float, height: int) -> None:
        """Right-drag by (dx, dy) px in a viewport ``height`` px tall: move the target in the ground plane so the
        scene follows the cursor (a sideways drag moves the point at the target exactly dx px)."""
        m_per_px = 2.0 * self.distance * math.tan(0.5 * self.fov) / max(height, 1)
        ca, sa = math.cos(self.azimuth), math.sin(self.azimuth)
        # on the ground: screen right = (−sin az, cos az); away from the viewer = (−cos az, −sin az)
        x, y, z = self.target
        x += m_per_px * (dx_px * sa - dy_px * ca)
        y += m_per_px * (-dx_px * ca - dy_px * sa)
        self.target = (x, y, z)

    def follow_pose(self, pose: Any) -> None:
        """Centre on a followed vehicle's pose (x, y, z, ...; m)."""
        self.target = (float(pose[0]), float(pose[1]), float(pose[2]))
