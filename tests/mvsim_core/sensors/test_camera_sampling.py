"""Camera and RGB-D camera simulation in loaded worlds (reference §1.12 camera / rgbd_camera rows): depth of walls
along the optical axis, colours under the world's light, intrinsics (a known point lands on its pixel), relative RGB
pose, clip range, seeded depth noise, vehicles seen by other vehicles, poses from the physics (pitch on a slope),
moving blocks, and OpenGL imported only when a camera renders."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.geometry.rotations import rotation
from mvsim_core.sensors.camera import CameraImage
from mvsim_core.sensors.render import gl_context
from mvsim_core.sensors.rgbd_camera import RgbdObservation

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module", autouse=True)
def offscreen_gl() -> None:
    ok, why = gl_context.available()
    if not ok:
        pytest.skip(f"no offscreen OpenGL context on this machine: {why}")


def make_world(tmp_path: Path, body: str, *, seed: int = 0, name: str = "w.world.xml") -> mv.World:
    path = tmp_path / name
    path.write_text(f'<mvsim_world version="1.0">\n{body}\n</mvsim_world>\n')
    return mv.load_world(path, seed=seed)


def box(name: str, x0: float, y0: float, x1: float, y1: float, z0: float = 0.0, z1: float = 3.0,
        color: str = "#3366cc", static: bool = True) -> str:
    pts = "".join(f"<pt>{x} {y}</pt>" for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1)))
    return (f'<block name="{name}"><static>{str(static).lower()}</static><init_pose>0 0 0</init_pose>'
            f'<skip_elevation_adjust/><zmin>{z0}</zmin><zmax>{z1}</zmax><color>{color}</color>'
            f'<shape>{pts}</shape></block>\n')


def rgbd(name: str = "cam", pose: str = "0 0 1 0 0 0", *, noise: float = 0.0, extra: str = "",
         period: float = 0.1) -> str:
    """An RGB-D camera; ``pose`` is the x-forward depth sensor frame (x y z yaw pitch roll, degrees)."""
    return (f'<sensor class="rgbd_camera" name="{name}"><pose_3d>{pose}</pose_3d>'
            f'<sensor_period>{period}</sensor_period><depth_noise_sigma>{noise}</depth_noise_sigma>{extra}</sensor>\n')


def camera(name: str = "rgb", pose: str = "0 0 1 -90 0 -90", extra: str = "") -> str:
    """An RGB camera; ``pose`` is its optical frame (the default looks along +x, upright)."""
    return f'<sensor class="camera" name="{name}"><pose_3d>{pose}</pose_3d>{extra}</sensor>\n'


def lights(ambient: float = 0.5, azimuth: float = 45.0, elevation: float = 70.0) -> str:
    return (f"<lights><light_ambient>{ambient}</light_ambient><light_azimuth_deg>{azimuth}</light_azimuth_deg>"
            f"<light_elevation_deg>{elevation}</light_elevation_deg></lights>\n")


def expected_shade(rgb: tuple[int, int, int], normal: tuple[float, float, float], ambient: float, azimuth: float,
                   elevation: float) -> np.ndarray:
    """The documented lighting: c · min(1, a + (1 − a) · max(0, n·l)), l towards the light (degrees here)."""
    az, el = math.radians(azimuth), math.radians(elevation)
    ldir = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
    k = min(1.0, ambient + (1.0 - ambient) * max(0.0, float(np.dot(normal, ldir))))
    return np.asarray(rgb, dtype=float) * k


def standalone(world: mv.World, name: str):
    return world.sensors[name].last


WALL_D = 5.0
WALL = box("wall", WALL_D, -20, WALL_D + 0.5, 20, 0.0, 4.0)  # its face x = 5 looks at the camera (normal −x)


# ---------------------------------------------------------------------------------------------- depth and colour
def test_depth_camera_facing_a_wall_reads_the_distance_everywhere(tmp_path):
    """A flat wall facing the camera 5 m ahead: depth along the optical axis is 5 m at every wall pixel, whatever the
    pixel's angle off the axis (the range along the ray would grow to 5.9 m in the corners); below the wall's foot
    nothing is seen (0 = no return)."""
    w = make_world(tmp_path, WALL + rgbd())
    w.run(0.1)
    obs = standalone(w, "cam")
    assert isinstance(obs, RgbdObservation)
    assert obs.stamp == pytest.approx(0.1)
    assert obs.depth.shape == (480, 640) and obs.depth.dtype == np.float32
    assert obs.rgb.shape == (480, 640, 3) and obs.rgb.dtype == np.uint8
    # the camera is 1 m up: the wall's foot (z = 0) projects to row cy + fy·1/5 = 340, its top (z = 4) above row 0
    wall = obs.depth[:339]
    assert np.abs(wall - WALL_D).max() <= 0.01
    assert np.abs(wall - WALL_D).max() <= 1e-3  # in fact exact up to the 1 mm quantization
    assert (obs.depth[342:] == 0).all()
    assert (obs.fx, obs.fy, obs.cx, obs.cy, obs.width, obs.height) == (500.0, 500.0, 320.0, 240.0, 640, 480)


def test_wall_colour_under_the_world_light(tmp_path):
    """Default light (azimuth 45°, elevation 70°, ambient 0.5): the wall's face turned away from the light shows half
    its colour; a light straight from the camera side shows the full colour; ambient 1 shows it flat."""
    base = (0x33, 0x66, 0xCC)
    for amb, az, el in ((0.5, 45.0, 70.0), (0.3, 180.0, 0.0), (1.0, 45.0, 70.0), (0.2, 150.0, 30.0)):
        w = make_world(tmp_path, lights(amb, az, el) + WALL + rgbd(), name=f"w{amb}_{az}.world.xml")
        w.run(0.1)
        rgb = standalone(w, "cam").rgb
        want = expected_shade(base, (-1.0, 0.0, 0.0), amb, az, el)
        got = rgb[:339].reshape(-1, 3).astype(float)
        assert np.abs(got - want).max() <= 1.0, (amb, az, el, got[0], want)
        # where nothing is drawn: the background grey
        assert (rgb[345:] == (153, 153, 153)).all()


def test_depth_along_the_optical_axis_on_a_tilted_view_of_the_floor(tmp_path):
    """Camera 2 m above a floor, pitched 30° down: every floor pixel reads the analytic depth Z = −h / (R·d)_z with
    d = ((u − cx)/fx, (v − cy)/fy, 1) (optical frame), so the centre pixel reads h / sin 30° = 4 m."""
    floor = ('<element class="horizontal_plane"><x_min>-50</x_min><x_max>50</x_max><y_min>-50</y_min>'
             "<y_max>50</y_max><z>0</z><color>#808080</color></element>\n")
    w = make_world(tmp_path, floor + rgbd(pose="0 0 2 0 30 0", extra="<depth_clip_max>40</depth_clip_max>"))
    w.run(0.1)
    obs = standalone(w, "cam")
    assert obs.depth[240, 320] == pytest.approx(4.0, abs=1e-3)
    k = obs.depth_intrinsics
    v, u = np.mgrid[0:480, 0:640]
    d = np.stack([(u - k.cx) / k.fx, (v - k.cy) / k.fy, np.ones(u.shape)], axis=-1)
    r_opt = rotation(0.0, math.radians(30), 0.0) @ np.array([[0, 0, 1], [-1, 0, 0], [0, -1, 0]], dtype=float)
    dz = d @ r_opt[2]
    with np.errstate(divide="ignore"):
        z = np.where(dz < 0, -2.0 / dz, np.inf)
    seen = z <= 40.0
    assert seen.sum() > 0.8 * seen.size
    assert np.abs(obs.depth[seen] - z[seen]).max() <= 1e-3 + 1e-5 * z[seen].max()
    assert (obs.depth[~seen] == 0).all()


# ---------------------------------------------------------------------------------------------- intrinsics
# a 0.2 m green cube whose front face (x = 6) is centred at (6, 1, 1.5), seen from (0, 0, 1) looking along +x
CUBE = box("cube", 6.0, 0.9, 6.2, 1.1, 1.4, 1.6, color="#00ff00")
ODD_K = ("<{p}ncols>400</{p}ncols><{p}nrows>300</{p}nrows><{p}cx>190.3</{p}cx><{p}cy>160.7</{p}cy>"
         "<{p}fx>350</{p}fx><{p}fy>420</{p}fy>")


def expected_pixel(x: float, y: float, z: float, cam: tuple[float, float, float], cx: float, cy: float, fx: float,
                   fy: float) -> tuple[float, float, float]:
    """(u, v, Z) of world point (x, y, z) for a camera at ``cam`` looking along +x (optical x = −y, y = −z)."""
    X, Y, Z = -(y - cam[1]), -(z - cam[2]), x - cam[0]
    return cx + fx * X / Z, cy + fy * Y / Z, Z


def test_intrinsics_put_a_known_point_on_its_pixel(tmp_path):
    """Non-default intrinsics (400×300, fx ≠ fy, off-centre principal point): the pixels that read the front face's
    depth (6 m) are centred on the projection of the face centre (±1 px), and that pixel is green."""
    w = make_world(tmp_path, lights(ambient=1.0) + CUBE + rgbd(extra=ODD_K.format(p="depth_") + ODD_K.format(p="rgb_")))
    w.run(0.1)
    obs = standalone(w, "cam")
    assert obs.depth.shape == (300, 400) and obs.rgb.shape == (300, 400, 3)
    u, v, z = expected_pixel(6.0, 1.0, 1.5, (0, 0, 1), 190.3, 160.7, 350, 420)
    front = np.abs(obs.depth - 6.0) < 1e-3
    rows, cols = np.nonzero(front)
    assert front.sum() > 100
    assert cols.mean() == pytest.approx(u, abs=1.0)
    assert rows.mean() == pytest.approx(v, abs=1.0)
    # the face spans u in [126.1, 137.8], v in [118.7, 132.7]: pixel centres 127..137 and 119..132
    assert (cols.min(), cols.max(), rows.min(), rows.max()) == (127, 137, 119, 132)
    assert tuple(obs.rgb[round(v), round(u)]) == (0, 255, 0)
    assert obs.depth[round(v), round(u)] == pytest.approx(z, abs=1e-3)


def test_rgb_camera_projects_the_cube_where_the_pinhole_model_says(tmp_path):
    """A plain camera with the same odd intrinsics: the green pixels cover the analytic silhouette of the cube's
    eight projected corners, up to one pixel at its border."""
    w = make_world(tmp_path, lights(ambient=1.0) + CUBE + camera(extra=ODD_K.format(p="")))
    w.run(0.1)
    img = standalone(w, "rgb")
    assert isinstance(img, CameraImage)
    assert img.rgb.shape == (300, 400, 3)
    assert (img.width, img.height, img.fx, img.fy, img.cx, img.cy) == (400, 300, 350.0, 420.0, 190.3, 160.7)
    corners = [(x, y, z) for x in (6.0, 6.2) for y in (0.9, 1.1) for z in (1.4, 1.6)]
    uv = np.array([expected_pixel(*c, (0, 0, 1), 190.3, 160.7, 350, 420)[:2] for c in corners])
    green = np.all(img.rgb == (0, 255, 0), axis=-1)
    inside, dist = _hull_mask(uv, 400, 300)
    assert green[inside & (dist > 1.0)].all()
    assert not green[~inside & (dist > 1.0)].any()
    assert green.sum() > 100


def _hull_mask(points: np.ndarray, w: int, h: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel centres inside the convex hull of 2D ``points`` and their distance to its border (px)."""
    from mvsim_core.io.meshes import convex_hull_2d

    hull = convex_hull_2d(points)
    v, u = np.mgrid[0:h, 0:w].astype(float)
    inside = np.ones((h, w), dtype=bool)
    dist = np.full((h, w), np.inf)
    for a, b in zip(hull, np.roll(hull, -1, axis=0), strict=True):
        e = b - a
        cross = e[0] * (v - a[1]) - e[1] * (u - a[0])
        inside &= cross >= 0
        t = np.clip(((u - a[0]) * e[0] + (v - a[1]) * e[1]) / (e @ e), 0, 1)
        dist = np.minimum(dist, np.hypot(u - (a[0] + t * e[0]), v - (a[1] + t * e[1])))
    return inside, dist


def test_rgb_camera_offset_by_relative_pose_shifts_the_image(tmp_path):
    """``relativePoseIntensityWRTDepth`` 0.1 m to the left of the depth sensor: the colour image sees the cube
    fx·0.1/6 ≈ 8.3 px further right than the depth image does; the RGB pose reports the offset."""
    rel = "<relativePoseIntensityWRTDepth>0 0.1 0 -90 0 -90</relativePoseIntensityWRTDepth>"
    w = make_world(tmp_path, lights(ambient=1.0) + CUBE + rgbd(extra=rel))
    w.run(0.1)
    obs = standalone(w, "cam")
    green_cols = np.nonzero(np.all(obs.rgb == (0, 255, 0), axis=-1))[1]
    depth_cols = np.nonzero(np.abs(obs.depth - 6.0) < 1e-3)[1]
    u_depth, _, _ = expected_pixel(6.0, 1.0, 1.5, (0, 0, 1), 320, 240, 500, 500)
    u_rgb, _, _ = expected_pixel(6.0, 1.0, 1.5, (0, 0.1, 1), 320, 240, 500, 500)
    assert u_rgb - u_depth == pytest.approx(500 * 0.1 / 6)
    assert depth_cols.mean() == pytest.approx(u_depth, abs=1.0)
    assert green_cols.min() == pytest.approx(u_rgb - 500 * 0.1 / 6, abs=1.5)  # the front face's left edge
    assert obs.rgb_pose[:3] == pytest.approx((0.0, 0.1, 1.0))
    assert obs.depth_pose[:3] == pytest.approx((0.0, 0.0, 1.0))
    assert obs.depth_pose[3:] == pytest.approx((-math.pi / 2, 0.0, -math.pi / 2))
    assert obs.sensor_pose == pytest.approx((0, 0, 1, 0, 0, 0))


def test_sense_flags_and_separate_resolutions(tmp_path):
    """sense_rgb=false gives no colour image, sense_depth=false no depth; different RGB and depth sizes are rendered
    separately and both see the wall."""
    body = (WALL + rgbd("a", extra="<sense_rgb>false</sense_rgb>") + rgbd("b", extra="<sense_depth>false</sense_depth>")
            + rgbd("c", extra="<rgb_ncols>320</rgb_ncols><rgb_nrows>240</rgb_nrows><rgb_cx>160</rgb_cx>"
                              "<rgb_cy>120</rgb_cy><rgb_fx>250</rgb_fx><rgb_fy>250</rgb_fy>"))
    w = make_world(tmp_path, body)
    w.run(0.1)
    a, b, c = (standalone(w, n) for n in "abc")
    assert a.rgb is None and a.depth is not None
    assert b.depth is None and b.rgb is not None and b.points().shape == (0, 3)
    assert c.depth.shape == (480, 640) and c.rgb.shape == (240, 320, 3)
    assert np.abs(c.depth[:339] - WALL_D).max() <= 1e-3
    assert (c.rgb[:160] == c.rgb[0, 0]).all()  # the wall's foot is at row 120 + 250/5 = 170


def test_points_of_a_depth_image_lie_on_the_wall(tmp_path):
    w = make_world(tmp_path, WALL + rgbd())
    w.run(0.1)
    pts = standalone(w, "cam").points()
    assert pts.dtype == np.float32 and len(pts) >= 339 * 640
    np.testing.assert_allclose(pts[:, 2], WALL_D, atol=1e-3)  # optical z = depth
    assert pts[:, 1].max() == pytest.approx(1.0, abs=0.01)  # down to the foot of the wall, 1 m below the camera


# ---------------------------------------------------------------------------------------------- clip, noise, seeds
def test_clip_range_reads_zero_outside(tmp_path):
    """Wall at 5 m: beyond depth_clip_max (4 m) it reads 0; a post 0.3 m ahead, nearer than depth_clip_min, reads 0
    too and hides the wall behind it."""
    post = box("post", 0.3, -0.1, 0.4, 0.1, 0.0, 3.0)
    w = make_world(tmp_path, WALL + post + rgbd("far", pose="0 5 1 0 0 0", extra="<depth_clip_max>4</depth_clip_max>")
                   + rgbd("near", extra="<depth_clip_min>0.5</depth_clip_min>"))
    w.run(0.1)
    assert (standalone(w, "far").depth == 0).all()
    near = standalone(w, "near").depth
    assert (near[:, 320] == 0).all()  # the post covers the centre column
    assert np.abs(near[:339, 0] - WALL_D).max() <= 1e-3  # the wall is seen beside it


def test_depth_resolution_quantizes(tmp_path):
    wall = box("wall", 5.02, -20, 5.5, 20, 0.0, 4.0)
    w = make_world(tmp_path, wall + rgbd(extra="<depth_resolution>0.05</depth_resolution>"))
    w.run(0.1)
    assert np.unique(standalone(w, "cam").depth[:300]) == pytest.approx([5.0])


def test_depth_noise_statistics(tmp_path):
    """σ = 5 cm: over the ~217 000 wall pixels the error has mean ≈ 0 and standard deviation ≈ 5 cm, and 68 % of
    pixels lie within one σ (Gaussian)."""
    w = make_world(tmp_path, WALL + rgbd(noise=0.05, extra="<depth_resolution>1e-6</depth_resolution>"))
    w.run(0.1)
    err = standalone(w, "cam").depth[:339].astype(np.float64) - WALL_D
    assert abs(err.mean()) < 1e-3
    assert err.std() == pytest.approx(0.05, rel=0.02)
    assert (np.abs(err) < 0.05).mean() == pytest.approx(0.6827, abs=0.01)


def test_same_seed_same_frames_other_seed_other_noise(tmp_path):
    def frames(seed: int) -> list[np.ndarray]:
        w = make_world(tmp_path, WALL + CUBE + rgbd(noise=0.01), seed=seed, name=f"s{seed}.world.xml")
        out = []
        for _ in range(3):
            w.run(0.1)
            obs = standalone(w, "cam")
            out += [obs.depth, obs.rgb]
        return out

    a, b, c = frames(7), frames(7), frames(8)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], c[0])  # the noise differs
    np.testing.assert_array_equal(a[1], c[1])  # the colour does not
    assert not np.array_equal(a[0], a[2])  # and it is fresh at every frame


# ---------------------------------------------------------------------------------------------- moving things
def robot(name: str, x: float, y: float, yaw_deg: float, sensors: str = "") -> str:
    """The default differential robot: red chassis x in [−0.4, 0.6] m, y in [−0.5, 0.5] m (front corners chamfered to
    ±0.3 m at x = 0.6), z in [0.05, 0.6] m; wheels 0.4 m × 0.2 m at (0, ±0.5)."""
    return (f'<vehicle name="{name}"><dynamics class="differential"/>'
            f'<init_pose>{x} {y} {yaw_deg}</init_pose>{sensors}</vehicle>\n')


def test_vehicle_seen_by_a_camera_on_another_vehicle(tmp_path):
    """r1 carries an RGB-D camera inside its own chassis (x = 0.5, z = 0.3): it sees out through its own body (closed
    solids are culled from inside) and finds r2, 5 m ahead and facing it, at its chassis front: world x = 5 − 0.6,
    i.e. depth 4.4 − 0.5 = 3.9 m, red under ambient light 1; a second camera looks at r2's left wheel from the side."""
    side_cam = rgbd("side", pose="5 -3 0.2 90 0 0")  # standalone, at y = −3 looking along +y at r2's wheel
    w = make_world(tmp_path, lights(ambient=1.0) + robot("r1", 0, 0, 0, rgbd(pose="0.5 0 0.3 0 0 0"))
                   + robot("r2", 5, 0, 180) + side_cam)
    w.run(0.1)
    obs = w.vehicles["r1"].sensors["cam"].last
    assert isinstance(obs, RgbdObservation)
    assert obs.depth[240, 320] == pytest.approx(3.9, abs=0.01)
    assert tuple(obs.rgb[240, 320]) == (255, 0, 0)
    # the front face spans y in [−0.3, 0.3] at depth 3.9: columns 320 ± 500·0.3/3.9 = ±38.5 px
    row = obs.depth[240]
    assert np.abs(row[283:358] - 3.9).max() <= 0.01
    # from the side: r2 (yaw 180°) has its left wheel (vehicle y = +0.5) at world y = −0.5; its outer face at
    # y = −0.6 is 2.4 m from the camera, dark grey (#323232) at the wheel centre height (0.2 m)
    side = standalone(w, "side")
    assert side.depth[240, 320] == pytest.approx(2.4, abs=0.01)
    assert tuple(side.rgb[240, 320]) == (0x32, 0x32, 0x32)


def test_camera_pose_follows_the_vehicle_pitch_on_a_slope(tmp_path):
    """A four-wheel robot on a 10 % slope (rising along +x) is pitched nose-up by atan(0.1); its camera (1 m above the
    reference point, looking ahead) reads the wall at x = 3.99 at the depth predicted from the vehicle pose of the
    physics."""
    slope = ('<element class="elevation_map"><elevation_data_matrix>[0 0; 0.5 0.5; 1 1]</elevation_data_matrix>'
             "<resolution>5</resolution></element>\n")
    wall = ('<element class="vertical_plane"><x0>4</x0><y0>-10</y0><x1>4</x1><y1>10</y1><z>-5</z><height>20</height>'
            "<thickness>0.02</thickness></element>\n")
    w = make_world(tmp_path, slope + wall + robot("r1", 0, 0, 0, rgbd(pose="0 0 1 0 0 0")).replace(
        '"differential"', '"differential_4_wheels"'))
    w.run(0.1)
    x, y, z, yaw, pitch, roll = w.vehicles["r1"].pose
    assert pitch == pytest.approx(-math.atan(0.1), abs=1e-3)
    assert z == pytest.approx(0.5, abs=5e-3)
    r = rotation(yaw, pitch, roll)
    cam = np.array([x, y, z]) + r @ np.array([0.0, 0.0, 1.0])
    axis = r @ np.array([1.0, 0.0, 0.0])  # the optical axis = the sensor's x
    depth = w.vehicles["r1"].sensors["cam"].last.depth
    assert depth[240, 320] == pytest.approx((3.99 - cam[0]) / axis[0], abs=1e-3)
    # off-axis pixel: optical z of the point where its ray meets the wall
    k = w.vehicles["r1"].sensors["cam"].depth_intrinsics
    d_opt = np.array([(100 - k.cx) / k.fx, (50 - k.cy) / k.fy, 1.0])
    d_world = r @ np.array([[0, 0, 1], [-1, 0, 0], [0, -1, 0]], dtype=float) @ d_opt
    assert depth[50, 100] == pytest.approx((3.99 - cam[0]) / d_world[0], abs=1e-3)


def test_teleported_block_is_seen_at_its_new_place(tmp_path):
    """A dynamic block moved by World.set_pose between samples is rendered at its new pose."""
    blk = box("b", -0.25, -2, 0.25, 2, 0.0, 3.0, static=False).replace("<init_pose>0 0 0</init_pose>",
                                                                          "<init_pose>5 0 0</init_pose>")
    w = make_world(tmp_path, blk + rgbd())
    w.run(0.1)
    assert standalone(w, "cam").depth[240, 320] == pytest.approx(4.75, abs=2e-3)
    w.set_pose("b", 7.0, 0.0, 0.0)
    w.run(0.1)
    assert standalone(w, "cam").depth[240, 320] == pytest.approx(6.75, abs=2e-3)


# ---------------------------------------------------------------------------------------------- OpenGL imports
def _run_python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=REPO,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_opengl_is_imported_only_when_a_camera_renders(tmp_path):
    """A world without cameras runs without importing OpenGL; a world with a camera loads without it and imports it
    at its first sample."""
    (tmp_path / "lidar.world.xml").write_text(
        '<mvsim_world version="1.0">' + WALL + robot("r1", 0, 0, 0, '<sensor class="laser" name="l"/>')
        + '<sensor class="imu" name="imu"/></mvsim_world>')
    (tmp_path / "cam.world.xml").write_text('<mvsim_world version="1.0">' + WALL + rgbd() + "</mvsim_world>")
    code = f"""
        import sys
        import mvsim_core as mv
        gl = lambda: any(m == "OpenGL" or m.startswith("OpenGL.") for m in sys.modules)
        w = mv.load_world({str(tmp_path / "lidar.world.xml")!r})
        w.run(0.3)
        a = gl()
        w = mv.load_world({str(tmp_path / "cam.world.xml")!r})
        w.step()
        b = gl()
        w.run(0.1)
        print(a, b, gl(), w.sensors["cam"].last is not None)
    """
    assert _run_python(code) == "False False True True"


def test_empty_world_shows_background_and_no_depth(tmp_path):
    w = make_world(tmp_path, rgbd() + camera())
    w.run(0.1)
    obs, img = standalone(w, "cam"), standalone(w, "rgb")
    assert (obs.depth == 0).all() and (obs.rgb == 153).all() and (img.rgb == 153).all()
