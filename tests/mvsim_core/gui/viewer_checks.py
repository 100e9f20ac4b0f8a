"""Pixel checks shared by the viewer tests (the test world has full ambient light: faces show their exact colours)."""

from __future__ import annotations

import numpy as np

from mvsim_core.gui.orbit_camera import OrbitCamera
from mvsim_core.sensors.render.renderer import BACKGROUND

RED = (0xD0, 0x20, 0x20)
GREEN = (0x20, 0xC0, 0x20)
YELLOW = (0xFF, 0xFF, 0x00)
FLOOR = (0xC8, 0xC8, 0xC8)
W, H = 640, 480


def pixel(img: np.ndarray, cam: OrbitCamera, point) -> tuple[int, int, int]:
    """The colour at the pixel where ``point`` (world, m) is drawn."""
    x, y = cam.project(point, img.shape[1], img.shape[0])
    return tuple(int(c) for c in img[int(y), int(x)])


def check_scene_colours(img: np.ndarray, cam: OrbitCamera, world) -> None:
    """r1's roof, box1's top, the car's roof and the floor at their projected pixels; background off the floor."""
    assert img.shape == (H, W, 3)
    r1 = world.vehicles["r1"].pose
    assert pixel(img, cam, (r1[0], r1[1], 0.5)) == RED
    assert pixel(img, cam, (3.0, 0.0, 0.6)) == GREEN
    car = world.vehicles["car"].pose
    assert pixel(img, cam, (car[0] + 0.5, car[1], 0.8)) == YELLOW
    assert pixel(img, cam, (5.0, 5.0, 0.0)) == FLOOR
    off = cam.project((2.0, 11.0, 0.0), W, H)  # on z = 0 but beyond the floor's edge: nothing drawn there
    assert off is not None and 0 <= off[0] < W and 0 <= off[1] < H
    assert tuple(int(c) for c in img[int(off[1]), int(off[0])]) == BACKGROUND
