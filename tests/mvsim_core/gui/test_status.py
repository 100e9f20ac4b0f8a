"""The status overlay: its lines and their picture."""

from __future__ import annotations

import math

import numpy as np

import mvsim_core as mv
from mvsim_core.gui.status import PANEL_BACKGROUND, TextPanel, status_lines
from mvsim_core.gui.teleop import Teleop


def test_lines_name_time_rate_vehicle_twist_controller_and_collision(viewer_world_file):
    w = mv.load_world(viewer_world_file)
    t = Teleop(w)
    w.vehicles["r1"].set_twist(0.5, 0.0, math.radians(10))
    w.run(0.5)
    lines = status_lines(w, t, 0.987, 29.6, follow="r1")
    assert lines[0] == "t = 0.50 s | real-time factor 0.99 | 30 fps | perspective, following r1"
    assert lines[1] == "vehicle 1/3: r1 [twist_ideal] vx=0.50 vy=0.00 m/s w=10.0 deg/s | collision: no"
    assert lines[2] == t.help_lines()[0]
    assert t.key("3")
    lines = status_lines(w, t, None, None, ortho=True)
    assert lines[0] == "t = 0.50 s | ortho"
    assert lines[1].startswith("vehicle 3/3: car [raw] ")
    assert lines[-1] == "selected car"


def test_collision_is_shown(viewer_world_file):
    w = mv.load_world(viewer_world_file)
    w.set_pose("r1", 2.2, 0.0, 0.0)  # the chassis (to x + 0.4) overlaps box1 (from x = 2.5)
    w.step()
    assert "collision: YES" in status_lines(w, Teleop(w), 1.0)[1]


def test_world_without_vehicles(tmp_path):
    (tmp_path / "w.xml").write_text('<mvsim_world version="1.0"></mvsim_world>')
    w = mv.load_world(tmp_path / "w.xml")
    assert status_lines(w, Teleop(w), 2.0) == [
        "t = 0.00 s | real-time factor 2.00 | perspective",
        "mouse: left orbit, right pan, wheel zoom | o ortho, h hide this, Esc quit"]


def test_panel_picture_is_cached_until_the_text_changes():
    p = TextPanel()
    a = p.image(["hello", "world"])
    v = p.version
    assert a.dtype == np.uint8 and a.ndim == 3 and a.shape[2] == 4
    assert tuple(a[0, 0]) == PANEL_BACKGROUND  # the corner is background, the text is white
    assert (a[..., :3] == 255).all(axis=2).any()
    assert p.image(["hello", "world"]) is a and p.version == v
    b = p.image(["hello", "world, longer"])
    assert p.version == v + 1 and b.shape[1] > a.shape[1] and b.shape[0] == a.shape[0]
    assert p.image([]).shape == (0, 0, 4)
