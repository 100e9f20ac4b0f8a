"""Looks (issue 17): skybox behind the scene (viewer and camera images), shadows with ``<lights><enable_shadows>``,
textured planes and terrain, all in pictures rendered offscreen."""

from __future__ import annotations

import math
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import mvsim_core as mv
from mvsim_core.geometry.rotations import rotation
from mvsim_core.gui.orbit_camera import OrbitCamera
from mvsim_core.sensors.camera import PinholeModel
from mvsim_core.sensors.render.camera_model import OPTICAL_WRT_BODY, project, world_to_optical
from mvsim_core.sensors.render.looks import SKY_LAYERS

REPO = Path(__file__).resolve().parents[3]
ASSETS = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared")) / "assets" / "mvsim-models"
K = PinholeModel(320, 240, 160.0, 120.0, 160.0, 160.0)  # 90° field of view
W, H = 640, 480


def world_of(tmp_path: Path, body: str):
    path = tmp_path / "looks.world.xml"
    path.write_text(f'<mvsim_world version="1.0">{body}</mvsim_world>')
    return mv.load_world(path)


def renderer(world):
    from mvsim_core.sensors.render.renderer import SceneRenderer
    from mvsim_core.sensors.render.scene_geometry import SceneGeometry

    return SceneRenderer(SceneGeometry(world, world.start().physics))


def looking(yaw: float, pitch: float, z: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Optical frame of a camera at (0, 0, z) turned ``yaw`` about z and ``pitch`` down (rad)."""
    return rotation(yaw, pitch, 0.0) @ OPTICAL_WRT_BODY, np.array([0.0, 0.0, z])


def at(img: np.ndarray, rot: np.ndarray, pos: np.ndarray, point) -> np.ndarray:
    u, v, _ = project(world_to_optical(np.asarray(point, dtype=float), rot, pos), K)
    return img[int(round(v[0])), int(round(u[0]))].astype(int)


FACE_COLOURS = {"Front": (250, 0, 0), "Back": (0, 250, 0), "Left": (0, 0, 250), "Right": (250, 250, 0),
                "Up": (0, 250, 250), "Down": (250, 0, 250)}


def test_skybox_faces_seen_in_every_direction_of_a_camera(tmp_path, offscreen_gl):
    """Six plain faces: a camera at the centre sees Front along +x, Back −x, Left −y, Right +y, Up +z, Down −z, over
    its whole picture; its depth image is 0 there (nothing hit)."""
    for face, colour in FACE_COLOURS.items():
        Image.new("RGB", (8, 8), colour).save(tmp_path / f"sky{face}.png")
    r = renderer(world_of(tmp_path, '<element class="skybox"><textures>sky%s.png</textures></element>'))
    try:
        for face, yaw, pitch in (("Front", 0, 0), ("Back", math.pi, 0), ("Left", -math.pi / 2, 0),
                                 ("Right", math.pi / 2, 0), ("Up", 0, -math.pi / 2), ("Down", 0, math.pi / 2)):
            f = r.render(*looking(yaw, pitch), K, 0.01, 100)
            centre = f.rgb[60:180, 80:240].reshape(-1, 3).astype(int)
            assert np.abs(centre - FACE_COLOURS[face]).max() <= 2, face
            assert (f.depth == 0).all()
    finally:
        r.close()


@pytest.fixture(scope="module")
def sunset(tmp_path_factory) -> Path:
    """Upstream's SunSet skybox (the local mirror), unpacked."""
    src = ASSETS / "skyboxes" / "SunSet.zip"
    if not src.exists():
        pytest.skip(f"{src} (upstream assets mirror) is not here")
    out = tmp_path_factory.mktemp("sky")
    with zipfile.ZipFile(src) as z:
        z.extractall(out)
    return out / "SunSet"


def test_sunset_skybox_in_a_camera_image_matches_the_face_picture(sunset, tmp_path, offscreen_gl):
    """A level camera looking along +x sees SunSetFront: the pixel on the line of sight through the face point
    (s, t) shows that point's colour (±12 per channel: JPEG, resizing and filtering); below the horizon the floor."""
    w = world_of(tmp_path, f'<element class="skybox"><textures>{sunset}/SunSet%s.jpg</textures></element>'
                           '<element class="horizontal_plane"><color>#c8c8c8</color></element>')
    front = np.asarray(Image.open(sunset / "SunSetFront.jpg").convert("RGB")).astype(int)
    n = front.shape[0]
    r = renderer(w)
    try:
        rot, pos = looking(0.0, 0.0)
        f = r.render(rot, pos, K, 0.01, 1000)
        for s, t in ((0.5, 0.85), (0.2, 0.7), (0.75, 0.6), (0.5, 0.55)):  # within the ±36.9° rows
            d = np.array([1.0, -(2 * s - 1), 2 * t - 1])  # Front: right = −y, up = +z
            got = at(f.rgb, rot, pos, pos + d)
            want = front[int((1 - t) * (n - 1)), int(s * (n - 1))]
            assert np.abs(got - want).max() <= 12, ((s, t), got, want)
        above = f.rgb[:100].reshape(-1, 3).astype(int)
        assert (np.abs(above - 153).max(axis=1) > 0).mean() > 0.99  # not the plain background
        assert above.std(axis=0).min() > 3.0  # a picture, not one colour
    finally:
        r.close()


def test_viewer_shows_the_sky_above_the_horizon(sunset, tmp_path, offscreen_gl):
    """The viewer at a low elevation: the rows above the horizon are SunSet's sky (colours of its side faces' upper
    halves, not the 0.6-grey background); below, the floor."""
    from mvsim_core.gui.world_view import WorldView

    w = world_of(tmp_path, '<gui><cam_distance>10</cam_distance><cam_elevation>5</cam_elevation>'
                           '<cam_point_to>0 0 1</cam_point_to></gui>'
                           f'<element class="skybox"><textures>{sunset}/SunSet%s.jpg</textures></element>'
                           '<element class="horizontal_plane"><x_min>-100</x_min><x_max>100</x_max>'
                           '<y_min>-100</y_min><y_max>100</y_max><color>#c8c8c8</color></element>'
                           '<lights><light_ambient>1</light_ambient></lights>')
    view = WorldView(w)
    try:
        img = view.draw(W, H, read=True)
    finally:
        view.close()
    sky = img[:150].reshape(-1, 3).astype(int)
    assert not (sky == 153).all(axis=1).any()
    sides = np.concatenate([np.asarray(Image.open(sunset / f"SunSet{f}.jpg").convert("RGB"))[:1024].reshape(-1, 3)
                            for f in ("Front", "Back", "Left", "Right", "Up")]).astype(float)
    lo, hi = sides.min(axis=0), sides.max(axis=0)
    assert ((sky >= lo) & (sky <= hi)).all()  # colours of the sky pictures
    assert sky.std(axis=0).min() > 3.0
    assert (img[-40:].reshape(-1, 3) == 0xC8).all()


SHADOW_WORLD = ('<gui><cam_distance>20</cam_distance><cam_elevation>89</cam_elevation><cam_azimuth>0</cam_azimuth>'
                '</gui><lights><enable_shadows>{on}</enable_shadows></lights>'
                '<element class="horizontal_plane"><color>#c8c8c8</color></element>'
                '<block name="b"><init_pose>0 0 0</init_pose><color>#2020d0</color><zmin>0</zmin><zmax>2</zmax>'
                '<shape><pt>-0.5 -0.5</pt><pt>0.5 -0.5</pt><pt>0.5 0.5</pt><pt>-0.5 0.5</pt></shape></block>')


@pytest.mark.parametrize("on", [True, False])
def test_ground_under_a_block_is_darker_with_shadows(tmp_path, offscreen_gl, on):
    """Light from azimuth 45°, elevation 70° (upstream's defaults), ambient 0.5: the floor (200) beside the 2 m block
    is drawn 200 · (0.5 + 0.5 · sin 70°) = 194; at (−0.8, 0), where the block hides the light, 200 · 0.5 = 100 with
    shadows on, 194 with them off — in the viewer and in a camera image."""
    from mvsim_core.gui.world_view import WorldView

    w = world_of(tmp_path, SHADOW_WORLD.format(on=str(on).lower()))
    lit = 200 * (0.5 + 0.5 * math.sin(math.radians(70)))
    view = WorldView(w)
    try:
        img = view.draw(W, H, read=True)
    finally:
        view.close()
    cam: OrbitCamera = view.camera

    def px(p):
        x, y = cam.project(p, W, H)
        return img[int(y), int(x)].astype(int)

    for beside in ((1.5, 0.0, 0.0), (0.0, 1.5, 0.0), (-3.0, 0.0, 0.0)):
        assert np.abs(px(beside) - lit).max() <= 2, beside
    for under in ((-0.8, 0.0, 0.0), (0.0, -0.8, 0.0), (-0.7, -0.7, 0.0)):
        assert np.abs(px(under) - (100 if on else lit)).max() <= 2, under
    r = renderer(w)
    try:
        rot, pos = looking(math.pi, math.pi / 2, z=6.0)  # straight down
        f = r.render(rot, pos, K, 0.01, 100)
        assert np.abs(at(f.rgb, rot, pos, (-0.8, 0.0, 0.0)) - (100 if on else lit)).max() <= 2
        assert np.abs(at(f.rgb, rot, pos, (1.5, 0.0, 0.0)) - lit).max() <= 2
    finally:
        r.close()


TEXTURE = ASSETS / "textures-cgbookcase" / "Grass01_1K_BaseColor.png"


@pytest.fixture(scope="module")
def texture_mean() -> np.ndarray:
    if not TEXTURE.exists():
        pytest.skip(f"{TEXTURE} (upstream assets mirror) is not here")
    return np.asarray(Image.open(TEXTURE).convert("RGB")).reshape(-1, 3).astype(float).mean(axis=0)


@pytest.mark.parametrize("kind", ["horizontal_plane", "vertical_plane", "elevation_map"])
def test_a_textured_surface_shows_its_texture(tmp_path, offscreen_gl, texture_mean, kind):
    """Full ambient light: a camera facing the textured surface (tiles of 1 m, or the texture over the whole
    terrain) sees the texture's mean colour within 10 % per channel, and not its plain colour."""
    uri = str(TEXTURE)
    body = {
        "horizontal_plane": f'<element class="horizontal_plane"><color>#ff00ff</color><texture>{uri}</texture>'
                            '<texture_size_x>1</texture_size_x><texture_size_y>1</texture_size_y></element>',
        "vertical_plane": f'<element class="vertical_plane"><x0>3</x0><y0>-10</y0><x1>3</x1><y1>10</y1>'
                          f'<height>12</height><color>#ff00ff</color><texture>{uri}</texture>'
                          '<texture_size_x>1</texture_size_x><texture_size_y>1</texture_size_y></element>',
        "elevation_map": '<element class="elevation_map"><elevation_data_matrix>[0 0 0; 0 0 0; 0 0 0]'
                         '</elevation_data_matrix><resolution>10</resolution>'
                         f'<mesh_color>#ff00ff</mesh_color><texture_image>{uri}</texture_image></element>',
    }[kind]
    w = world_of(tmp_path, "<lights><light_ambient>1</light_ambient></lights>" + body)
    r = renderer(w)
    try:
        if kind == "vertical_plane":
            rot, pos = looking(0.0, 0.0, z=5.0)  # 3 m from the wall, facing it
        else:
            rot, pos = looking(0.0, math.pi / 2, z=3.0)  # straight down onto z = 0
        f = r.render(rot, pos, K, 0.01, 100)
    finally:
        r.close()
    assert (f.depth > 0).all()
    got = f.rgb.reshape(-1, 3).astype(float).mean(axis=0)
    assert np.abs(got - texture_mean).max() <= 0.10 * texture_mean.max(), (got, texture_mean)
    assert np.abs(got - texture_mean).max() / 255 < 0.1 and got[1] > got[0]  # grass: green, not magenta


def test_sky_layers_are_the_six_faces():
    assert sorted(SKY_LAYERS) == sorted(FACE_COLOURS)
