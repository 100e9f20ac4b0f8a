"""Keyframe animation (reference §1.13; :mod:`mvsim_core.dynamics.keyframes`): the interpolation and composition
with the initial pose, blocks moved by their keyframes as kinematic bodies (seen by lidars, pushing what they meet),
and upstream's ``demo_jackal.world.xml``, whose animated block moves along its keyframes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.dynamics.keyframes import KeyframeTracks
from mvsim_core.sensors.lidar2d import LaserScan
from mvsim_core.xml.simulable import Keyframe

D = math.radians


def world(tmp_path: Path, body: str) -> mv.World:
    p = tmp_path / "kf.world.xml"
    p.write_text('<mvsim_world version="1.0"><simul_timestep>0.005</simul_timestep>\n'
                 '<element class="horizontal_plane"><x_min>-20</x_min><y_min>-20</y_min><x_max>20</x_max>'
                 f'<y_max>20</y_max></element>\n{body}\n</mvsim_world>\n')
    return mv.load_world(p)


def square_block(name: str, pose: str, frames: str, half: float = 0.25, extra: str = "") -> str:
    pts = "".join(f"<pt>{sx * half} {sy * half}</pt>" for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1)))
    return (f'<block name="{name}"><init_pose>{pose}</init_pose><mass>5</mass><zmax>1</zmax><shape>{pts}</shape>'
            f'{extra}<animation type="keyframes">{frames}</animation></block>')


# ---------------------------------------------------------------------------------------------- the interpolation
def test_tracks_interpolate_linearly_and_by_slerp_and_compose_with_the_initial_pose():
    flat = [Keyframe(0.0, (0, 0, 0, 0, 0, 0)), Keyframe(2.0, (2, 0, 0, D(90), 0, 0)),
            Keyframe(4.0, (2, 2, 0, D(-170), 0, 0))]
    lift = [Keyframe(1.0, (0, 0, 0, 0, 0, 0)), Keyframe(3.0, (0, 0, 1.0, 0, D(40), 0))]
    tr = KeyframeTracks([((0, 0, 0, 0, 0, 0), flat), ((1, 1, 0.5, D(90), 0, 0), lift)])
    p = tr.poses(1.0).copy()
    assert p[0].tolist() == pytest.approx([1, 0, 0, D(45), 0, 0], abs=1e-12)
    assert p[1].tolist() == pytest.approx([1, 1, 0.5, D(90), 0, 0], abs=1e-12)  # the first keyframe: no change
    p = tr.poses(3.0).copy()
    # slerp takes the shorter way from 90° to -170° (through 180°): halfway is 140°
    assert p[0].tolist() == pytest.approx([2, 1, 0, D(140), 0, 0], abs=1e-12)
    # the keyframe pitches about its own y axis after the base turned by 90°; z rises above the base's 0.5
    assert tr.poses(2.5)[1].tolist() == pytest.approx([1, 1, 1.25, D(90), D(30), 0], abs=1e-12)
    # t = 3 s is the lifting track's period: it starts over, at its first keyframe
    assert p[1].tolist() == pytest.approx([1, 1, 0.5, D(90), 0, 0], abs=1e-12)
    p = tr.poses(2.0).copy()
    assert p[1].tolist() == pytest.approx([1, 1, 1.0, D(90), D(20), 0], abs=1e-12)
    # the period is the last keyframe time: fmod(t, t_last)
    assert tr.poses(5.0)[0].tolist() == pytest.approx(tr.poses(1.0)[0].tolist(), abs=1e-12)
    assert tr.poses(3.5)[1].tolist() == pytest.approx(tr.poses(0.5)[1].tolist(), abs=1e-12)
    assert tr.wraps(3.995, 4.0).tolist() == [True, False] and tr.wraps(2.99, 3.0).tolist() == [False, True]
    # a shifted base: the keyframe offsets turn with it
    x, y, z, yaw, pitch, roll = KeyframeTracks([((1, 1, 0, D(90), 0, 0), flat)]).poses(2.0)[0]
    assert (x, y, z, abs(yaw), pitch, roll) == pytest.approx((1, 3, 0, math.pi, 0, 0), abs=1e-12)


# ---------------------------------------------------------------------------------------------- blocks in a world
FRAMES = "<time_pose>0 0 0 0</time_pose><time_pose>2 2 0 0</time_pose><time_pose>4 2 2 90</time_pose>"


def test_a_block_follows_its_keyframes_and_starts_over_after_its_period(tmp_path):
    """The acceptance track: 0 s at the origin, 2 s at (2, 0), 4 s at (2, 2)."""
    w = world(tmp_path, square_block("mover", "0 0 0", FRAMES))
    b = w.blocks["mover"]
    assert b.is_animated and not b.is_static
    body = w.start().physics.bodies.block_bodies["mover"]
    for t, want in ((1.0, (1, 0, 0)), (3.0, (2, 1, D(45))), (4.0, (0, 0, 0)), (5.0, (1, 0, 0))):
        w.run(t - w.time)
        x, y, _, yaw, _, _ = b.pose
        assert (x, y, yaw) == pytest.approx(want, abs=1e-9), t
        # nothing dynamic in this world: Box2D lets the body sleep where it was at the first step
        assert not body.awake and (body.position[0], body.position[1]) == pytest.approx((0, 0), abs=1e-5)


def test_a_sleeping_mover_wakes_on_its_track_when_a_body_comes_near(tmp_path):
    """Kinematic bodies far (> 0.5 m beyond both bounding circles) from every dynamic body sleep; a robot arriving
    near one wakes it where its track has it, and from then on Box2D drives it along the track."""
    robot = ('<vehicle name="r1"><dynamics class="differential"/><init_pose>-10 -10 0</init_pose></vehicle>')
    w = world(tmp_path, square_block("mover", "0 0 0", FRAMES) + robot)
    body = w.start().physics.bodies.block_bodies["mover"]
    w.run(1.0)
    assert not body.awake and body.position[0] == pytest.approx(0.0, abs=1e-6)
    w.set_pose("r1", 1.0, -1.2, 0.0)  # 1.2 m from the block's centre: within reach
    w.run(0.005)
    x, y = w.blocks["mover"].pose[:2]
    assert body.awake and (body.position[0], body.position[1]) == pytest.approx((x, y), abs=1e-5)
    w.run(1.5 - w.time)
    assert body.awake and (body.position[0], body.position[1]) == pytest.approx((1.5, 0.0), abs=1e-5)
    w.set_pose("r1", -10.0, -10.0, 0.0)
    w.run(0.01)
    assert not body.awake


def test_a_lidar_reads_the_moving_distance(tmp_path):
    """A robot with a 2D lidar at the origin, facing +x; the block (0.5 m square) slides from x = 3 to 5 and back
    every 4 s: the ray straight ahead reads x − 0.25 − the lidar's x, within 2 cm, as the block moves."""
    lidar = ('<sensor class="laser" name="laser1"><pose>0 0 0</pose><height>0.4</height><fov_degrees>180'
             '</fov_degrees><nrays>181</nrays><max_range>20</max_range><sensor_period>0.1</sensor_period>'
             '<range_std_noise>0</range_std_noise><angle_std_noise_deg>0</angle_std_noise_deg></sensor>')
    w = world(tmp_path, '<vehicle name="r1"><dynamics class="differential"/><init_pose>0 0 0</init_pose>'
                        f'{lidar}</vehicle>' + square_block(
                            "mover", "3 0 0", "<time_pose>0 0 0 0</time_pose><time_pose>2 2 0 0</time_pose>"
                                              "<time_pose>4 0 0 0</time_pose>"))
    seen = []
    for t in (1.0, 2.0, 3.0, 3.5):
        w.run(t - w.time)
        scan = w.vehicles["r1"].sensors["laser1"].last
        assert isinstance(scan, LaserScan) and scan.stamp == pytest.approx(t)
        ahead = int(np.argmin(np.abs(scan.angles)))
        x_block = w.blocks["mover"].pose[0]
        assert scan.ranges[ahead] == pytest.approx(x_block - 0.25 - scan.sensor_pose[0], abs=0.02)
        seen.append(float(scan.ranges[ahead]))
    assert seen == pytest.approx([3.75, 4.75, 3.75, 3.25], abs=0.02)


def test_an_animated_block_pushes_a_dynamic_block_out_of_its_way(tmp_path):
    crate = ('<block name="crate"><init_pose>1.5 0 0</init_pose><mass>2</mass><zmax>0.5</zmax><shape>'
             '<pt>-0.2 -0.2</pt><pt>0.2 -0.2</pt><pt>0.2 0.2</pt><pt>-0.2 0.2</pt></shape></block>')
    w = world(tmp_path, square_block("mover", "0 0 0", FRAMES) + crate)
    w.run(2.0)
    assert w.blocks["mover"].pose[0] == pytest.approx(2.0)
    assert w.blocks["crate"].pose[0] > 2.0 + 0.25 + 0.2 - 0.01  # pushed ahead of the mover's front face


def test_upstream_demo_jackal_moves_its_animated_block_along_its_keyframes(shared_dir):
    """``demo_jackal.world.xml``: a block at init_pose (5, 1, 0°) with keyframes (t x y yaw°) 0: (-1, 0, 30),
    2: (-1, -1, -10), 4: (1, -1, -50), 4.5: (1, 1, 40), 5: (-1, 0, 30): at each keyframe time it is at init ⊕ keyframe,
    and it moves between them."""
    w = mv.load_world(shared_dir / "worlds" / "mvsim_tutorial" / "demo_jackal.world.xml")
    animated = [b for b in w.blocks.values() if b.is_animated]
    assert len(animated) == 1
    b = animated[0]
    w.start()
    start = b.pose
    assert start[:2] == pytest.approx((4, 1), abs=1e-9)  # at t = 0 already where its first keyframe says
    path = []
    for t, (x, y, yaw) in ((2.0, (4, 0, -10)), (4.0, (6, 0, -50)), (4.5, (6, 2, 40)), (5.0, (4, 1, 30))):
        while w.time < t - 1e-9:
            w.step()
            path.append(b.pose[:2])
        assert b.pose[0] == pytest.approx(x, abs=1e-9) and b.pose[1] == pytest.approx(y, abs=1e-9)
        assert b.pose[3] == pytest.approx(math.radians(yaw), abs=1e-9)
    d = np.hypot(*(np.array(path) - np.array(start[:2])).T)
    assert d.max() > 2.0  # it travelled (4.5 s: 2.2 m from where it started)


def test_an_intangible_block_follows_its_keyframes_and_lidars_see_it(tmp_path):
    """No body, but a track: its pose moves (ground for nobody, seen by sensors as the other intangible blocks)."""
    frames = '<time_pose>0 0 0 0</time_pose><time_pose>2 2 0 0</time_pose><time_pose>4 2 2 0</time_pose>'
    w = world(tmp_path, square_block("ghost", "1 0 0", frames, extra="<intangible>true</intangible>"))
    w.start()
    assert "ghost" not in w.physics.bodies.block_bodies
    while w.time < 1.0 - 1e-9:
        w.step()
    assert w.blocks["ghost"].pose[:2] == pytest.approx((2.0, 0.0), abs=1e-9)
    while w.time < 3.0 - 1e-9:
        w.step()
    assert w.blocks["ghost"].pose[:2] == pytest.approx((3.0, 1.0), abs=1e-9)


def test_a_vehicle_follows_its_keyframes_rolls_its_wheels_and_pushes(tmp_path):
    """A differential robot with the acceptance track: at (1, 0) at 1 s and (2, 1) at 3 s (Box2D's float32), its
    twist and odometry those of the track, its wheels rolling at v / r; a crate in its way at (2, 1.6) is pushed."""
    crate = ('<block name="crate"><init_pose>2 1.6 0</init_pose><mass>2</mass><zmax>0.3</zmax>'
             '<shape><pt>-0.15 -0.15</pt><pt>0.15 -0.15</pt><pt>0.15 0.15</pt><pt>-0.15 0.15</pt></shape></block>')
    w = world(tmp_path, '<vehicle name="r1"><dynamics class="differential"/><init_pose>0 0 0</init_pose>'
                        f'<animation type="keyframes">{FRAMES}</animation></vehicle>' + crate)
    v = w.vehicles["r1"]
    assert v.is_animated
    w.run(1.0)
    x, y, _, yaw, _, _ = v.pose
    assert (x, y, yaw) == pytest.approx((1.0, 0.0, 0.0), abs=1e-5)
    assert v.twist == pytest.approx((1.0, 0.0, 0.0), abs=1e-3)  # 1 m/s along x
    wh = w.physics.wheels
    assert wh.omega[0] * wh.radius[0] == pytest.approx(1.0, abs=1e-3)  # rolling, no slip
    assert wh.omega[1] * wh.radius[1] == pytest.approx(1.0, abs=1e-3)
    w.run(2.0)
    x, y, _, yaw, _, _ = v.pose
    assert (x, y, yaw) == pytest.approx((2.0, 1.0, D(45)), abs=1e-5)
    assert v.twist[2] == pytest.approx(D(45), abs=1e-3)
    w.run(1.0 - 0.005)
    assert w.blocks["crate"].pose[1] > 1.6 + 0.2  # pushed along +y
    odo = v.odometry
    assert math.hypot(odo[0], odo[1]) == pytest.approx(math.hypot(2.0, 2.0), rel=0.05)
