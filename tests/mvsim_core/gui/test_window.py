"""The viewer window on a virtual display (Xvfb): what the screen shows, and real key and mouse events (xdotool)."""

from __future__ import annotations

import math
import subprocess
import time
from collections.abc import Callable

import numpy as np
import pytest
from PIL import ImageGrab
from viewer_checks import RED, H, W, check_scene_colours

import mvsim_core as mv
from mvsim_core.gui.teleop import OMEGA_STEP, RAW_ACKERMANN_TORQUE_STEP, TWIST_STEP


@pytest.fixture
def world(viewer_world_file):
    w = mv.load_world(viewer_world_file)
    w.run(0.1)
    return w


@pytest.fixture
def viewer(world, display):
    from mvsim_core.gui.window import Viewer

    v = Viewer(world)
    yield v
    v.close()


def frames_until(viewer, condition: Callable[[], bool], timeout: float = 20.0) -> None:
    """Draw frames (handling the window's events) until ``condition()`` holds."""
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "the window events did not arrive in time"
        viewer.frame(1.0)


def xdo(xdotool: str, viewer, *args: str) -> None:
    """Run xdotool on the viewer's X11 window (focused first)."""
    wid = str(viewer.glfw.get_x11_window(viewer.window))
    cmd = [xdotool, "windowfocus", "--sync", wid, *[a.replace("WID", wid) for a in args]]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr


def test_the_display_shows_the_scene(viewer, world, display):
    """The pixels on the (virtual) screen, grabbed from the X server, hold each object's colour where the camera
    projects it; they are the very pixels an offscreen render of the same view gives."""
    from mvsim_core.gui.world_view import WorldView

    viewer.show_status = False
    assert viewer.frame(1.0)
    x0, y0 = viewer.glfw.get_window_pos(viewer.window)
    screen = np.asarray(ImageGrab.grab(xdisplay=display).convert("RGB"))
    shown = screen[y0:y0 + H, x0:x0 + W]
    check_scene_colours(shown, viewer.camera, world)
    offscreen = WorldView(world, viewer.camera)
    try:
        same = (offscreen.draw(W, H, read=True) == shown).all(axis=2).mean()
    finally:
        offscreen.close()
    assert same > 0.999


def test_status_panel_and_screenshot(viewer, world, tmp_path):
    from PIL import Image

    assert viewer.frame(2.5)
    out = viewer.screenshot(tmp_path / "s.png")
    img = np.asarray(Image.open(out).convert("RGB"))
    assert img.shape == (H, W, 3)
    r1 = world.vehicles["r1"].pose
    x, y = viewer.camera.project((r1[0], r1[1], 0.5), W, H)
    assert tuple(img[int(y), int(x)]) == RED
    h, w = viewer.view.panel.image(viewer.status()).shape[:2]
    assert viewer.status()[0].startswith("t = 0.10 s | real-time factor 2.50")
    panel = img[8:8 + h, 8:8 + w].astype(int)
    assert (panel.max(axis=2) > 240).sum() > 50  # white text
    assert panel.mean() < 120  # on a dark panel


def test_scripted_keys_change_the_selected_vehicles_setpoint(viewer, world, xdotool):
    """2 selects r2; w w w: +0.3 m/s; a: +2 °/s; space stops; 3 selects the car (raw Ackermann): w: −1 N·m on each
    front wheel, a: 1° of steering. r1 is never touched."""
    r1, r2, car = (world.vehicles[n].controller for n in ("r1", "r2", "car"))
    viewer.frame(1.0)
    xdo(xdotool, viewer, "key", "--delay", "10", "2", "w", "w", "w", "a")
    frames_until(viewer, lambda: r2.setpoint.omega != 0.0)
    assert (r2.setpoint.vx, r2.setpoint.vy, r2.setpoint.omega) == pytest.approx((3 * TWIST_STEP, 0.0, OMEGA_STEP))
    assert (r1.setpoint.vx, r1.setpoint.omega) == (0.0, 0.0)
    assert viewer.teleop.vehicle.name == "r2"
    xdo(xdotool, viewer, "key", "space")
    frames_until(viewer, lambda: r2.setpoint.vx == 0.0)
    assert r2.setpoint.omega == 0.0
    xdo(xdotool, viewer, "key", "--delay", "10", "3", "w", "a")
    frames_until(viewer, lambda: car.steer_angle != 0.0)
    assert (car.torque_fl, car.torque_fr) == (-RAW_ACKERMANN_TORQUE_STEP, -RAW_ACKERMANN_TORQUE_STEP)
    assert car.steer_angle == pytest.approx(math.radians(1.0))
    world.run(0.2)
    assert world.vehicles["r2"].twist == pytest.approx((0.0, 0.0, 0.0), abs=1e-9)  # ideal controller, stopped


def test_view_keys_and_escape(viewer, xdotool):
    cam = viewer.camera
    viewer.frame(1.0)
    xdo(xdotool, viewer, "key", "--delay", "10", "1", "o", "f", "h")
    frames_until(viewer, lambda: not viewer.show_status)
    assert cam.ortho and cam.follow == "r1"
    xdo(xdotool, viewer, "key", "--delay", "10", "f", "o", "h")
    frames_until(viewer, lambda: viewer.show_status)
    assert not cam.ortho and cam.follow == ""
    xdo(xdotool, viewer, "key", "Escape")
    end = time.monotonic() + 20
    while viewer.frame(1.0):
        assert time.monotonic() < end, "Esc did not close the window"
    assert viewer.closed


def test_mouse_orbits_zooms_and_pans(viewer, xdotool):
    """Left drag 100 px to the right: azimuth −30° (0.3°/px); wheel up twice: distance / 1.1²; right drag 40 px
    down: the target moves away from the viewer along the ground and following stops."""
    cam = viewer.camera
    cam.follow = "r1"
    viewer.frame(1.0)
    az, dist, target = cam.azimuth, cam.distance, np.array(cam.target)
    xdo(xdotool, viewer, "mousemove", "--window", "WID", "300", "200", "mousedown", "1",
        "mousemove", "--window", "WID", "400", "200", "mouseup", "1")
    frames_until(viewer, lambda: cam.azimuth != az)
    assert cam.azimuth - az == pytest.approx(math.radians(-30.0))
    xdo(xdotool, viewer, "click", "4", "click", "4")
    frames_until(viewer, lambda: cam.distance < dist / 1.2)
    assert cam.distance == pytest.approx(dist / 1.1 ** 2)
    target = np.array(cam.target)
    xdo(xdotool, viewer, "mousemove", "--window", "WID", "300", "200", "mousedown", "3",
        "mousemove", "--window", "WID", "300", "240", "mouseup", "3")
    frames_until(viewer, lambda: cam.follow == "")
    moved = np.array(cam.target) - target
    away = -np.array([math.cos(cam.azimuth), math.sin(cam.azimuth), 0.0])  # from the eye towards the target
    assert moved @ away > 0 and abs(moved[2]) < 1e-12
    m_per_px = 2.0 * cam.distance * math.tan(0.5 * cam.fov) / H
    assert np.linalg.norm(moved) == pytest.approx(40 * m_per_px, rel=1e-6)


def test_pacing_yields_to_a_simulation_that_is_behind(viewer):
    """While the simulation keeps up, frames come every 1/refresh_fps (50 Hz in the test world); while it is
    behind, a frame that cost c seconds waits c / 10 % (between 1/refresh_fps and 0.5 s)."""
    assert viewer.interval(False) == pytest.approx(0.02)
    viewer.frame_cost = 0.01
    assert viewer.interval(True) == pytest.approx(0.1)
    viewer.frame_cost = 0.2
    assert viewer.interval(True) == pytest.approx(0.5)
    viewer.frame_cost = 0.0001
    assert viewer.interval(True) == pytest.approx(0.02)
    start = time.perf_counter()
    viewer.frame(1.0)  # frames are spaced from their starts
    assert not viewer.due(start + 0.001, False) and viewer.wait_time(start + 0.001, False) > 0.015
    later = time.perf_counter() + 0.5  # the longest interval after the frame's start, whatever the frame cost
    assert viewer.due(later, True) and viewer.wait_time(later, True) == 0.0


def test_no_display_is_a_clear_error(world, monkeypatch):
    from mvsim_core.gui.window import Viewer, ViewerUnavailableError

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(ViewerUnavailableError, match="no display to open a window on"):
        Viewer(world)


@pytest.mark.parametrize("order", ["camera first", "window first", "windows closed before the camera"])
def test_camera_sensors_and_windows_in_one_process(viewer_world_file, display, order):
    """The window's EGL context and the cameras' offscreen one live side by side in one process, in any order, and
    cameras go on rendering after the window is closed. cam1 (2 Hz) on r2 looks along +x at the floor."""
    import subprocess
    import sys

    code = f"""
import numpy as np, mvsim_core as mv
from mvsim_core.gui.window import Viewer
w = mv.load_world({str(viewer_world_file)!r})
order = {order!r}
images = []
def sample():
    w.run(0.5)
    images.append(w.vehicles["r2"].sensors["cam1"].last.rgb)
if order == "camera first":
    sample()
if order == "windows closed before the camera":  # glfw started and terminated twice
    for _ in range(2):
        v = Viewer(w)
        v.frame(1.0)
        v.close()
    sample()
v = Viewer(w)
v.frame(1.0)
sample()
v.frame(1.0)
v.close()
sample()
floor = np.array([0xC8, 0xC8, 0xC8])
print("RESULT", images[0].shape, all(bool((i == floor).all(axis=2).mean() > 0.2) for i in images),
      all(bool((i == images[0]).all()) for i in images))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == "RESULT (48, 64, 3) True True"


def test_offscreen_context_keeps_off_the_window_system(viewer_world_file, display):
    """After a window loaded PyOpenGL (and glfw initialised and terminated EGL on the X display), the cameras'
    context still comes from Mesa's surfaceless platform, never the X display glfw used (that mix failed about one
    run in four)."""
    import subprocess
    import sys

    code = f"""
import mvsim_core as mv
from mvsim_core.gui.window import Viewer
from mvsim_core.sensors.render.gl_context import get_context
w = mv.load_world({str(viewer_world_file)!r})
for _ in range(2):
    v = Viewer(w)
    v.frame(1.0)
    v.close()
print("RESULT", get_context().display)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == "RESULT surfaceless"
