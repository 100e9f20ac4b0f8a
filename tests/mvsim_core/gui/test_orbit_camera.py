"""Orbit camera maths: eye position, projection of known points, mouse orbit/zoom/pan, the world's <gui> options."""

import math

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.gui.orbit_camera import OrbitCamera

W, H = 800, 600


def test_eye_from_azimuth_elevation_distance():
    cam = OrbitCamera(target=(1.0, 2.0, 0.0), distance=10.0, azimuth=math.radians(90), elevation=math.radians(30))
    assert cam.eye() == pytest.approx([1.0, 2.0 + 10 * math.cos(math.radians(30)), 5.0])


def test_target_projects_to_the_centre_and_offsets_follow_the_pinhole_model():
    cam = OrbitCamera(target=(3.0, -1.0, 0.5), distance=20.0, azimuth=0.3, elevation=0.6, fov=math.radians(60))
    assert cam.project(cam.target, W, H) == pytest.approx((W / 2, H / 2))
    # a point 1 m to the screen's right of the target, at the target's depth: f = (H/2) / tan(fov/2) px per unit
    right = np.array([-math.sin(0.3), math.cos(0.3), 0.0])
    u, v = cam.project(np.array(cam.target) + right, W, H)
    f = (H / 2) / math.tan(math.radians(30))
    assert u == pytest.approx(W / 2 + f / 20.0) and v == pytest.approx(H / 2)
    assert cam.project(cam.eye() - 5 * (np.array(cam.target) - cam.eye()), W, H) is None  # behind the eye


def test_ortho_keeps_the_scale_at_the_target():
    persp = OrbitCamera(distance=15.0, azimuth=1.0, elevation=0.4)
    ortho = OrbitCamera(distance=15.0, azimuth=1.0, elevation=0.4, ortho=True)
    p = np.array([-math.sin(1.0), math.cos(1.0), 0.0]) * 2.0
    assert ortho.project(p, W, H) == pytest.approx(persp.project(p, W, H), abs=1e-6)


def test_mouse_orbit_zoom_pan():
    cam = OrbitCamera(distance=10.0, azimuth=0.0, elevation=0.5)
    cam.orbit(100, 1000)
    assert cam.azimuth == pytest.approx(-math.radians(30)) and cam.elevation == pytest.approx(math.radians(89))
    cam.zoom(2)
    assert cam.distance == pytest.approx(10.0 / 1.21)
    cam = OrbitCamera(target=(0.0, 0.0, 0.0), distance=10.0, azimuth=0.7, elevation=0.5)
    cam.pan(25, 0, H)
    u, v = cam.project((0.0, 0.0, 0.0), W, H)  # the old target moved with the cursor
    assert u == pytest.approx(W / 2 + 25) and v == pytest.approx(H / 2)


def test_from_the_worlds_gui_options(tmp_path):
    p = tmp_path / "g.world.xml"
    p.write_text('<mvsim_world version="1.0"><gui><cam_distance>12</cam_distance><cam_azimuth>-90</cam_azimuth>'
                 '<cam_elevation>60</cam_elevation><cam_point_to>1 2 3</cam_point_to><fov_deg>45</fov_deg>'
                 '<ortho>true</ortho><follow_vehicle>r1</follow_vehicle></gui></mvsim_world>')
    cam = OrbitCamera.from_gui(mv.load_world(p).gui)
    assert cam.target == (1.0, 2.0, 3.0) and cam.distance == 12.0 and cam.ortho and cam.follow == "r1"
    assert cam.azimuth == pytest.approx(-math.pi / 2) and cam.elevation == pytest.approx(math.pi / 3)
    assert cam.fov == pytest.approx(math.radians(45))
