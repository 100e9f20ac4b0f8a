"""Visual-only blocks (``<visual_only>``: what the ROS ``runtime_overlays`` make, upstream v1.4's GUI-only overlays):
the viewer draws them and nothing else meets them; an ordinary intangible block in the same place is still seen by
3D lidars and cameras (upstream draws intangible blocks, so its rendered sensors see them).

World (written below): no floor (the 3D lidar's implicit floor is z = 0), a static wall whose face is at x = 8 m
(y from -5 to 5, 0..2 m high), and the block under test, 'ghost': a 0.5 m square from z = 0 to 2 m centred on
(3, 0), its face towards the origin at x = 2.75 m, colour #20c0c0. Standalone sensors at the origin, all looking
along +x, noiseless: a 2D lidar 0.3 m up (181 rays over 180°: ray 90 along +x), a 3D lidar 1 m up (one horizontal
ring of 360 azimuths: index 180 along +x) and an RGB-D camera 1 m up (640 × 480, f = 500: pixel (240, 320) on its
axis).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.sensors.lidar3d import PointCloud3D
from mvsim_core.sensors.rgbd_camera import RgbdObservation

WALL_X = 8.0  # m: the wall's face
GHOST_X = 2.75  # m: the ghost's face
GHOST_RGB = (0x20, 0xC0, 0xC0)
KINDS = {"visual_only": "<visual_only>true</visual_only>", "intangible": "<intangible>true</intangible>",
         "static": "<static>true</static>"}
SENSORS = ('<sensor class="laser" name="laser"><pose_3d>0 0 0.3 0 0 0</pose_3d><nrays>181</nrays>'
           '<fov_degrees>180</fov_degrees><sensor_period>0.05</sensor_period><max_range>20</max_range>'
           '<range_std_noise>0</range_std_noise><angle_std_noise_deg>0</angle_std_noise_deg></sensor>\n'
           '<sensor class="lidar3d" name="lidar"><pose_3d>0 0 1 0 0 0</pose_3d><vertical_ray_angles>0'
           '</vertical_ray_angles><horz_nrays>360</horz_nrays><max_range>20</max_range><sensor_period>0.05'
           '</sensor_period><range_std_noise>0</range_std_noise></sensor>\n')
RGBD = ('<sensor class="rgbd_camera" name="cam"><pose_3d>0 0 1 0 0 0</pose_3d><sensor_period>0.05</sensor_period>'
        '<depth_noise_sigma>0</depth_noise_sigma></sensor>\n')


def ghost(kind: str) -> str:
    return (f'<block name="ghost">{KINDS[kind]}<init_pose>3 0 0</init_pose><color>#20c0c0</color><zmin>0</zmin>'
            '<zmax>2</zmax><shape><pt>-0.25 -0.25</pt><pt>0.25 -0.25</pt><pt>0.25 0.25</pt><pt>-0.25 0.25</pt>'
            '</shape></block>\n')


def make_world(tmp_path: Path, body: str) -> mv.World:
    path = tmp_path / "ghost.world.xml"
    path.write_text('<mvsim_world version="1.0"><simul_timestep>0.005</simul_timestep>\n'
                    '<lights><light_ambient>1</light_ambient></lights>\n'
                    '<block name="wall"><static>true</static><init_pose>8 0 0</init_pose><zmin>0</zmin><zmax>2'
                    '</zmax><color>#c0c020</color><shape><pt>0 -5</pt><pt>0.5 -5</pt><pt>0.5 5</pt><pt>0 5</pt>'
                    f'</shape></block>\n{body}</mvsim_world>\n')
    return mv.load_world(path, seed=1)


def ahead_3d(pc: PointCloud3D) -> float:
    """Range (m) of the 3D lidar's return along +x (ring 0, azimuth index 180)."""
    m = (pc.ring == 0) & (pc.azimuth_index == 180)
    assert m.any()
    return float(np.hypot(*pc.points[m][0, :2].astype(np.float64)))


@pytest.mark.parametrize(("kind", "lidar3d", "laser"), [
    ("visual_only", WALL_X, WALL_X),   # nothing but the viewer sees it
    ("intangible", GHOST_X, WALL_X),   # upstream: drawn, so seen by 3D lidars; no body, so not by 2D lidars
    ("static", GHOST_X, GHOST_X),
])
def test_lidars_read_the_wall_behind_a_visual_only_block(tmp_path, kind, lidar3d, laser):
    w = make_world(tmp_path, ghost(kind) + SENSORS)
    w.run(0.1)
    scan = w.sensors["laser"].last
    assert float(scan.ranges[90]) == pytest.approx(laser, abs=0.01)
    pc = w.sensors["lidar"].last
    assert isinstance(pc, PointCloud3D)
    assert ahead_3d(pc) == pytest.approx(lidar3d, abs=0.01)
    b = w.blocks["ghost"]
    assert b.is_visual_only == (kind == "visual_only")
    assert b.is_intangible == (kind != "static")


@pytest.mark.parametrize(("kind", "depth", "rgb"), [
    ("visual_only", WALL_X, (0xC0, 0xC0, 0x20)),  # the wall's colour: the ghost is not drawn for cameras
    ("intangible", GHOST_X, GHOST_RGB),
])
def test_a_depth_camera_sees_through_a_visual_only_block(offscreen_gl, tmp_path, kind, depth, rgb):
    w = make_world(tmp_path, ghost(kind) + RGBD)
    w.run(0.1)
    obs = w.sensors["cam"].last
    assert isinstance(obs, RgbdObservation) and obs.depth is not None and obs.rgb is not None
    assert float(obs.depth[240, 320]) == pytest.approx(depth, abs=0.02)
    assert tuple(int(c) for c in obs.rgb[240, 320]) == rgb
    # the ghost's top edge (2 m, 1 m above the camera) would be 500 · 1 / 2.75 = 182 px above the centre: the
    # column's first return is the wall's top instead (500 · 1 / 8 = 62.5 px above) when the ghost is not drawn
    top = int(np.argmax(obs.depth[:, 320] > 0))
    assert top == pytest.approx(240 - 500 * 1.0 / depth, abs=2)


def test_the_viewer_draws_a_visual_only_block(offscreen_gl, tmp_path):
    from mvsim_core.gui.orbit_camera import OrbitCamera
    from mvsim_core.gui.world_view import WorldView
    from mvsim_core.sensors.render.renderer import renderer_for

    w = make_world(tmp_path, ghost("visual_only") + RGBD)
    w.run(0.1)
    cam = OrbitCamera(target=(4.0, 0.0, 0.0), distance=12.0, azimuth=math.radians(-60.0),
                      elevation=math.radians(55.0))
    view = WorldView(w, cam)
    try:
        assert "block:ghost" in view.scene.node_names
        img = view.draw(640, 480, read=True)
        at = cam.project((3.0, 0.0, 2.0), 640, 480)  # the middle of the ghost's top face
        assert at is not None
        x, y = at
        assert tuple(int(c) for c in img[int(y), int(x)]) == GHOST_RGB
    finally:
        view.close()
    sensors_scene = renderer_for(w.sensor_scheduler.ctx).scene
    assert "block:wall" in sensors_scene.node_names and "block:ghost" not in sensors_scene.node_names


@pytest.mark.parametrize(("kind", "z"), [("intangible", 0.15), ("visual_only", 0.0)])
def test_a_visual_only_ramp_is_not_ground(tmp_path, kind, z):
    """A robot placed half way up a 0.3 m × 2 m ramp stands on it (z ≈ 0.15 m) when the ramp is intangible (still
    drivable), on the implicit floor (z = 0) when it is visual-only."""
    w = make_world(tmp_path, f'<block name="ramp">{KINDS[kind]}<init_pose>1 -1 0</init_pose>'
                   '<geometry type="ramp" lx="2" ly="2" lz="0.3"/></block>\n'
                   '<vehicle name="r"><init_pose>2 0 0</init_pose><dynamics class="differential"/></vehicle>\n')
    w.start()
    assert w.vehicles["r"].pose[2] == pytest.approx(z, abs=0.03)
    assert w.blocks["ramp"].is_drivable == (kind == "intangible")
