"""`mvsim launch` with its window (on a private Xvfb display) and without: screenshots, keyboard teleop seen from
another process over ZMQ, Esc to quit, and headless runs that never import OpenGL or glfw."""

from __future__ import annotations

import math
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from mvsim_core.comms import Client
from mvsim_core.comms.proto import SrvGetPose_pb2, SrvGetPoseAnswer_pb2

REPO = Path(__file__).resolve().parents[2]
WORLD = REPO / "tests" / "mvsim_core" / "gui" / "data" / "viewer.world.xml"
RED, GREEN, YELLOW = (0xD0, 0x20, 0x20), (0x20, 0xC0, 0x20), (0xFF, 0xFF, 0x00)


def _env(display: str | None) -> dict[str, str]:
    env = {**os.environ, "MVSIM_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    env.pop("WAYLAND_DISPLAY", None)
    if display is None:
        env.pop("DISPLAY", None)
    else:
        env["DISPLAY"] = display
    return env


def mvsim(*args: str, display: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mvsim_core.cli", *args], capture_output=True, text=True, cwd=REPO,
                          env=_env(display), timeout=timeout)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scene_pixels(img: np.ndarray) -> list[tuple[int, int, int]]:
    """Colours at the projections of r1's roof, box1's top and the car's roof (below the status panel)."""
    import mvsim_core as mv
    from mvsim_core.gui.orbit_camera import OrbitCamera

    world = mv.load_world(WORLD)
    cam = OrbitCamera.from_gui(world.gui)
    out = []
    for p in ((0.0, 0.0, 0.5), (3.0, 0.0, 0.6), (-2.5, -3.0, 0.8)):
        x, y = cam.project(p, img.shape[1], img.shape[0])
        out.append(tuple(int(c) for c in img[int(y), int(x)]))
    return out


@pytest.mark.parametrize("with_display", [True, False], ids=["window", "offscreen"])
def test_screenshot_after_duration(request, tmp_path, with_display):
    """With a display the window draws the screenshot; without one it is rendered offscreen: the same scene."""
    display = request.getfixturevalue("xvfb") if with_display else None
    if not with_display:
        request.getfixturevalue("offscreen_gl")
    out = tmp_path / "shot.png"
    r = mvsim("launch", str(WORLD), "--duration", "0.3", "--realtime-factor", "0", "--no-server", "--screenshot",
              str(out), display=display)
    assert r.returncode == 0, r.stderr
    assert f"mvsim: screenshot saved to {out}" in r.stdout
    assert "Traceback" not in r.stderr and "cannot open the 3D viewer" not in r.stderr
    img = np.asarray(Image.open(out).convert("RGB"))
    assert img.shape == (480, 640, 3)
    assert scene_pixels(img) == [RED, GREEN, YELLOW]
    assert (img[10:60, 10:200].max(axis=2) > 240).any()  # the status panel's text


def test_screenshot_right_after_loading_when_headless(tmp_path, offscreen_gl):
    out = tmp_path / "s.png"
    r = mvsim("launch", str(WORLD), "--headless", "--no-server", "--screenshot", str(out))
    assert r.returncode == 0, r.stderr
    assert scene_pixels(np.asarray(Image.open(out).convert("RGB"))) == [RED, GREEN, YELLOW]


def test_unwritable_screenshot_is_a_user_error(tmp_path, offscreen_gl):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = mvsim("launch", str(WORLD), "--headless", "--no-server", "--screenshot", str(blocker / "s.png"))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert r.stderr.strip().startswith(f"cannot save the screenshot to {blocker / 's.png'}: ")


@pytest.mark.parametrize("args,display", [(["--headless"], "xvfb"), ([], None)], ids=["--headless", "no-display"])
def test_headless_runs_never_import_opengl_or_glfw(request, args, display):
    disp = request.getfixturevalue(display) if display else None
    code = ("import sys\nfrom mvsim_core.cli import main\n"
            f"rc = main(['launch', {str(WORLD)!r}, '--duration', '0.3', '--realtime-factor', '0', '--no-server', "
            f"*{args!r}])\n"
            "print('RESULT', rc, 'OpenGL' in sys.modules, 'glfw' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=_env(disp),
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "RESULT 0 False False"


def _get(client: Client, name: str):
    return client.call_service("get_pose", SrvGetPose_pb2.SrvGetPose(objectId=name),
                               SrvGetPoseAnswer_pb2.SrvGetPoseAnswer)


def test_keyboard_teleop_in_the_window_moves_the_robot_seen_over_zmq(xvfb, xdotool):
    """`mvsim launch` in a window: keys 2 w w a (select r2, +0.2 m/s, +2 °/s) typed into it make r2 (ideal twist
    controller) move at exactly that twist, as another process reads over ZMQ; Esc then quits with status 0."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "mvsim_core.cli", "launch", str(WORLD), "--port", str(port)],
                            cwd=REPO, env=_env(xvfb), text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        found = subprocess.run([xdotool, "search", "--sync", "--name", "^mvsim: viewer.world.xml$"],
                               capture_output=True, text=True, timeout=300, env=_env(xvfb))
        assert found.returncode == 0, (found.stderr, proc.poll())
        wid = found.stdout.split()[0]
        with Client("teleop-probe", port=port, timeout=60.0) as c:
            end = time.monotonic() + 300
            while not c.service_info("get_pose").success:  # the window may come up before the World registers
                assert proc.poll() is None and time.monotonic() < end, "the World did not offer get_pose"
                time.sleep(0.05)
            assert _get(c, "r2").twist.vx == 0.0
            keys = subprocess.run([xdotool, "windowfocus", "--sync", wid, "key", "--delay", "20", "2", "w", "w", "a"],
                                  capture_output=True, text=True, timeout=60, env=_env(xvfb))
            assert keys.returncode == 0, keys.stderr
            end = time.monotonic() + 60
            while (a := _get(c, "r2")).twist.wz == 0.0:
                assert time.monotonic() < end, "the keys did not reach the simulation"
                time.sleep(0.05)
            assert (a.twist.vx, a.twist.vy, a.twist.wz) == pytest.approx((0.2, 0.0, math.radians(2.0)), abs=1e-6)
            assert _get(c, "r1").twist.vx == 0.0
        esc = subprocess.run([xdotool, "windowfocus", "--sync", wid, "key", "Escape"], capture_output=True,
                             text=True, timeout=60, env=_env(xvfb))
        assert esc.returncode == 0, esc.stderr
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
