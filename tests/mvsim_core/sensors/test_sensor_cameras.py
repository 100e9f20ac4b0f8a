"""``<sensor class="camera">`` and ``<sensor class="rgbd_camera">``: intrinsics, clip distances, poses."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mvsim_core.errors import WorldFileError
from mvsim_core.sensors import Camera, PinholeModel, RgbdCamera

D = math.radians


def test_camera_defaults(make_sensor):
    s, ctx = make_sensor('<sensor class="camera"/>')
    assert isinstance(s, Camera)
    assert s.intrinsics == PinholeModel(640, 480, 320.0, 240.0, 500.0, 500.0)
    assert isinstance(s.intrinsics.ncols, int)
    assert (s.params.clip_min, s.params.clip_max) == (0.01, 1e4)
    assert s.pose == pytest.approx((0, 0, 0.5, D(90), 0, D(90)))
    np.testing.assert_array_equal(s.intrinsics.K, [[500, 0, 320], [0, 500, 240], [0, 0, 1]])
    assert s.intrinsics.hfov == pytest.approx(2 * math.atan(320 / 500))
    assert s.summary() == "camera1 (camera, 640×480, 10 Hz)"
    assert ctx.warnings == []


def test_camera_values(make_sensor):
    s, _ = make_sensor('<sensor class="camera"><ncols>1920</ncols><nrows>1080</nrows><cx>$f{1920/2}</cx>'
                       "<cy>540</cy><fx>800</fx><fy>810.5</fy><clip_min>0.02</clip_min><clip_max>300</clip_max>"
                       "</sensor>")
    assert s.intrinsics == PinholeModel(1920, 1080, 960.0, 540.0, 800.0, 810.5)
    assert (s.params.clip_min, s.params.clip_max) == (0.02, 300.0)


@pytest.mark.parametrize("tag, value, words", [
    ("ncols", "0", "ncols"),
    ("nrows", "-480", "nrows"),
    ("fx", "0", "fx"),
    ("fy", "-1", "fy"),
    ("clip_min", "0", "clip_min"),
    ("clip_min", "1e5", "smaller than <clip_max>"),
])
def test_camera_bad_values_are_located(make_sensor, xml_file, tag, value, words):
    with pytest.raises(WorldFileError) as e:
        make_sensor(f'<sensor class="camera">\n  <{tag}>{value}</{tag}>\n</sensor>')
    assert (e.value.file, e.value.line) == (xml_file, 2)
    assert words in e.value.message


def test_rgbd_defaults(make_sensor):
    s, ctx = make_sensor('<sensor class="rgbd_camera"/>')
    assert isinstance(s, RgbdCamera)
    assert s.name == "camera1"
    assert s.depth_intrinsics == PinholeModel(640, 480, 320.0, 240.0, 500.0, 500.0)
    assert s.rgb_intrinsics == PinholeModel(640, 480, 320.0, 240.0, 500.0, 500.0)
    assert s.rgb_pose_wrt_depth == pytest.approx((0, 0, 0, D(-90), 0, D(-90)))
    assert s.pose == pytest.approx((0, 0, 0.5, D(90), 0, D(90)))
    p = s.params
    assert (p.sense_depth, p.sense_rgb, p.show_3d_pointcloud) == (True, True, False)
    assert (p.rgb_clip_min, p.rgb_clip_max, p.depth_clip_min, p.depth_clip_max) == (0.01, 1e4, 0.1, 15.0)
    assert (p.depth_resolution, p.depth_noise_sigma) == (1e-3, 1e-3)
    assert (p.publish_ros_depth_image, p.publish_ros_colored_pointcloud) == (True, False)
    assert s.summary() == "camera1 (rgbd_camera, depth 640×480 + rgb 640×480, 10 Hz)"
    assert ctx.warnings == []


def test_rgbd_separate_resolutions_and_relative_pose(make_sensor):
    s, _ = make_sensor('<sensor class="rgbd_camera"><depth_ncols>320</depth_ncols><depth_nrows>240</depth_nrows>'
                       "<rgb_fx>600</rgb_fx><relativePoseIntensityWRTDepth>0 0.05 0 -90 0 -90"
                       "</relativePoseIntensityWRTDepth><sense_rgb>false</sense_rgb></sensor>")
    assert (s.depth_intrinsics.ncols, s.depth_intrinsics.nrows) == (320, 240)
    assert (s.rgb_intrinsics.ncols, s.rgb_intrinsics.fx) == (640, 600.0)
    assert s.rgb_pose_wrt_depth == pytest.approx((0, 0.05, 0, D(-90), 0, D(-90)))
    assert "rgb" not in s.details()


@pytest.mark.parametrize("tag, value, words", [
    ("depth_ncols", "0", "depth_ncols"),
    ("rgb_nrows", "0", "rgb_nrows"),
    ("depth_fx", "0", "depth_fx"),
    ("depth_resolution", "0", "depth_resolution"),
    ("depth_noise_sigma", "-0.1", "depth_noise_sigma"),
    ("depth_clip_min", "20", "smaller than <depth_clip_max>"),
    ("rgb_clip_max", "0.001", "smaller than <rgb_clip_max>"),
    ("relativePoseIntensityWRTDepth", "0 0 0", "relativePoseIntensityWRTDepth"),
    ("sense_depth", "no", "sense_depth"),
])
def test_rgbd_bad_values_are_located(make_sensor, xml_file, tag, value, words):
    with pytest.raises(WorldFileError) as e:
        make_sensor(f'<sensor class="rgbd_camera">\n  <{tag}>{value}</{tag}>\n</sensor>')
    assert (e.value.file, e.value.line) == (xml_file, 2)
    assert words in e.value.message
