"""Objects at run time from Python (issue 16, Deliver 5): 20 cubes spawned in one batch in front of a robot driving
forward stop it and appear in its scan; removing them clears the scan. Plus the batch API (``World.batch``,
``spawn_many``, ``remove_many``, ``spawned_names``, ``remove_spawned``): one physics rebuild, all or nothing.

World (written below): r1, the default differential robot (front at x + 0.6 m; twist_pid) at the origin facing +x,
with a noiseless 2D lidar 0.2 m ahead of its reference point (181 rays over 180°, 1° apart: ray 90 looks along +x);
a static wall whose face is at x = 8 m (y from -5 to 5). The cubes: 0.3 m, static, their centres at x = 3.15 m and
y = -2.85 + 0.3 k (k = 0..19), so together a 6 m wide barrier whose face is at x = 3.0 m.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import mvsim_core as mv
from mvsim_core.errors import MvsimError, WorldFileError
from mvsim_core.world import Spawn

WORLD = """<mvsim_world version="1.0">
  <simul_timestep>0.005</simul_timestep>
  <vehicle name="r1">
    <init_pose>0 0 0</init_pose>
    <dynamics class="differential"><controller class="twist_pid"/></dynamics>
    <sensor class="laser" name="laser1">
      <pose_3d>0.2 0 0.3 0 0 0</pose_3d> <nrays>181</nrays> <fov_degrees>180</fov_degrees>
      <sensor_period>0.05</sensor_period> <max_range>20</max_range>
      <range_std_noise>0</range_std_noise> <angle_std_noise_deg>0</angle_std_noise_deg>
    </sensor>
  </vehicle>
  <block name="far_wall">
    <static>true</static> <init_pose>8 0 0</init_pose> <zmin>0</zmin> <zmax>1</zmax>
    <shape><pt>0 -5</pt><pt>0.5 -5</pt><pt>0.5 5</pt><pt>0 5</pt></shape>
  </block>
</mvsim_world>
"""
CUBE = ("<block><static>true</static><color>#ff8000</color><zmin>0</zmin><zmax>0.3</zmax>"
        "<shape><pt>-0.15 -0.15</pt><pt>0.15 -0.15</pt><pt>0.15 0.15</pt><pt>-0.15 0.15</pt></shape></block>")
CUBE_FACE = 3.0  # m: x of the barrier's face
FAR_WALL = 8.0  # m: x of the far wall's face
LIDAR_X = 0.2  # m: the lidar ahead of r1's reference point
FRONT = 0.6  # m: r1's front ahead of its reference point
SPEED = 0.5  # m/s


def cube_spawns(prefix: str = "cube") -> list[Spawn]:
    """The 20 cubes of the barrier (module docstring)."""
    return [Spawn(CUBE, name=f"{prefix}{k}", pose=(CUBE_FACE + 0.15, -2.85 + 0.3 * k, 0.0)) for k in range(20)]


@pytest.fixture
def world(tmp_path: Path) -> mv.World:
    p = tmp_path / "runtime.world.xml"
    p.write_text(WORLD)
    w = mv.load_world(p, seed=1)
    w.start()
    return w


def drive(w: mv.World, seconds: float, vx: float = SPEED) -> None:
    v = w.vehicles["r1"]
    for _ in range(int(round(seconds / w.timestep))):
        v.set_twist(vx, 0.0, 0.0)
        w.step()


def scan_ranges(w: mv.World) -> list[float]:
    """The latest scan, ranges by ray (m)."""
    return [float(r) for r in w.vehicles["r1"].sensors["laser1"].last.ranges]


def expected_range(w: mv.World, ray: int, face_x: float) -> float:
    """What ray ``ray`` (degrees from -90) of r1's lidar reads of a plane x = ``face_x``, from r1's pose now."""
    x, y, _, yaw, _, _ = w.vehicles["r1"].pose
    a = yaw + math.radians(ray - 90)
    lx = x + LIDAR_X * math.cos(yaw)
    return (face_x - lx) / math.cos(a)


def test_twenty_cubes_spawned_while_driving_stop_the_robot_and_appear_in_its_scan(world: mv.World) -> None:
    drive(world, 0.5)  # moving: x ≈ 0.25 m
    x0 = world.vehicles["r1"].pose[0]
    assert 0.1 < x0 < 0.4
    assert scan_ranges(world)[90] == pytest.approx(expected_range(world, 90, FAR_WALL), abs=0.02)

    rebuilds = world.rebuilds
    cubes = world.spawn_many(cube_spawns())
    assert world.rebuilds == rebuilds + 1  # one rebuild for the 20
    assert [c.name for c in cubes] == [f"cube{k}" for k in range(20)] == world.spawned_names()

    world.run(0.05)  # one lidar period later: the barrier is in the scan
    r = scan_ranges(world)
    for ray in (60, 75, 90, 105, 120):  # ±30°: every ray meets a cube face (|y| < 1.6 m at x = 3)
        assert r[ray] == pytest.approx(expected_range(world, ray, CUBE_FACE), abs=0.02), ray

    drive(world, 8.0)  # unhindered it would be at x ≈ 4.3 m
    v = world.vehicles["r1"]
    x = v.pose[0]
    assert x + FRONT == pytest.approx(CUBE_FACE, abs=0.03)  # its front against the barrier
    assert x + FRONT < CUBE_FACE + 0.01
    assert all(c.pose[:2] == pytest.approx((CUBE_FACE + 0.15, -2.85 + 0.3 * k)) for k, c in enumerate(cubes))
    assert scan_ranges(world)[90] == pytest.approx(CUBE_FACE - x - LIDAR_X, abs=0.02)

    drive(world, 0.5, vx=0.0)  # stand still
    removed = world.remove_spawned()
    assert [c.name for c in removed] == [f"cube{k}" for k in range(20)]
    assert world.spawned_names() == [] and "cube0" not in world.blocks
    world.run(0.05)
    assert scan_ranges(world)[90] == pytest.approx(expected_range(world, 90, FAR_WALL), abs=0.02)
    drive(world, 2.0)  # and the way is free again
    assert world.vehicles["r1"].pose[0] > x + 0.5


def test_spawn_many_is_all_or_nothing(world: mv.World) -> None:
    spawns = cube_spawns()
    spawns[5] = Spawn("<block><zmax>oops</zmax></block>", name="bad")
    rebuilds = world.rebuilds
    with pytest.raises(WorldFileError, match="zmax") as e:
        world.spawn_many(spawns)
    assert e.value.item == 5  # type: ignore[attr-defined]
    assert world.spawned_names() == [] and "cube0" not in world.blocks
    assert world.rebuilds <= rebuilds + 1

    spawns = cube_spawns()
    spawns[3] = Spawn(CUBE, name="cube1", pose=(5.0, 0.0, 0.0))  # a name given twice
    with pytest.raises(MvsimError, match="cannot spawn 'cube1': another vehicle, block or actor already has"):
        world.spawn_many(spawns)
    assert world.spawned_names() == []
    with pytest.raises(MvsimError, match="cannot spawn 'far_wall'"):
        world.spawn_many([Spawn(CUBE, name="far_wall", pose=(5.0, 0.0, 0.0))])
    world.run(0.05)  # and it goes on
    assert scan_ranges(world)[90] == pytest.approx(FAR_WALL - LIDAR_X, abs=0.02)


def test_remove_many_checks_every_name_first(world: mv.World) -> None:
    world.spawn_many(cube_spawns())
    with pytest.raises(MvsimError, match=r"cannot remove 'nope': no such object; nothing removed"):
        world.remove_many(["cube0", "nope"])
    with pytest.raises(MvsimError, match=r"cannot remove 'cube1' twice"):
        world.remove_many(["cube1", "cube1"])
    assert len(world.spawned_names()) == 20
    rebuilds = world.rebuilds
    assert [o.name for o in world.remove_many(["cube0", "cube19"])] == ["cube0", "cube19"]
    assert world.rebuilds == rebuilds + 1 and len(world.spawned_names()) == 18


def test_a_batch_rebuilds_once_and_refuses_to_step(world: mv.World) -> None:
    rebuilds = world.rebuilds
    with world.batch():
        world.spawn(CUBE, name="a", pose=(5.0, 0.0, 0.0))
        with world.batch():  # nested: joins the outer one
            world.spawn(CUBE, name="b", pose=(5.0, 1.0, 0.0))
        world.remove("a")
        world.spawn(CUBE, name="a", pose=(4.0, 0.0, 0.0))  # the same name again: a new object, at its new place
        with pytest.raises(MvsimError, match="inside world.batch"):
            world.step()
        assert world.rebuilds == rebuilds
    assert world.rebuilds == rebuilds + 1
    assert world.spawned_names() == ["b", "a"]
    world.run(0.05)
    assert scan_ranges(world)[90] == pytest.approx(4.0 - 0.15 - LIDAR_X, abs=0.02)
    assert world.physics.bodies.block_bodies["a"].position[0] == pytest.approx(4.0)
    world.reset()  # spawned objects go at a reset of the objects
    assert world.spawned_names() == []
