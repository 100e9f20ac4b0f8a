"""Overlay geometry: lidar returns, camera frusta and wheel forces in the world frame (numpy only, no OpenGL)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.gui import overlay_geometry as og
from mvsim_core.sensors.render.camera_model import project


def test_2d_scan_points_lie_on_the_face_they_hit(viewer_world_file):
    """r1's 61-ray lidar (−30°..30°, 1° apart) at (0.2, 0, 0.3) sees box1's face x = 2.5 (|y| ≤ 0.5) with the rays
    |a| ≤ atan(0.5 / 2.3) = 12.3°, i.e. 25 rays; nothing else is in its field of view within 10 m."""
    w = mv.load_world(viewer_world_file)
    assert og.sensor_points(w)[0].shape == (0, 3)  # no scan yet
    w.run(0.05)  # the first scan (20 Hz)
    pts, cols = og.sensor_points(w)
    assert pts.shape == (25, 3) and cols.shape == (25, 4)
    assert np.allclose(pts[:, 0], 2.5, atol=1e-4) and np.allclose(pts[:, 2], 0.3, atol=1e-9)
    expected_y = 2.3 * np.tan(np.radians(np.arange(-12, 13)))
    assert np.allclose(np.sort(pts[:, 1]), expected_y, atol=1e-4)
    assert (cols == og.LIDAR2D_COLOR).all()


def test_scan_points_follow_the_sensor_pose_of_the_scan(viewer_world_file):
    w = mv.load_world(viewer_world_file)
    w.set_pose("r1", 1.0, 0.0, 0.0)
    w.run(0.05)
    pts, _ = og.sensor_points(w)
    assert len(pts) == 43  # nearer: |a| ≤ atan(0.5 / 1.3) = 21.0°, rays −21°..21°
    assert np.allclose(pts[:, 0], 2.5, atol=1e-4)


def test_3d_cloud_points_are_placed_by_the_sensor_pose():
    """A stand-in 3D observation: sensor-frame points rotated by its yaw and shifted to its position."""

    class Cloud:
        points = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 1.0]], dtype=np.float32)
        ring = np.zeros(2, dtype=np.uint16)
        sensor_pose = (5.0, 1.0, 0.5, math.pi / 2, 0.0, 0.0)

    class Sensor:
        last = Cloud()

    class Vehicle:
        sensors = {"l3d": Sensor()}

    class World:
        vehicles = {"v": Vehicle()}

    pts, cols = og.sensor_points(World())
    assert pts == pytest.approx(np.array([[5.0, 2.0, 0.5], [3.0, 1.0, 1.5]]))
    assert (cols == og.LIDAR3D_COLOR).all()


def test_frustum_corners_project_to_the_image_corners():
    class K:
        ncols, nrows, cx, cy, fx, fy = 64, 48, 31.5, 23.5, 40.0, 40.0

    rot = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])  # looking along world +x
    pos = np.array([1.0, 2.0, 0.5])
    segs = og.frustum_segments(rot, pos, K, depth=0.5)
    assert segs.shape == (16, 3)
    assert np.allclose(segs[0::4], pos)  # every edge starts at the optical centre
    corners = segs[1::4]
    assert np.allclose(corners[:, 0], 1.5)  # 0.5 m ahead along the axis
    u, v, z = project((corners - pos) @ rot, K)
    assert np.allclose(u, [-0.5, 63.5, 63.5, -0.5]) and np.allclose(v, [-0.5, -0.5, 47.5, 47.5])
    assert np.allclose(z, 0.5)


def test_camera_frusta_of_a_world(viewer_world_file):
    """cam1 on r2 (at (0, 3), facing +x) has its optical centre at (0.3, 3, 0.4)."""
    w = mv.load_world(viewer_world_file)
    w.step()
    segs, cols = og.camera_frusta(w)
    assert segs.shape == (16, 3) and (cols == og.FRUSTUM_COLOR).all()
    assert np.allclose(segs[0], (0.3, 3.0, 0.4))
    assert np.allclose(segs[1::4, 0], 0.3 + og.FRUSTUM_DEPTH)


def test_wheel_force_segments(viewer_world_file):
    w = mv.load_world(viewer_world_file)
    w.set_pose("r1", 1.0, 2.0, math.pi / 2)
    w.step()
    ph = w.start().physics
    k = list(w.vehicles).index("r1")
    s = ph.wheels.start[k]
    ph.wheels.fx[s:s + 2] = (10.0, 0.0)
    ph.wheels.fy[s:s + 2] = (0.0, -20.0)
    segs, cols = og.wheel_forces(ph, 0.01)
    left_start, left_end = segs[2 * s], segs[2 * s + 1]
    right_start, right_end = segs[2 * s + 2], segs[2 * s + 3]
    # wheels at (0, ±0.35) in the vehicle frame; the vehicle faces +y, so its left is −x
    assert left_start == pytest.approx((0.65, 2.0, 0.0), abs=1e-6)
    assert right_start == pytest.approx((1.35, 2.0, 0.0), abs=1e-6)
    assert left_end - left_start == pytest.approx((0.0, 0.1, 0.0), abs=1e-6)  # 10 N forward = +y, 0.01 m/N
    assert right_end - right_start == pytest.approx((0.2, 0.0, 0.0), abs=1e-6)  # 20 N to the right = +x
    assert len(segs) == 2 * ph.wheels.n and (cols == og.FORCE_COLOR).all()



def test_2d_lidar_rays_join_the_sensor_to_its_returns(viewer_world_file, tmp_path):
    """viz_visibleLines (upstream's default): 25 segments from the sensor at (0.2, 0, 0.3) to the 25 returns on box1,
    in viz_pointsColor (#ff000080, drawn opaque); none with viz_visibleLines false."""
    w = mv.load_world(viewer_world_file)
    assert og.lidar2d_rays(w)[0].shape == (0, 3)
    w.run(0.05)
    segs, cols = og.lidar2d_rays(w)
    assert segs.shape == (50, 3) and cols.shape == (50, 4)
    assert np.allclose(segs[0::2], (0.2, 0.0, 0.3), atol=1e-9)
    pts, _ = og.sensor_points(w)
    assert np.allclose(np.sort(segs[1::2, 1]), np.sort(pts[:, 1])) and np.allclose(segs[1::2, 0], 2.5, atol=1e-4)
    assert (cols == (255, 0, 0, 255)).all()
    text = viewer_world_file.read_text().replace('<sensor class="laser" name="laser1">',
                                                 '<sensor class="laser" name="laser1">'
                                                 "<viz_visibleLines>false</viz_visibleLines>")
    (tmp_path / "v.world.xml").write_text(text)
    w2 = mv.load_world(tmp_path / "v.world.xml")
    w2.run(0.05)
    assert og.lidar2d_rays(w2)[0].shape == (0, 3) and len(og.sensor_points(w2)[0]) == 25


def test_2d_lidar_points_in_their_own_colour_and_size(viewer_world_file, tmp_path):
    """viz_visiblePoints with viz_pointSize 6 and viz_pointsColor #00ff00: the 25 returns on box1 come as the
    lidar's own points (green, 6 px) and leave the generic sensor points; without it there are none."""
    w = mv.load_world(viewer_world_file)
    w.run(0.05)
    assert og.lidar2d_points(w) == []
    text = viewer_world_file.read_text().replace(
        '<sensor class="laser" name="laser1">',
        '<sensor class="laser" name="laser1"><viz_visiblePoints>true</viz_visiblePoints>'
        "<viz_pointSize>6</viz_pointSize><viz_pointsColor>#00ff00</viz_pointsColor>")
    (tmp_path / "p.world.xml").write_text(text)
    w2 = mv.load_world(tmp_path / "p.world.xml")
    w2.run(0.05)
    ((pts, cols, size),) = og.lidar2d_points(w2)
    assert size == 6.0 and pts.shape == (25, 3) and (cols == (0, 255, 0, 255)).all()
    assert np.allclose(pts[:, 0], 2.5, atol=1e-4) and np.allclose(pts[:, 2], 0.3, atol=1e-9)
    assert np.allclose(np.sort(pts[:, 1]), 2.3 * np.tan(np.radians(np.arange(-12, 13))), atol=1e-4)
    assert og.sensor_points(w2)[0].shape == (0, 3)
    segs, _ = og.lidar2d_rays(w2)
    assert np.allclose(np.sort(segs[1::2, 1]), np.sort(pts[:, 1]))
