"""The viewer's picture, drawn offscreen (no display): colours at the pixels the orbit camera projects objects to.

The test world has full ambient light, so every face shows its declared colour exactly: r1's chassis #d02020, box1
#20c020, the car #ffff00, the floor #c8c8c8; where nothing is drawn the picture shows the renderer's background.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image
from viewer_checks import FLOOR, GREEN, RED, H, W, check_scene_colours, pixel

import mvsim_core as mv
from mvsim_core.gui import overlay_geometry as og
from mvsim_core.gui.orbit_camera import OrbitCamera


@pytest.fixture
def world(viewer_world_file):
    w = mv.load_world(viewer_world_file)
    w.run(0.1)
    return w


@pytest.fixture
def view(world, offscreen_gl):
    from mvsim_core.gui.world_view import WorldView

    v = WorldView(world)
    yield v
    v.close()


def test_objects_show_their_colours_where_the_camera_projects_them(world, view):
    img = view.draw(W, H, read=True)
    check_scene_colours(img, view.camera, world)


def test_orthographic_view(world, view):
    view.camera.ortho = True
    img = view.draw(W, H, read=True)
    check_scene_colours(img, view.camera, world)


def test_views_from_other_angles_and_distances(world, view):
    cam = view.camera
    for az, el, dist in ((30, 70, 12), (135, 40, 18), (-150, 25, 16)):
        cam.azimuth, cam.elevation, cam.distance = math.radians(az), math.radians(el), dist
        img = view.draw(W, H, read=True)
        r1 = world.vehicles["r1"].pose
        assert pixel(img, cam, (r1[0], r1[1], 0.5)) == RED, (az, el)
        assert pixel(img, cam, (3.0, 0.0, 0.6)) == GREEN, (az, el)


def test_camera_follows_its_vehicle(world, view):
    world.vehicles["r2"].set_twist(1.0, 0.0, 0.0)
    world.run(1.0)
    view.camera.follow = "r2"
    img = view.draw(W, H, read=True)
    x, y, z = world.vehicles["r2"].pose[:3]
    assert view.camera.target == pytest.approx((x, y, z))
    assert x == pytest.approx(1.0, abs=0.01)
    assert tuple(img[H // 2, W // 2]) == RED  # r2's roof (class bot: red) is at the centre of the picture


def test_lidar_returns_are_drawn_on_the_face_they_hit(world, view):
    """Seen from behind r1, the returns on box1's near face (x = 2.5) show in the lidar colour (pure red), not the
    box's green, although they lie exactly on the face."""
    cam = view.camera
    cam.target, cam.azimuth, cam.elevation, cam.distance = (2.5, 0.0, 0.3), math.pi, math.radians(20), 6.0
    pts, _ = og.sensor_points(world)
    assert len(pts) == 25
    img = view.draw(W, H, read=True)
    for p in pts[::4]:
        assert pixel(img, cam, p) == tuple(og.LIDAR2D_COLOR[:3])
    view.show_sensor_points = False
    img = view.draw(W, H, read=True)
    assert pixel(img, cam, pts[12]) == GREEN


def test_camera_frustum_is_drawn(world, view):
    cam = view.camera
    segs, _ = og.camera_frusta(world)
    corner = segs[1]  # a corner of the frustum rectangle
    cam.target, cam.azimuth, cam.elevation, cam.distance = tuple(corner), math.radians(-90), math.radians(60), 4.0
    img = view.draw(W, H, read=True)
    x, y = cam.project(corner, W, H)
    patch = img[int(y) - 1:int(y) + 2, int(x) - 1:int(x) + 2].reshape(-1, 3)
    assert (patch == og.FRUSTUM_COLOR[:3]).all(axis=1).any()
    view.show_frusta = False
    img = view.draw(W, H, read=True)
    patch = img[int(y) - 1:int(y) + 2, int(x) - 1:int(x) + 2].reshape(-1, 3)
    assert not (patch == og.FRUSTUM_COLOR[:3]).all(axis=1).any()


def test_status_panel_sits_top_left_and_nowhere_else(world, view):
    bare = view.draw(W, H, read=True)
    with_panel = view.draw(W, H, ["t = 0.10 s", "hello"], read=True)
    changed = np.argwhere((bare != with_panel).any(axis=2))
    h, w = view.panel.image(["t = 0.10 s", "hello"]).shape[:2]
    assert changed[:, 0].min() >= 8 and changed[:, 1].min() >= 8
    assert changed[:, 0].max() < 8 + h and changed[:, 1].max() < 8 + w
    assert len(changed) > 0.5 * h * w  # the translucent panel darkens what is under it


def test_screenshot_file(world, tmp_path, offscreen_gl):
    from mvsim_core.gui.world_view import screenshot

    out = screenshot(world, tmp_path / "shots" / "a.png")
    img = np.asarray(Image.open(out).convert("RGB"))
    assert img.shape == (480, 640, 3)  # the world's <gui> win_w × win_h
    check_scene_colours(img, OrbitCamera.from_gui(world.gui), world)


def test_wheels_spin_in_the_picture(world, view):
    """The scene's wheel nodes turn with the wheel spin angle: drive r1 forward and its wheels' node rotation
    changes (what the viewer uploads each frame)."""
    scene = view.scene
    k = scene._wheel_vehicle.tolist().index(0)  # the first wheel of r1
    before = scene.node_poses()[scene._wheel_nodes[k]].copy()
    world.vehicles["r1"].set_twist(0.3, 0.0, 0.0)
    world.run(0.5)
    after = scene.node_poses()[scene._wheel_nodes[k]]
    spin = math.atan2(after[0, 2], after[0, 0]) - math.atan2(before[0, 2], before[0, 0])
    assert abs(spin) == pytest.approx(0.3 * 0.5 / 0.15, abs=0.05)  # distance / radius (mod the sign convention)


def test_drawing_never_imports_glfw(viewer_world_file, tmp_path, offscreen_gl):
    code = ("import sys, mvsim_core as mv\n"
            "from mvsim_core.gui.world_view import screenshot\n"
            f"w = mv.load_world({str(viewer_world_file)!r}); w.run(0.1)\n"
            f"screenshot(w, {str(tmp_path / 'x.png')!r})\n"
            "print('glfw' in sys.modules, 'OpenGL' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "True"]


def test_the_view_follows_spawn_remove_and_reset(world, view):
    """After the world rebuilds its physics (a spawned block, a removed one, a reset), the picture shows the objects
    there now, where they are now."""
    cam = view.camera
    top = (3.0, 0.0, 0.6)  # box1's top face
    assert pixel(view.draw(W, H, read=True), cam, top) == GREEN
    world.remove("box1")
    world.spawn('<block name="blue"><static>true</static><color>#2020d0</color><zmin>0</zmin><zmax>0.6</zmax>'
                '<shape><pt>-0.5 -0.5</pt><pt>0.5 -0.5</pt><pt>0.5 0.5</pt><pt>-0.5 0.5</pt></shape></block>',
                pose=(0.0, -3.0, 0.0))
    world.vehicles["r1"].set_twist(1.0, 0.0, 0.0)
    world.run(0.5)
    img = view.draw(W, H, read=True)
    assert pixel(img, cam, top) != GREEN
    assert pixel(img, cam, (0.0, -3.0, 0.6)) == (0x20, 0x20, 0xD0)
    assert pixel(img, cam, (*world.vehicles["r1"].pose[:2], 0.5)) == RED  # r1, moved on
    world.reset()
    img = view.draw(W, H, read=True)
    assert pixel(img, cam, top) == GREEN and pixel(img, cam, (0.0, -3.0, 0.6)) != (0x20, 0x20, 0xD0)
    assert pixel(img, cam, (0.0, 0.0, 0.5)) == RED


def test_walking_actors_and_keyframed_blocks_are_drawn_where_they_are_now(tmp_path, offscreen_gl):
    """An actor (no model: the stand-in figure, 1.8 m) walks from (0, −3) to (4, −3) at 1 m/s and stays; a blue
    keyframed block slides from (0, 3) towards (4, 3) in 4 s. At 1 s and at 3 s the picture shows the figure's colour at
    its body (0.8 m up) and its head (1.75 m up) where its path has it, the block's top where its keyframes have it,
    and the floor where they were before."""
    from mvsim_core.gui.world_view import WorldView
    from mvsim_core.objects.actor import STAND_IN_COLOR

    blue = (0x20, 0x20, 0xD0)
    path = tmp_path / "movers.world.xml"
    path.write_text(
        '<mvsim_world version="1.0"><simul_timestep>0.005</simul_timestep>'
        '<gui><cam_distance>14</cam_distance><cam_azimuth>-60</cam_azimuth><cam_elevation>50</cam_elevation>'
        '<cam_point_to>2 0 0</cam_point_to></gui><lights><light_ambient>1</light_ambient></lights>'
        '<element class="horizontal_plane"><x_min>-6</x_min><x_max>10</x_max><y_min>-8</y_min><y_max>8</y_max>'
        '<color>#c8c8c8</color></element>'
        '<actor name="bob"><walking_speed>1</walking_speed><path loop="false"><waypoint>0 -3 0</waypoint>'
        '<waypoint>4 -3 0</waypoint></path></actor>'
        '<block name="slider"><init_pose>0 3 0</init_pose><color>#2020d0</color><zmin>0</zmin><zmax>0.5</zmax>'
        '<shape><pt>-0.4 -0.4</pt><pt>0.4 -0.4</pt><pt>0.4 0.4</pt><pt>-0.4 0.4</pt></shape>'
        '<animation type="keyframes"><time_pose>0 0 0 0</time_pose><time_pose>4 4 0 0</time_pose></animation>'
        '</block></mvsim_world>')
    w = mv.load_world(path)
    view = WorldView(w)
    try:
        cam = view.camera
        for t, x in ((1.0, 1.0), (3.0, 3.0)):
            w.run(t - w.time)
            assert w.actors["bob"].pose[:2] == pytest.approx((x, -3.0), abs=1e-6)
            img = view.draw(W, H, read=True)
            for z in (0.8, 1.75):  # the body, the head (above the 1.7 m of a collision cylinder)
                assert pixel(img, cam, (x, -3.0, z)) == STAND_IN_COLOR[:3], (t, z)
            assert pixel(img, cam, (x, 3.0, 0.5)) == blue, t
        for x in (0.0, 1.0):  # where they were: the floor shows again
            assert pixel(img, cam, (x, -3.0, 0.0)) == FLOOR and pixel(img, cam, (x, 3.0, 0.0)) == FLOOR
    finally:
        view.close()


def test_lidar_rays_are_drawn_as_lines(world, view):
    """Seen from above, the middle of r1's central ray (y = 0, from x = 0.2 to the box face at x = 2.5) shows the
    ray colour (pure red) over the floor; without sensor points the floor shows again."""
    cam = view.camera
    cam.target, cam.azimuth, cam.elevation, cam.distance = (1.35, 0.0, 0.3), 0.0, math.radians(89), 6.0
    x, y = (int(c) for c in cam.project((1.9, 0.0, 0.3), W, H))

    def reds(img):  # pure-red pixels within 2 px of the ray's projected point (the line is 1 px wide)
        return int((img[y - 2:y + 3, x - 2:x + 3] == RED_RAY).all(axis=2).sum())

    assert reds(view.draw(W, H, read=True)) >= 2
    view.show_sensor_points = False
    assert reds(view.draw(W, H, read=True)) == 0


RED_RAY = (255, 0, 0)


def test_lidar_points_are_drawn_in_their_colour_and_size(viewer_world_file, tmp_path, offscreen_gl):
    """viz_visiblePoints, viz_pointSize 7, viz_pointsColor #00ffff: seen from behind r1, each return on box1's face
    is a cyan square about 7 px wide (at least 25 cyan pixels in the 9 × 9 px around it; the generic sensor points
    are 3 px), and no pixel is red (neither the generic points nor rays are drawn for this lidar)."""
    from mvsim_core.gui.world_view import WorldView

    text = viewer_world_file.read_text().replace(
        '<sensor class="laser" name="laser1">',
        '<sensor class="laser" name="laser1"><viz_visiblePoints>true</viz_visiblePoints>'
        "<viz_visibleLines>false</viz_visibleLines><viz_pointSize>7</viz_pointSize>"
        "<viz_pointsColor>#00ffff</viz_pointsColor>")
    (tmp_path / "p.world.xml").write_text(text)
    w = mv.load_world(tmp_path / "p.world.xml")
    w.run(0.1)
    v = WorldView(w)
    try:
        cam = v.camera
        cam.target, cam.azimuth, cam.elevation, cam.distance = (2.5, 0.0, 0.3), math.pi, math.radians(20), 6.0
        ((pts, _, _),) = og.lidar2d_points(w)
        img = v.draw(W, H, read=True)
        for p in pts[::6]:
            x, y = (int(c) for c in cam.project(p, W, H))
            cyan = (img[y - 4:y + 5, x - 4:x + 5] == (0, 255, 255)).all(axis=2).sum()
            assert cyan >= 25, (p, cyan)
        assert not (img == (255, 0, 0)).all(axis=2).any()  # neither generic red points nor rays
    finally:
        v.close()


def test_the_view_wants_the_lidars_whose_points_it_draws(world, view):
    """Where the world samples on demand (``mvsim launch`` with its window), the lidars are cast while the viewer
    draws their points (``<gui><show_sensor_points>``), and released when it stops drawing them (or closes)."""
    from mvsim_core.sensors.lidar2d import Lidar2D
    from mvsim_core.sensors.lidar3d import Lidar3D

    lidars = [s for v in world.vehicles.values() for s in v.sensors.values() if isinstance(s, (Lidar2D, Lidar3D))]
    assert lidars
    others = [s for v in world.vehicles.values() for s in v.sensors.values() if s not in lidars]
    assert all(s.readers == frozenset({"viewer"}) for s in lidars) == view.show_sensor_points
    view.show_sensor_points = True
    view.draw(W, H)
    assert all(s.readers == frozenset({"viewer"}) for s in lidars)
    assert all(not s.readers for s in others)
    world.sensors_on_demand = True
    stamp = lidars[0].last.stamp if lidars[0].last is not None else -1.0
    world.run(0.2)
    assert lidars[0].last.stamp > stamp  # cast while drawn
    view.show_sensor_points = False
    view.draw(W, H)
    assert all(not s.readers for s in lidars)
