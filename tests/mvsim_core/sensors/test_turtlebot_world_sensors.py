"""Upstream's turtlebot world, seen by the 3D-traced sensors as by the 2D lidar and the physics (issue 38).

Its ``<walls>`` used to reach the ``raytrace_3d`` lidar, the 3D lidars and the cameras 0.5 m too high (they were
lifted onto the column at their pose origin), and the columns at the wall corners 1 m too high (onto the walls):
the turtlebot's own laser returned 87–94 of 360 rays, and a depth camera 0.3 m up saw the floor behind the walls.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.geometry.rotations import rotation

SPOT = (0.55, -0.55)
"""Where the standalone camera stands (m): free floor between the white columns, 2.05 m from the wall's face."""


def turtlebot_world(worlds_dir: Path, tmp_path: Path, extra: str = "", on_robot: str = "") -> mv.World:
    """Upstream's file with ``extra`` (standalone sensors) and ``on_robot`` (sensors on r1) added, read from a copy
    beside a link to its definitions."""
    (tmp_path / "definitions").symlink_to(worlds_dir / "definitions")
    (tmp_path / "tutorial").mkdir()
    text = (worlds_dir / "mvsim_tutorial" / "demo_turtlebot_world.world.xml").read_text()
    path = tmp_path / "tutorial" / "turtlebot.world.xml"
    robot = '<vehicle name="r1" class="turtlebot3_burger">'
    assert robot in text
    text = text.replace(robot, robot + on_robot).replace("</mvsim_world>", extra + "\n</mvsim_world>")
    path.write_text(text)
    return mv.load_world(path, seed=0)


def laser(name: str, raytrace_3d: bool, z: float = 0.3) -> str:
    """A noiseless 360-ray lidar ``z`` m above the robot's origin."""
    return (f'<sensor class="laser" name="{name}"><pose_3d>0 0 {z} 0 0 0</pose_3d><fov_degrees>360</fov_degrees>'
            f'<nrays>360</nrays><range_std_noise>0</range_std_noise><angle_std_noise_deg>0</angle_std_noise_deg>'
            f'<max_range>30</max_range><raytrace_3d>{str(raytrace_3d).lower()}</raytrace_3d>'
            f'<sensor_period>0.1</sensor_period></sensor>')


def test_raytrace_3d_lidar_sees_the_room_as_the_2d_lidar(worlds_dir: Path, tmp_path: Path) -> None:
    """Both lidars on the robot, 0.3 m up: the room's walls and columns all reach the floor."""
    w = turtlebot_world(worlds_dir, tmp_path, on_robot=laser("flat", False) + laser("traced", True))
    w.run(0.1)
    flat, traced = w.vehicles["r1"].sensors["flat"].last, w.vehicles["r1"].sensors["traced"].last
    assert flat.valid.sum() == 360  # a closed room
    assert traced.valid.sum() == 360
    agree = np.abs(traced.ranges - flat.ranges) <= 0.02
    assert agree.sum() >= 355
    assert agree.sum() == 360  # in fact all of them


def test_raytrace_3d_lidar_on_the_turtlebot_sees_the_room(worlds_dir: Path) -> None:
    """The robot's own laser (rplidar-a2 with raytrace_3d, 0.171 m up): every ray meets a wall or a column."""
    w = mv.load_world(worlds_dir / "mvsim_tutorial" / "demo_turtlebot_world.world.xml", seed=0)
    w.run(0.2)
    scan = w.vehicles["r1"].sensors["laser1"].last
    assert scan.valid.all()
    assert scan.ranges.max() < 6.0  # the room is 7 m across at most


@pytest.mark.usefixtures("offscreen_gl")
def test_depth_camera_sees_the_wall_down_to_the_floor(worlds_dir: Path, tmp_path: Path) -> None:
    """A depth camera 0.3 m up looking at the wall 2.05 m away (its face at y = -2.6; ±16.7° wide, it sees neither
    columns nor corners): every pixel's point lies on the floor before the wall or on the wall from z = 0 up, none
    beyond it (the top rows look over the wall)."""
    x, y = SPOT
    cam = (f'<sensor class="rgbd_camera" name="cam"><pose_3d>{x} {y} 0.3 -90 0 0</pose_3d><sensor_period>0.1'
           f'</sensor_period><depth_noise_sigma>0</depth_noise_sigma><sense_rgb>false</sense_rgb>'
           f'<depth_ncols>300</depth_ncols><depth_cx>150</depth_cx></sensor>')
    w = turtlebot_world(worlds_dir, tmp_path, extra=cam)
    w.run(0.1)
    obs = w.sensors["cam"].last
    h, wd = obs.depth.shape
    u, v = np.meshgrid(np.arange(wd), np.arange(h))
    z = obs.depth.astype(np.float64)
    seen = z > 0
    top_row = obs.cy - obs.fy * (1.0 - 0.3) / 2.05  # the wall's top edge, 0.7 m above the camera
    assert not seen[int(top_row) + 2:].__invert__().any()  # below it, every pixel returns
    assert seen[:int(top_row) - 1].sum() == 0  # above it, the sky over the wall
    # optical frame (x right, y down, z forward) -> the depth sensor's frame (x forward) -> world
    opt = np.stack([(u - obs.cx) / obs.fx * z, (v - obs.cy) / obs.fy * z, z], axis=-1)[seen]
    sensor = np.column_stack([opt[:, 2], -opt[:, 0], -opt[:, 1]])
    pts = sensor @ rotation(-np.pi / 2, 0.0, 0.0).T + (x, y, 0.3)
    assert pts[:, 1].min() >= -2.6 - 0.01  # nothing beyond the wall's face
    on_wall = pts[:, 1] < -2.6 + 0.005
    assert pts[on_wall, 2].min() <= 0.01  # the wall reaches the floor
    assert np.abs(pts[~on_wall, 2]).max() <= 0.01  # the rest is floor
