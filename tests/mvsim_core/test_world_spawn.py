"""Run-time objects: ``World.spawn`` (XML text read as in world files, or a built object), ``World.remove``, and
setting an object's pose and velocity while running (``set_pose``, ``set_velocity``, ``velocity``).

World (written below): r1, a twist_ideal robot at the origin facing +x with a noiseless 2D lidar 0.2 m ahead of its
reference point (181 rays over 180°: the middle ray looks along +x); r2, a twist_pid robot at (0, -5); a class
``bot`` (differential, twist_ideal) and a block class ``crate`` (static 1 m cube, frame at its centre); a dynamic
block box1 at (-4, 3).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import mvsim_core as mv
from mvsim_core.errors import MvsimError, WorldFileError

WORLD = """<mvsim_world version="1.0">
  <simul_timestep>0.005</simul_timestep>
  <vehicle:class name="bot">
    <dynamics class="differential"><controller class="twist_ideal"/></dynamics>
    <sensor class="laser" name="scan"><sensor_period>0.1</sensor_period><range_std_noise>0</range_std_noise>
      <angle_std_noise_deg>0</angle_std_noise_deg></sensor>
  </vehicle:class>
  <block:class name="crate">
    <static>true</static>
    <shape><pt>-0.5 -0.5</pt><pt>0.5 -0.5</pt><pt>0.5 0.5</pt><pt>-0.5 0.5</pt></shape>
    <zmin>0</zmin><zmax>1</zmax>
  </block:class>
  <vehicle name="r1">
    <init_pose>0 0 0</init_pose>
    <dynamics class="differential"><controller class="twist_ideal"/></dynamics>
    <sensor class="laser" name="laser1">
      <pose_3d>0.2 0 0.3 0 0 0</pose_3d> <nrays>181</nrays> <fov_degrees>180</fov_degrees>
      <sensor_period>0.05</sensor_period> <max_range>20</max_range>
      <range_std_noise>0</range_std_noise> <angle_std_noise_deg>0</angle_std_noise_deg>
    </sensor>
  </vehicle>
  <vehicle name="r2">
    <init_pose>0 -5 0</init_pose>
    <dynamics class="differential">
      <controller class="twist_pid"><KP>10</KP><KI>2</KI><max_torque>20</max_torque></controller>
    </dynamics>
  </vehicle>
  <block name="box1">
    <mass>5</mass> <init_pose>-4 3 0</init_pose>
    <shape><pt>-0.2 -0.2</pt><pt>0.2 -0.2</pt><pt>0.2 0.2</pt><pt>-0.2 0.2</pt></shape>
  </block>
</mvsim_world>
"""
LIDAR_X = 0.2  # m: the lidar ahead of r1's reference point


@pytest.fixture
def world_file(tmp_path: Path) -> Path:
    p = tmp_path / "spawn.world.xml"
    p.write_text(WORLD)
    return p


@pytest.fixture
def world(world_file: Path) -> mv.World:
    w = mv.load_world(world_file, seed=1)
    w.start()
    return w


def centre_range(w: mv.World, after: float = 0.05) -> float:
    """Run ``after`` s (one lidar period) and return r1's middle ray (along its +x)."""
    w.run(after)
    scan = w.vehicles["r1"].sensors["laser1"].last
    return float(scan.ranges[len(scan.ranges) // 2])


def test_a_spawned_block_is_seen_by_the_lidar_where_it_was_put(world: mv.World) -> None:
    assert centre_range(world) == pytest.approx(20.0)  # nothing ahead
    b = world.spawn('<block class="crate"/>', name="c1", pose=(4.0, 0.0, 0.3))
    assert world.blocks["c1"] is b and b.name == "c1" and b.is_static
    assert b.pose == (4.0, 0.0, 0.0, 0.3, 0.0, 0.0)
    # the ray along +x meets the crate's near face, turned by 0.3 rad: 0.5 / cos(0.3) m before its centre
    assert centre_range(world) == pytest.approx(4.0 - 0.5 / math.cos(0.3) - LIDAR_X, abs=2e-3)


def test_set_pose_moves_a_block_where_the_lidar_then_sees_it(world: mv.World) -> None:
    world.spawn('<block class="crate" name="c1"><init_pose>4 0 0</init_pose></block>')
    assert centre_range(world) == pytest.approx(4.0 - 0.5 - LIDAR_X, abs=2e-3)
    world.set_pose("c1", 7.0, 0.0, 0.0)
    assert world.blocks["c1"].pose[:2] == (7.0, 0.0)
    assert centre_range(world) == pytest.approx(7.0 - 0.5 - LIDAR_X, abs=2e-3)
    world.set_pose("r1", 5.0, 0.0, 0.0)  # and the robot: its lidar moves with it
    assert centre_range(world) == pytest.approx(2.0 - 0.5 - LIDAR_X, abs=2e-3)
    assert world.vehicles["r1"].odometry[0] == pytest.approx(0.0, abs=1e-9)  # no jump in odometry


def test_a_spawned_vehicle_drives_and_senses(world: mv.World) -> None:
    world.run(0.3)
    v = world.spawn('<vehicle class="bot"><init_pose>2 4 90</init_pose></vehicle>', name="r3")
    assert list(world.vehicles) == ["r1", "r2", "r3"] and world.vehicles["r3"] is v
    assert v.pose[:2] == (2.0, 4.0) and v.pose[3] == pytest.approx(math.pi / 2)
    assert v.sensors["scan"].last is None
    v.set_twist(0.5, 0.0, 0.0)
    world.run(1.0)
    # 1 s at 0.5 m/s along +y; an ideal controller imposes its twist after each step, so the first step is still
    assert v.pose[:2] == pytest.approx((2.0, 4.5 - 0.5 * world.timestep), abs=1e-3)
    assert v.odometry[0] == pytest.approx(0.5, rel=0.1)
    assert v.sensors["scan"].last.stamp == pytest.approx(0.3 + 1.0)  # every 0.1 s since it came
    assert world.vehicles["r1"].pose[:2] == pytest.approx((0.0, 0.0), abs=1e-6)


def test_spawning_and_removing_far_away_leaves_the_others_going_on(world_file: Path) -> None:
    def run(change: bool) -> list[tuple[float, ...]]:
        w = mv.load_world(world_file, seed=1)
        w.vehicles["r1"].set_twist(0.5, 0.0, 0.3)
        w.vehicles["r2"].set_twist(0.6, 0.0, -0.2)
        w.run(0.5)
        if change:
            w.spawn('<block class="crate" name="far"><init_pose>30 30 0</init_pose></block>')
            w.run(0.25)
            w.remove("far")
            w.run(0.25)
        else:
            w.run(0.5)
        return [*(v.pose for v in w.vehicles.values()), *(v.odometry for v in w.vehicles.values()),
                w.blocks["box1"].pose]

    for a, b in zip(run(False), run(True), strict=True):
        assert b == pytest.approx(a, abs=1e-5)


def test_remove_takes_the_object_and_its_arrays_away(world: mv.World) -> None:
    r1 = world.vehicles["r1"]
    world.run(0.1)
    assert world.remove("r2").name == "r2"
    assert list(world.vehicles) == ["r1"] and world.physics.names == ("r1",)
    assert world.physics.state.shape == (1, 6) and world.physics.wheels.n == len(r1.wheels)
    assert [s.name for s in world.sensor_scheduler.sensors] == ["laser1"]
    world.remove("box1")
    assert "box1" not in world.physics.bodies.block_bodies
    r1.set_twist(1.0, 0.0, 0.0)
    world.run(0.5)
    assert r1.pose[0] == pytest.approx(0.5 - world.timestep, abs=1e-3)  # the first step is still (ideal controller)
    with pytest.raises(MvsimError, match="no object named 'r2'; objects: r1"):
        world.remove("r2")


def test_remove_drops_the_joints_of_the_object(tmp_path: Path) -> None:
    p = tmp_path / "joint.world.xml"
    p.write_text(WORLD.replace("</mvsim_world>", """
  <block name="box2"><mass>5</mass><init_pose>-4 4 0</init_pose></block>
  <joint type="distance" body_a="box1" body_b="box2"><max_length>1.0</max_length></joint>
</mvsim_world>"""))
    w = mv.load_world(p)
    w.start()
    assert len(w.physics.bodies.joints) == 1
    w.remove("box2")
    assert w.joints == [] and w.physics.bodies.joints == []
    w.reset()
    assert len(w.joints) == 1 and len(w.physics.bodies.joints) == 1


def test_set_velocity_sets_the_motion_at_once(world: mv.World) -> None:
    world.set_velocity("box1", 1.0, 0.0, 0.0)
    assert world.velocity("box1") == pytest.approx((1.0, 0.0, 0.0))
    world.step()
    assert world.blocks["box1"].pose[0] == pytest.approx(-4.0 + world.timestep, rel=0.05)
    r2 = world.vehicles["r2"]
    world.set_velocity("r2", 0.0, 0.4, 0.0)  # world frame: sideways for the robot, which faces +x
    assert r2.twist == pytest.approx((0.0, 0.4, 0.0))
    world.set_velocity("r2", 0.5, 0.0, 0.2)
    assert r2.twist == pytest.approx((0.5, 0.0, 0.2))
    assert r2.omega[0] == pytest.approx((0.5 - 0.2 * r2.wheels[0].y) / r2.wheels[0].radius)  # rolling, no slip
    assert world.velocity("r2") == pytest.approx((0.5, 0.0, 0.2))


def test_what_cannot_move_cannot_be_given_a_velocity(world: mv.World) -> None:
    world.spawn('<block class="crate" name="c1"><init_pose>4 0 0</init_pose></block>')
    with pytest.raises(MvsimError, match="'c1' does not move"):
        world.set_velocity("c1", 1.0, 0.0, 0.0)
    world.set_velocity("c1", 0.0, 0.0, 0.0)  # zero is fine
    assert world.velocity("c1") == (0.0, 0.0, 0.0)
    with pytest.raises(MvsimError, match="finite"):
        world.set_pose("box1", math.nan, 0.0, 0.0)
    with pytest.raises(MvsimError, match="finite"):
        world.set_velocity("box1", math.inf, 0.0, 0.0)


def test_before_the_start_spawn_and_velocity_change_the_initial_state(world_file: Path) -> None:
    w = mv.load_world(world_file)
    w.spawn('<block class="crate" name="c1"><init_pose>4 0 0</init_pose></block>')
    w.set_velocity("box1", 0.0, 1.0, 0.0)
    assert w.velocity("box1") == pytest.approx((0.0, 1.0, 0.0))
    w.step()
    assert "c1" in w.physics.bodies.block_bodies
    assert w.blocks["box1"].pose[1] > 3.0
    w.run(0.5)
    w.reset()
    assert "c1" in w.blocks and w.velocity("box1") == pytest.approx((0.0, 1.0, 0.0), abs=1e-6)


def test_spawned_objects_are_reset_to_where_they_were_spawned_or_removed(world: mv.World) -> None:
    v = world.spawn('<vehicle class="bot" name="r3"><init_pose>2 4 0</init_pose></vehicle>')
    v.set_twist(1.0, 0.0, 0.0)
    world.run(0.5)
    world.reset(objects=False)
    assert v.pose[:2] == (2.0, 4.0) and world.time == 0.0
    world.reset()
    assert "r3" not in world.vehicles and list(world.vehicles) == ["r1", "r2"]


def test_names_come_from_the_call_the_element_or_the_first_free_default(world: mv.World) -> None:
    block = "<block {}><init_pose>5 5 0</init_pose></block>"
    assert world.spawn(block.format('name="a"')).name == "a"
    assert world.spawn(block.format('name="a"'), name="b").name == "b"
    assert world.spawn(block.format("")).name == "block001"
    assert world.spawn(block.format("")).name == "block002"
    assert world.spawn('<vehicle><init_pose>9 9 0</init_pose><dynamics class="differential"/></vehicle>').name \
        == "veh1"
    assert world.spawn("<actor/>").name == "actor1"
    with pytest.raises(MvsimError, match="cannot spawn 'r1': another vehicle, block or actor already has that name"):
        world.spawn(block.format('name="r1"'))


def test_the_text_may_define_classes_include_files_and_be_a_whole_world(world: mv.World, tmp_path: Path) -> None:
    v = world.spawn("""<vehicle:class name="bot">
        <dynamics class="differential"><controller class="twist_pid"/></dynamics>
      </vehicle:class>
      <vehicle class="bot" name="r4"><init_pose>0 8 0</init_pose></vehicle>""")
    assert v.controller.xml_class == "twist_pid" and v.sensors == {}  # the text's class, not the world's
    assert world.vehicle_classes["bot"].child("sensor") is not None  # which stays as it was
    (tmp_path / "cube.block.xml").write_text('<block:class name="cube"><geometry type="box" lx="2" ly="2" lz="2"/>'
                                             '</block:class>')
    b = world.spawn('<include file="cube.block.xml"/><block class="cube" name="k"/>',
                    source=tmp_path / "request.xml", pose=(6.0, 0.0, 0.0))
    assert b.geometry is not None and b.geometry.dims["lx"] == 2.0
    w2 = world.spawn('<mvsim_world version="1.0"><block name="inside"><init_pose>5 5 0</init_pose></block>'
                     '</mvsim_world>')
    assert w2.name == "inside"


@pytest.mark.parametrize(("xml", "message"), [
    ("", "1: no XML element"),
    ('<block name="a"><init_pose>0 0 0</init_pose></block>\n<block name="b"/>',
     "2: a second object (<block>) in one spawn request"),
    ("<element class='horizontal_plane'/>", "1: <element> cannot be spawned"),
    ('<block:class name="x"/>', "1: no <vehicle>, <block> or <actor> element to spawn"),
    ('<block class="nope"/>', "1: block 'block001' uses undefined class 'nope'"),
    ('<vehicle name="v">\n<init_pose>0 0 0</init_pose>\n<dynamics class="diff"/></vehicle>', "3: unknown dynamics"),
])
def test_bad_text_says_where_and_what(world: mv.World, xml: str, message: str) -> None:
    with pytest.raises(WorldFileError) as e:
        world.spawn(xml)
    text = str(e.value)
    assert "<spawn request>" in text and message in text
    assert list(world.blocks) == ["box1"] and list(world.vehicles) == ["r1", "r2"]  # nothing half-added


def test_a_world_without_a_reader_takes_built_objects_only(world: mv.World) -> None:
    from mvsim_core.objects.block import Block

    crate = world.blocks["box1"]
    world.remove("box1")
    bare = mv.World(path=world.path, params=world.params, gui=world.gui, lights=world.lights,
                    georeference=None, rng=world.rng)
    with pytest.raises(MvsimError, match="pass a built object"):
        bare.spawn("<block/>")
    assert isinstance(bare.spawn(crate, pose=(1.0, 2.0, 0.0)), Block)
    assert bare.blocks["box1"].pose[:2] == (1.0, 2.0)


def test_parse_object_builds_without_adding_and_takes_a_default_pose(world: mv.World) -> None:
    from mvsim_core.loader import parse_object

    a = parse_object(world, '<block name="a"/>', default_pose=(1.0, 2.0, 0.5))
    assert a.pose == (1.0, 2.0, 0.0, 0.5, 0.0, 0.0) and "a" not in world.blocks
    b = parse_object(world, '<block name="b"><init_pose>3 4 0</init_pose></block>', default_pose=(1.0, 2.0, 0.5))
    assert b.pose[:2] == (3.0, 4.0)
    c = parse_object(world, '<block name="c"><init_pose>3 4 0</init_pose></block>', pose=(5.0, 6.0, 0.0),
                     default_pose=(1.0, 2.0, 0.5))
    assert c.pose[:2] == (5.0, 6.0)
    assert a.node is not None and b.node is not None and "name" in b.node.attrs
    unnamed = parse_object(world, "<block/>", default_pose=(0.0, 0.0, 0.0))
    assert unnamed.node is not None and "name" not in unnamed.node.attrs  # the name was made up
