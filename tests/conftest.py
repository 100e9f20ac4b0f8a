"""Shared fixtures: the ../shared folder beside the checkout (upstream worlds, reference data), and a private virtual
display for window tests.

Window tests run on a virtual X server (Xvfb) started here on a free display number (``-displayfd``); they skip with
the reason when Xvfb is not installed (``make setup`` installs it where it runs as root)."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared"))

# tests never reach the network for remote models; upstream's model files come from the mirror in ../shared (issue 17),
# unpacked once into a cache beside the checkout (ignored by git) that outlives the session
os.environ.setdefault("MVSIM_OFFLINE", "1")
if (SHARED / "assets" / "mvsim-models").is_dir():
    os.environ.setdefault("MVSIM_ASSET_MIRROR", str(SHARED / "assets" / "mvsim-models"))
os.environ.setdefault("MVSIM_CACHE_DIR", str(REPO / ".cache" / "test-assets"))
# kernels built ahead of time (make setup) check every call's argument types here, in this process and the ones it
# starts: a call site that passes other dtypes or layouts than the build's fails its test instead of crashing
os.environ.setdefault("MVSIM_JIT", "check")


@pytest.fixture
def no_asset_mirror(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """As a user without the mirror: remote models come from nowhere but an empty cache (offline)."""
    monkeypatch.delenv("MVSIM_ASSET_MIRROR", raising=False)
    monkeypatch.setenv("MVSIM_CACHE_DIR", str(tmp_path / "empty-cache"))


@pytest.fixture(scope="session")
def repo_dir() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"shared data folder not found at {SHARED}; CI must provide ../shared")
        pytest.skip(f"shared data folder not found at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def worlds_dir(shared_dir: Path) -> Path:
    return shared_dir / "worlds"


def start_xvfb(width: int = 1600, height: int = 1000) -> tuple[subprocess.Popen, str]:
    """Start Xvfb on a free display; returns (process, ":N"). Skips the test when Xvfb is missing."""
    exe = shutil.which("Xvfb")
    if exe is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb; `make setup` does it as root): no display for the "
                    "viewer tests")
    r, w = os.pipe()
    proc = subprocess.Popen([exe, "-displayfd", str(w), "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp",
                             "-noreset"], pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(w)
    data = b""
    end = time.monotonic() + 30
    while not data.endswith(b"\n"):
        ready, _, _ = select.select([r], [], [], max(0.0, end - time.monotonic()))
        if not ready:
            proc.kill()
            os.close(r)
            raise AssertionError("Xvfb did not report its display within 30 s")
        chunk = os.read(r, 64)
        if not chunk:
            os.close(r)
            raise AssertionError(f"Xvfb exited: {proc.stderr.read().decode(errors='replace')[-500:]}")
        data += chunk
    os.close(r)
    return proc, ":" + data.decode().strip()


@pytest.fixture(scope="session")
def xvfb() -> Iterator[str]:
    """A private virtual display for the session (":N")."""
    proc, display = start_xvfb()
    yield display
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture
def display(xvfb: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """DISPLAY set to the session's Xvfb for this test (and no Wayland)."""
    monkeypatch.setenv("DISPLAY", xvfb)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    return xvfb


@pytest.fixture
def xdotool() -> str:
    exe = shutil.which("xdotool")
    if exe is None:
        pytest.skip("xdotool is not installed (apt-get install xdotool): cannot send real key and mouse events")
    return exe


@pytest.fixture(scope="session")
def offscreen_gl() -> str:
    """Skips unless an offscreen OpenGL context (Mesa EGL or OSMesa) can be had; returns its description."""
    from mvsim_core.sensors.render.gl_context import available

    ok, what = available()
    if not ok:
        pytest.skip(what)
    return what
