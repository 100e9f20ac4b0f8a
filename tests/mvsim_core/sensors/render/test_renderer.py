"""The offscreen renderer (mvsim_core.sensors.render.renderer, gl_context): exact depth near and far, pixel
positions, culling, textures, lighting, points, worlds far from the origin, threads, and the error when no context
can be made."""

from __future__ import annotations

import math
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.geometry.rotations import rotation
from mvsim_core.sensors.camera import PinholeModel
from mvsim_core.sensors.render import gl_context
from mvsim_core.sensors.render.camera_model import OPTICAL_WRT_BODY, project, world_to_optical
from mvsim_core.sensors.render.scene_geometry import SceneGeometry

REPO = Path(__file__).resolve().parents[4]
K = PinholeModel(320, 240, 160.0, 120.0, 250.0, 250.0)


@pytest.fixture(scope="module", autouse=True)
def offscreen_gl() -> None:
    ok, why = gl_context.available()
    if not ok:
        pytest.skip(f"no offscreen OpenGL context on this machine: {why}")


def renderer_of(tmp_path: Path, body: str, name: str = "r.world.xml"):
    from mvsim_core.sensors.render.renderer import SceneRenderer

    path = tmp_path / name
    path.write_text(f'<mvsim_world version="1.0">{body}</mvsim_world>')
    world = mv.load_world(path)
    return SceneRenderer(SceneGeometry(world)), world


def box(name: str, x0: float, y0: float, x1: float, y1: float, z0: float, z1: float, color: str = "#3366cc") -> str:
    pts = "".join(f"<pt>{x} {y}</pt>" for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1)))
    return (f'<block name="{name}"><static>true</static><init_pose>0 0 0</init_pose><zmin>{z0}</zmin>'
            f"<zmax>{z1}</zmax><color>{color}</color><shape>{pts}</shape></block>")


FLAT = "<lights><light_ambient>1</light_ambient></lights>"


def look_along_x(z: float = 1.0, x: float = 0.0, y: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    return OPTICAL_WRT_BODY, np.array([x, y, z])


def test_far_walls_keep_exact_depth(tmp_path):
    """Reversed-Z float depth ordering and a float depth attachment: a wall 800 m away reads 800 m to float32
    precision (the classic 24-bit depth buffer would be off by metres there)."""
    r, _ = renderer_of(tmp_path, box("far", 800, -2000, 801, 2000, -500, 500) + box("near", 3, 5, 4, 6, 0, 2))
    f = r.render(*look_along_x(), K, 0.01, 1e4)
    assert f.depth.dtype == np.float32 and f.rgb.dtype == np.uint8
    assert np.abs(f.depth - 800.0).max() <= 800.0 * 1e-6
    assert r.reversed_z  # Mesa has GL 4.5


def test_depth_only_and_colour_only_frames(tmp_path):
    r, _ = renderer_of(tmp_path, box("w", 5, -20, 6, 20, -10, 10))
    f = r.render(*look_along_x(), K, 0.1, 100, rgb=False)
    assert f.rgb is None and f.depth.shape == (240, 320)
    f = r.render(*look_along_x(), K, 0.1, 100, depth=False)
    assert f.depth is None and f.rgb.shape == (240, 320, 3)
    # beyond the far plane nothing is drawn: background colour, depth 0
    f = r.render(*look_along_x(), K, 0.1, 4.0)
    from mvsim_core.sensors.render.renderer import BACKGROUND

    assert (f.depth == 0).all() and (f.rgb == BACKGROUND).all()


def test_a_point_projects_to_its_pixel_from_any_pose(tmp_path):
    """A 4 cm magenta cube seen from a rolled, pitched, yawed camera: its pixels are centred on the pinhole
    projection of its centre (±1 px) and read its depth."""
    c = np.array([4.0, 1.0, 2.0])
    r, _ = renderer_of(tmp_path, FLAT + box("dot", c[0] - 0.02, c[1] - 0.02, c[0] + 0.02, c[1] + 0.02,
                                            c[2] - 0.02, c[2] + 0.02, "#ff00ff"))
    pos = np.array([0.5, -0.5, 1.2])
    rot = rotation(0.45, -0.15, 0.3) @ OPTICAL_WRT_BODY
    f = r.render(rot, pos, K, 0.01, 100)
    u, v, z = project(world_to_optical(c, rot, pos), K)
    rows, cols = np.nonzero(np.all(f.rgb == (255, 0, 255), axis=-1))
    assert len(rows) >= 4
    assert cols.mean() == pytest.approx(u[0], abs=1.0) and rows.mean() == pytest.approx(v[0], abs=1.0)
    assert f.depth[rows, cols] == pytest.approx(z[0], abs=0.03)


def test_camera_inside_a_closed_solid_sees_out(tmp_path):
    """Closed solids are culled from inside: a camera in a box sees the wall beyond it; a camera outside sees the
    box's near face."""
    r, _ = renderer_of(tmp_path, box("shell", -1, -1, 1, 1, 0, 2, "#00ff00") + box("w", 5, -20, 6, 20, -10, 10))
    inside = r.render(*look_along_x(1.0), K, 0.01, 100)
    assert inside.depth[120, 160] == pytest.approx(5.0, abs=1e-4)
    outside = r.render(*look_along_x(1.0, x=-3.0), K, 0.01, 100)
    assert outside.depth[120, 160] == pytest.approx(2.0, abs=1e-4)


def test_lighting_of_three_faces(tmp_path):
    """A box seen from above and aside under the default light: the top (+z), the −x face and the −y face each
    show c · min(1, a + (1 − a)·max(0, n·l))."""
    from mvsim_core.sensors.render.renderer import Lighting

    r, world = renderer_of(tmp_path, "<lights><light_azimuth_deg>200</light_azimuth_deg>"
                                     "<light_elevation_deg>35</light_elevation_deg><light_ambient>0.25</light_ambient>"
                                     "</lights>" + box("b", 0, 0, 2, 2, 0, 2, "#c08040"))
    light = Lighting.from_world(world)
    pos = np.array([-3.0, -3.0, 5.0])
    target = np.array([1.0, 1.0, 1.0])
    fwd = (target - pos) / np.linalg.norm(target - pos)
    right = np.cross(fwd, [0, 0, 1.0])
    right /= np.linalg.norm(right)
    rot = np.column_stack([right, np.cross(fwd, right), fwd])
    f = r.render(rot, pos, K, 0.01, 100)
    for point, normal in (((1.0, 1.0, 2.0), (0, 0, 1)), ((0.0, 1.0, 1.0), (-1, 0, 0)), ((1.0, 0.0, 1.0), (0, -1, 0))):
        u, v, _ = project(world_to_optical(np.array(point) + 0.01 * np.array(normal), rot, pos), K)
        got = f.rgb[int(round(v[0])), int(round(u[0]))].astype(float)
        want = light.shade((0xC0, 0x80, 0x40), normal)
        assert np.abs(got - want).max() <= 1.0, (normal, got, want)
    assert light.direction @ np.array([-1.0, 0, 0]) > 0.5  # the −x face is lit, the others are not fully


def test_textured_floor_seen_from_above(tmp_path):
    """A 2×2 black/white checker tiled every 1 m on the floor, seen straight down from 3 m: each 0.5 m square shows
    its texel (the picture's bottom-left texel at the tile's (x, y) minimum; tiles repeat)."""
    from PIL import Image

    Image.fromarray(np.array([[0, 255], [255, 0]], dtype=np.uint8)).save(tmp_path / "checker.png")
    r, _ = renderer_of(tmp_path, FLAT + '<element class="horizontal_plane"><x_min>-10</x_min><x_max>10</x_max>'
                                        "<y_min>-10</y_min><y_max>10</y_max><texture>checker.png</texture>"
                                        "<texture_size_x>1</texture_size_x><texture_size_y>1</texture_size_y>"
                                        "</element>")
    rot = rotation(0.0, math.pi / 2, 0.0) @ OPTICAL_WRT_BODY  # looking down, image up = world +x
    pos = np.array([0.0, 0.0, 3.0])
    f = r.render(rot, pos, K, 0.01, 100)
    # picture rows top→bottom: [black, white], [white, black]; bottom-left texel (white) covers x, y in (0, .5)
    for (x, y), want in (((0.25, 0.25), 255), ((0.75, 0.75), 255), ((0.25, 0.75), 0), ((0.75, 0.25), 0),
                         ((-0.25, -0.25), 255), ((-0.75, -0.25), 0), ((1.25, 1.25), 255)):
        u, v, z = project(world_to_optical(np.array([x, y, 0.0]), rot, pos), K)
        assert z[0] == pytest.approx(3.0)
        px = f.rgb[int(round(v[0])), int(round(u[0]))]
        assert np.abs(px.astype(int) - want).max() <= 30, ((x, y), px)
    assert f.depth[120, 160] == pytest.approx(3.0, abs=1e-5)


def test_point_cloud_points_are_drawn(tmp_path):
    (tmp_path / "pts.txt").write_text("6 0 1\n")
    r, _ = renderer_of(tmp_path, '<element class="pointcloud"><file_txt_3d>pts.txt</file_txt_3d>'
                                 "<points_size>5</points_size></element>")
    f = r.render(*look_along_x(), K, 0.01, 100)
    ys, xs = np.nonzero(f.depth > 0)
    assert 4 <= len(ys) <= 36
    assert xs.mean() == pytest.approx(160, abs=1) and ys.mean() == pytest.approx(120, abs=1)
    assert f.depth[ys, xs] == pytest.approx(6.0, abs=1e-5)
    assert (f.rgb[ys, xs] == (0, 0, 255)).all()


def test_world_far_from_the_origin_keeps_millimetres(tmp_path):
    """UTM-like coordinates (x ≈ 500 km): vertices are stored relative to the scene origin, so a wall 5 m ahead reads
    5 m to the millimetre (float32 world coordinates would be off by several centimetres)."""
    x0 = 512345.678
    r, _ = renderer_of(tmp_path, box("w", x0 + 5, 4e6 - 20, x0 + 6, 4e6 + 20, -10, 10))
    assert r.scene.origin[0] == pytest.approx(x0 + 5.5, abs=1.0)
    f = r.render(OPTICAL_WRT_BODY, np.array([x0, 4e6, 1.0]), K, 0.1, 100)
    assert np.abs(f.depth - 5.0).max() <= 1e-3


def test_rendering_from_another_thread(tmp_path):
    r, _ = renderer_of(tmp_path, box("w", 5, -20, 6, 20, -10, 10))
    here = r.render(*look_along_x(), K, 0.1, 100)
    out = {}
    th = threading.Thread(target=lambda: out.setdefault("f", r.render(*look_along_x(), K, 0.1, 100)))
    th.start()
    th.join()
    np.testing.assert_array_equal(out["f"].depth, here.depth)
    np.testing.assert_array_equal(out["f"].rgb, here.rgb)


def test_context_is_shared_and_reentrant():
    ctx = gl_context.get_context()
    assert gl_context.get_context() is ctx
    assert ctx.backend in ("egl", "osmesa") and ctx.version >= (3, 3)
    with ctx.bound(), ctx.bound():
        from OpenGL import GL

        assert GL.glGetIntegerv(GL.GL_MAJOR_VERSION) >= 3


def test_closed_renderer_frees_its_objects(tmp_path):
    r, _ = renderer_of(tmp_path, box("w", 5, -20, 6, 20, -10, 10))
    r.render(*look_along_x(), K, 0.1, 100)
    r.close()
    assert not r.ctx.garbage  # freed at once


def test_no_context_error_names_what_to_install():
    """A process that imported OpenGL for another platform (GLX) before any camera rendered gets a clear error."""
    code = ("import os\nos.environ['PYOPENGL_PLATFORM'] = 'glx'\n"
            "try:\n    import OpenGL.platform\nexcept Exception:\n    print('no glx'); raise SystemExit\n"
            "from mvsim_core.sensors.render.gl_context import RenderUnavailableError, get_context\n"
            "from mvsim_core.errors import MvsimError\n"
            "try:\n    get_context()\nexcept RenderUnavailableError as e:\n"
            "    assert isinstance(e, MvsimError)\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr
    if out.stdout.strip() == "no glx":
        pytest.skip("PyOpenGL's GLX platform cannot load here")
    msg = out.stdout
    assert "glx" in msg and "PYOPENGL_PLATFORM=egl" in msg
    assert "libegl-mesa0" in msg and "libosmesa6" in msg and "PyOpenGL" in msg


def test_image_larger_than_the_renderer_can_draw_is_refused(tmp_path):
    """Cameras are checked at load (16384 px); a larger image asked of the renderer directly (the viewer sizes its
    frames from the window) is a RenderUnavailableError naming the limit, not a raw GLError."""
    from OpenGL import GL

    from mvsim_core.sensors.render.renderer import RenderUnavailableError

    r, _ = renderer_of(tmp_path, box("b", 3, -1, 4, 1, 0, 2))
    with r.ctx.bound():
        limit = min(int(GL.glGetIntegerv(GL.GL_MAX_RENDERBUFFER_SIZE)),
                    *(int(v) for v in np.atleast_1d(GL.glGetIntegerv(GL.GL_MAX_VIEWPORT_DIMS))))
    assert limit >= 8192
    with pytest.raises(RenderUnavailableError) as e:
        r.render(*look_along_x(), PinholeModel(1_000_000_000, 480, 320.0, 240.0, 500.0, 500.0), 0.01, 100.0)
    assert str(e.value) == (f"cannot render a 1000000000×480 image: this OpenGL renderer draws at most "
                            f"{limit}×{limit} pixels")
    f = r.render(*look_along_x(), K, 0.01, 100.0)  # the renderer still works
    assert f.depth[120, 160] == pytest.approx(3.0, abs=1e-4)


def test_texture_larger_than_the_renderer_holds_is_thinned(tmp_path):
    """A texture image wider than GL_MAX_TEXTURE_SIZE is drawn from every k-th texel instead of failing the upload
    (an OpenGL error out of the first frame)."""
    from OpenGL import GL
    from PIL import Image

    px = np.zeros((2, 40000), np.uint8)
    px[:, : 20000] = 255  # left half white, right half black
    Image.fromarray(px).save(tmp_path / "wide.png")
    r, _ = renderer_of(tmp_path, FLAT + '<element class="horizontal_plane"><x_min>-10</x_min><x_max>10</x_max>'
                                        "<y_min>-10</y_min><y_max>10</y_max><texture>wide.png</texture>"
                                        "<texture_size_x>2</texture_size_x><texture_size_y>2</texture_size_y>"
                                        "</element>")
    with r.ctx.bound():
        assert int(GL.glGetIntegerv(GL.GL_MAX_TEXTURE_SIZE)) < 40000
    rot = rotation(0.0, math.pi / 2, 0.0) @ OPTICAL_WRT_BODY  # looking down, image up = world +x
    f = r.render(rot, np.array([0.0, 0.0, 3.0]), K, 0.01, 100)
    for (x, y), want in (((0.5, 0.5), 255), ((-0.5, 0.5), 0)):  # u = x / 2 (repeated): white below 0.5
        u, v, _ = project(world_to_optical(np.array([x, y, 0.0]), rot, np.array([0.0, 0.0, 3.0])), K)
        assert np.abs(f.rgb[int(round(v[0])), int(round(u[0]))].astype(int) - want).max() <= 30, (x, y)


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_camera_with_a_pose_that_is_not_finite_sees_nothing(tmp_path, bad):
    """A NaN or infinite camera pose (a sensor pose set from Python, say) gives the background and depth 0 — never a
    NaN depth — without handing OpenGL a NaN matrix."""
    from mvsim_core.sensors.render.renderer import BACKGROUND

    r, _ = renderer_of(tmp_path, box("b", 3, -1, 4, 1, 0, 2))
    rot, pos = look_along_x()

    def no_gl(*args: object, **kwargs: object) -> None:
        raise AssertionError("OpenGL was asked to draw with a pose that is not finite")

    r.render_matrices = no_gl  # type: ignore[method-assign]
    for rr, pp in ((rot, np.array([0.0, bad, 1.0])), (np.where(np.eye(3) > 0, bad, rot), pos)):
        f = r.render(rr, pp, K, 0.01, 100.0)
        assert f.rgb.shape == (240, 320, 3) and (f.rgb == np.array(BACKGROUND, np.uint8)).all()
        assert f.depth.shape == (240, 320) and not f.depth.any()
        assert r.render(rr, pp, K, 0.01, 100.0, rgb=False).rgb is None
    del r.render_matrices
    assert r.render(rot, pos, K, 0.01, 100.0).depth[120, 160] == pytest.approx(3.0, abs=1e-4)
