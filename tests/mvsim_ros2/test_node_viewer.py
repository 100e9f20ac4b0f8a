"""``mvsim_node`` with its 3D viewer (``headless:=false``) on a private Xvfb display: the window opens, keys typed
into it drive the selected vehicle (seen on its ground-truth topic), and closing it with Esc stops the node cleanly.
World: ``tests/mvsim_core/gui/data/viewer.world.xml`` (r1, r2: ideal twist controllers; three vehicles, so topics
are namespaced)."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ros_harness import FIRST_MESSAGE_TIMEOUT, TIMEOUT, NodeProcess, Odometry, Probe

WORLD = Path(__file__).resolve().parents[1] / "mvsim_core" / "gui" / "data" / "viewer.world.xml"

pytestmark = pytest.mark.slow


def _xdo(xdotool: str, display: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    r = subprocess.run([xdotool, *args], capture_output=True, text=True, timeout=timeout,
                       env={"DISPLAY": display, "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    return r


def test_viewer_window_keys_drive_the_robot_and_esc_stops_the_node(ros_context: Any, ros_domain: int,
                                                                   tmp_path: Path, xvfb: str, xdotool: str) -> None:
    node = NodeProcess(WORLD, {"headless": False, "gui_refresh_period": 40.0}, ros_domain, tmp_path / "node.log",
                       env={"DISPLAY": xvfb})
    probe = Probe(ros_context, "probe_viewer")
    probe.watch = node
    try:
        truth = probe.subscribe(Odometry, "/r2/base_pose_ground_truth")
        wid = _xdo(xdotool, xvfb, "search", "--sync", "--name", "^mvsim: viewer.world.xml$",
                   timeout=FIRST_MESSAGE_TIMEOUT).stdout.split()[0]
        first = probe.next_message(truth, timeout=FIRST_MESSAGE_TIMEOUT, what="r2 ground truth")
        assert first.twist.twist.linear.x == 0.0
        _xdo(xdotool, xvfb, "windowfocus", "--sync", wid, "key", "--delay", "20", "2", "w", "w", "a")
        moving = probe.next_message(truth, lambda m: m.twist.twist.angular.z > 0.0, timeout=TIMEOUT,
                                    what="r2 turning after the keys")
        assert moving.twist.twist.linear.x == pytest.approx(0.2, abs=1e-6)
        assert moving.twist.twist.angular.z == pytest.approx(math.radians(2.0), abs=1e-6)
        _xdo(xdotool, xvfb, "windowfocus", "--sync", wid, "key", "Escape")
        assert node.proc.wait(60) == 0, node.log()[-3000:]
        assert "viewer window closed: stopping" in node.log()
    finally:
        probe.close()
        node.stop()
