"""What the viewer draws over the scene, as plain arrays: sensor points, camera frusta and wheel forces (numpy only).

Everything is in the world frame (m), ready for :class:`~mvsim_core.gui.gl_draw.OverlayPainter` once the scene origin
is subtracted: points are (N, 3) float64 with (N, 4) uint8 RGBA colours; line segments are (2M, 3) float64 endpoint
pairs with one colour per endpoint.

Which sensors each overlay draws is decided by the kinds of their outputs (:mod:`mvsim_core.sensors.outputs`), the
drawing by their observations' fields and ``viz_*`` parameters:

* **Sensor points** — the latest observation of every sensor with a scan output (a 2D lidar: valid rays only, at the
  sensor pose of the scan) and every one with a point cloud output (a 3D lidar: its returns), as upstream's viewer
  shows them (``<gui><show_sensor_points>``); a 2D lidar with ``viz_visiblePoints`` draws its own (below) instead.
* **2D lidar rays and points** — as upstream's scan view, for a sensor with a scan output: with ``viz_visibleLines``
  (a 2D lidar's default) a segment from the sensor origin to every valid return of the latest scan; with
  ``viz_visiblePoints`` the returns as points of ``viz_pointSize`` px; both in ``viz_pointsColor`` (drawn opaque).
  (``viz_visiblePlane``, the translucent fan of the scanned area, is not drawn.)
* **Camera frusta** — for every sensor with an image output (a ``camera``) and every one with an RGB-D output (an
  ``rgbd_camera``: its depth camera), the four edges from the optical centre to the image corners at
  :data:`FRUSTUM_DEPTH` m and the rectangle joining them, posed where the camera is now.
* **Wheel forces** — for ``<gui><show_forces>``: at each wheel's contact point, the friction force the ground puts on
  the vehicle (N), drawn as a segment ``force_scale`` m/N long.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core.geometry.rotations import rotations

if TYPE_CHECKING:
    from mvsim_core.dynamics.physics import Physics
    from mvsim_core.sensors.base import Sensor
    from mvsim_core.world import World

LIDAR2D_COLOR = np.array([255, 0, 0, 255], dtype=np.uint8)
"""Colour of 2D lidar returns."""
LIDAR3D_COLOR = np.array([0, 200, 0, 255], dtype=np.uint8)
"""Colour of 3D lidar returns."""
FRUSTUM_COLOR = np.array([255, 255, 0, 255], dtype=np.uint8)
"""Colour of camera frusta."""
FORCE_COLOR = np.array([255, 0, 255, 255], dtype=np.uint8)
"""Colour of wheel-force segments."""
FRUSTUM_DEPTH = 0.5
"""Depth (m, along the optical axis) of the drawn frustum rectangle."""

_EMPTY_POINTS = (np.zeros((0, 3)), np.zeros((0, 4), dtype=np.uint8))


def _to_world(pose: Any, local: np.ndarray) -> np.ndarray:
    """(N, 3) points of a frame posed at ``pose`` (x, y, z, yaw, pitch, roll; m, rad) in the world frame."""
    p = np.asarray(pose, dtype=np.float64)
    r = rotations(p[3:4], p[4:5], p[5:6])[0]
    return local @ r.T + p[:3]


def _kinds(sensor: Sensor) -> set[Any]:
    """The kinds (``OutputKind``) of a sensor's outputs."""
    from mvsim_core.sensors.outputs import outputs_of

    return {o.kind for o in outputs_of(sensor)}


def _is_scan(sensor: Sensor) -> bool:
    """Whether a sensor puts out planar scans (a 2D lidar)."""
    from mvsim_core.sensors.outputs import OutputKind

    return OutputKind.SCAN in _kinds(sensor)


def _viz(sensor: Sensor, name: str) -> bool:
    """A scan sensor's ``viz_*`` switch ``name`` (False for a sensor without that parameter)."""
    params = getattr(sensor, "params", None)
    return params is not None and name in params and bool(params[name])


def drawn_sensors(world: World) -> list[Any]:
    """The sensors whose observations the sensor-point overlays draw (``<gui><show_sensor_points>``): every sensor of
    the vehicles with a scan or point cloud output (their points, or a 2D lidar's own rays and points)."""
    from mvsim_core.sensors.outputs import OutputKind

    drawn = {OutputKind.SCAN, OutputKind.POINT_CLOUD}
    return [s for v in world.vehicles.values() for s in v.sensors.values() if _kinds(s) & drawn]


def sensor_points(world: World) -> tuple[np.ndarray, np.ndarray]:
    """World-frame points (N, 3) and colours (N, 4) of every lidar's latest observation (see the module docstring)."""
    chunks: list[np.ndarray] = []
    colours: list[np.ndarray] = []
    for veh in world.vehicles.values():
        for s in veh.sensors.values():
            obs = getattr(s, "last", None)
            if obs is None or getattr(obs, "sensor_pose", None) is None:
                continue
            if hasattr(obs, "ranges") and hasattr(obs, "valid") and hasattr(obs, "angles"):  # 2D scan
                if _own_points(s):
                    continue
                ok = np.asarray(obs.valid, dtype=bool)
                r = np.asarray(obs.ranges, dtype=np.float64)[ok]
                a = np.asarray(obs.angles, dtype=np.float64)[ok]
                local = np.column_stack([r * np.cos(a), r * np.sin(a), np.zeros(len(r))])
                colour = LIDAR2D_COLOR
            elif hasattr(obs, "points") and hasattr(obs, "ring"):  # 3D sweep
                local = np.asarray(obs.points, dtype=np.float64).reshape(-1, 3)
                colour = LIDAR3D_COLOR
            else:
                continue
            if len(local):
                chunks.append(_to_world(obs.sensor_pose, local))
                colours.append(np.broadcast_to(colour, (len(local), 4)))
    if not chunks:
        return _EMPTY_POINTS
    return np.concatenate(chunks), np.concatenate(colours)


def _own_points(sensor: Sensor) -> bool:
    """A 2D lidar that draws its returns itself (``viz_visiblePoints``)."""
    return _viz(sensor, "viz_visiblePoints")


def _scan_colour(sensor: Sensor) -> np.ndarray:
    """(4,) RGBA of a 2D lidar's rays and points: ``viz_pointsColor``, opaque."""
    return np.array([*list(sensor.params["viz_pointsColor"])[:3], 255], dtype=np.uint8)


def lidar2d_points(world: World) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Per 2D lidar with ``viz_visiblePoints`` on and a latest scan: its valid returns (N, 3) at the sensor pose of the
    scan (world frame, m), their colours (N, 4) and the point size ``viz_pointSize`` (px)."""
    out = []
    for veh in world.vehicles.values():
        for s in veh.sensors.values():
            obs = getattr(s, "last", None)
            if obs is None or not _own_points(s) or not _is_scan(s):
                continue
            ok = np.asarray(obs.valid, dtype=bool)
            r = np.asarray(obs.ranges, dtype=np.float64)[ok]
            a = np.asarray(obs.angles, dtype=np.float64)[ok]
            local = np.column_stack([r * np.cos(a), r * np.sin(a), np.zeros(len(r))])
            out.append((_to_world(obs.sensor_pose, local), np.broadcast_to(_scan_colour(s), (len(r), 4)),
                        float(s.params["viz_pointSize"])))
    return out


def lidar2d_rays(world: World) -> tuple[np.ndarray, np.ndarray]:
    """Segments (2M, 3) and colours (2M, 4) from each 2D lidar (``viz_visibleLines`` on) to its latest valid
    returns, at the sensor pose of the scan (world frame, m)."""
    segs: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    for veh in world.vehicles.values():
        for s in veh.sensors.values():
            obs = getattr(s, "last", None)
            if obs is None or not _viz(s, "viz_visibleLines") or not _is_scan(s):
                continue
            ok = np.asarray(obs.valid, dtype=bool)
            r = np.asarray(obs.ranges, dtype=np.float64)[ok]
            a = np.asarray(obs.angles, dtype=np.float64)[ok]
            if not len(r):
                continue
            local = np.zeros((2 * len(r), 3))
            local[1::2, 0], local[1::2, 1] = r * np.cos(a), r * np.sin(a)
            segs.append(_to_world(obs.sensor_pose, local))
            cols.append(np.broadcast_to(_scan_colour(s), (len(local), 4)))
    if not segs:
        return _EMPTY_POINTS
    return np.concatenate(segs), np.concatenate(cols)


def frustum_segments(rot: np.ndarray, pos: np.ndarray, k: Any, depth: float = FRUSTUM_DEPTH) -> np.ndarray:
    """(16, 3) endpoints of the 8 segments of a pinhole camera's frustum: optical frame ``rot`` (columns x right,
    y down, z forward) at ``pos`` (m), intrinsics ``k`` (px), rectangle at ``depth`` m along the axis."""
    us = (-0.5, k.ncols - 0.5)
    vs = (-0.5, k.nrows - 0.5)
    corners_opt = np.array([[(u - k.cx) / k.fx * depth, (v - k.cy) / k.fy * depth, depth]
                            for u, v in ((us[0], vs[0]), (us[1], vs[0]), (us[1], vs[1]), (us[0], vs[1]))])
    corners = corners_opt @ np.asarray(rot, dtype=np.float64).T + np.asarray(pos, dtype=np.float64)
    c = np.asarray(pos, dtype=np.float64)
    segs = []
    for i in range(4):
        segs += [c, corners[i], corners[i], corners[(i + 1) % 4]]
    return np.array(segs)


def camera_frusta(world: World) -> tuple[np.ndarray, np.ndarray]:
    """Segments (2M, 3) and colours (2M, 4) of the frusta of every sensor with an image output (a camera: its image)
    or an RGB-D output (an RGB-D camera: its depth camera, in its optical frame), posed now."""
    from mvsim_core.sensors.outputs import OutputKind
    from mvsim_core.sensors.rgbd_camera import OPTICAL_WRT_SENSOR

    cams: list[Any] = []  # cameras of either kind, read by their outputs' needs (intrinsics, depth_intrinsics)
    rgbd: list[bool] = []
    for v in world.vehicles.values():
        for s in v.sensors.values():
            kinds = _kinds(s)
            if OutputKind.IMAGE in kinds or OutputKind.RGBD in kinds:
                cams.append(s)
                rgbd.append(OutputKind.RGBD in kinds)
    if not cams:
        return _EMPTY_POINTS
    rot, pos = world.sensor_poses(cams)
    segs = []
    for i, s in enumerate(cams):
        if rgbd[i]:
            segs.append(frustum_segments(rot[i] @ OPTICAL_WRT_SENSOR, pos[i], s.depth_intrinsics))
        else:
            segs.append(frustum_segments(rot[i], pos[i], s.intrinsics))
    out = np.concatenate(segs)
    return out, np.broadcast_to(FRUSTUM_COLOR, (len(out), 4))


def wheel_forces(physics: Physics, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Segments (2M, 3) and colours of the last friction force at every wheel: from the wheel's contact point
    (its x, y in the vehicle frame at ground level) along the force, ``scale`` m per N."""
    w = physics.wheels
    if w.n == 0:
        return _EMPTY_POINTS
    k = w.vehicle
    st = physics.state
    r = rotations(st[k, 2], physics.pitch[k], physics.roll[k])
    base = np.column_stack([st[k, 0], st[k, 1], physics.z[k]])
    start = base + np.einsum("nij,nj->ni", r, np.column_stack([w.x, w.y, np.zeros(w.n)]))
    force = np.einsum("nij,nj->ni", r, np.column_stack([w.fx, w.fy, np.zeros(w.n)]))
    segs = np.empty((2 * w.n, 3))
    segs[0::2] = start
    segs[1::2] = start + scale * force
    return segs, np.broadcast_to(FORCE_COLOR, (len(segs), 4))
