"""Render modes: rgb_array pictures drawn offscreen (the robot seen where it is, the goal marker, the picture size),
human mode in a window on a virtual display, and no picture without a render mode."""

from __future__ import annotations

import numpy as np
from gym_checks import IDS

from mvsim_core.gui.orbit_camera import OrbitCamera


def robot_pixel(env, img: np.ndarray, z: float = 0.25) -> np.ndarray:
    """The colour (int RGB) where the robot's roof centre projects."""
    u = env.unwrapped
    x, y, *_ = u.agent.vehicle.pose
    col, row = OrbitCamera.from_gui(u.world.gui).project((x, y, z), img.shape[1], img.shape[0])
    return img[int(round(row)), int(round(col))].astype(int)


def bluish(rgb: np.ndarray) -> bool:
    return bool(rgb[2] > 150 and rgb[0] < 100)  # the robot's chassis, #2060d0 shaded


def test_rgb_array_shows_the_robot_where_it_is(make, offscreen_gl):
    env = make(IDS[0], render_mode="rgb_array")
    env.reset(seed=0)
    before = env.render()
    assert before.shape == (480, 480, 3) and before.dtype == np.uint8  # the world's <gui> win_w x win_h
    assert bluish(robot_pixel(env, before))
    start = env.unwrapped.agent.vehicle.pose[:2]
    for _ in range(15):
        env.step(np.float32([1.0, 0.0]))
    moved = np.hypot(*(np.subtract(env.unwrapped.agent.vehicle.pose[:2], start)))
    after = env.render()
    assert moved > 0.5 and bluish(robot_pixel(env, after))
    changed = (before != after).any(axis=2)
    assert changed.sum() > 500  # the robot, its lidar's rays and points


def test_goal_marker_is_drawn(make, offscreen_gl):
    env = make(IDS[0], render_mode="rgb_array", render_size=(320, 240))
    env.reset(seed=1)
    img = env.render()
    assert img.shape == (240, 320, 3)
    gx, gy = env.unwrapped.task.goals["robot"]
    col, row = OrbitCamera.from_gui(env.unwrapped.world.gui).project((gx, gy, 0.01), 320, 240)
    r, g, b = img[int(round(row)), int(round(col))].astype(int)
    assert g > 120 and r < 80 and b < 100  # the marker's green (#20c040)


def test_no_render_mode_no_picture(make):
    env = make(IDS[0])
    env.reset(seed=0)
    assert env.render() is None


def test_human_mode_draws_in_a_window(make, offscreen_gl, display):
    env = make(IDS[0], render_mode="human")
    env.reset(seed=0)
    for _ in range(3):
        env.step(np.float32([0.5, 0.0]))
    renderer = env.unwrapped._renderer
    assert renderer._viewer is not None and renderer._viewer.frames == 4  # the reset's frame and one per step
    env.close()
    env.close()  # twice is fine
    assert env.unwrapped._renderer is None
