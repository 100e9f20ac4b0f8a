"""Values that parse but that the models cannot run with are refused at load (issue 14, item 1): each case is a
WorldFileError at the file and line that wrote the value, with the exact message, and ``mvsim check`` prints that one
line and exits 2."""

from __future__ import annotations

from pathlib import Path

import pytest

import mvsim_core as mv
from mvsim_core.cli import main as cli_main

BOT = """<vehicle name="r1">
 <dynamics class="differential"/>
 <init_pose>0 0 0</init_pose>
{body}</vehicle>
"""


VEHICLE = """<vehicle name="r1">
 <dynamics class="{cls}">
{dyn} </dynamics>
 <init_pose>0 0 0</init_pose>
</vehicle>
"""
MAP = Path(__file__).resolve().parents[2] / "worlds" / "maps" / "warehouse.png"


def world(body: str) -> str:
    return '<mvsim_world version="1.0">\n' + body + "</mvsim_world>\n"


# (id, world text, line, message)
CASES = [
    ("timestep below the minimum", world("<simul_timestep>1e-5</simul_timestep>\n"), 2,
     "<simul_timestep> must be 0 (automatic) or at least 0.0001 s (got 1e-05)"),
    ("sensor period below the minimum", world(BOT.format(
        body='<sensor class="imu" name="imu1">\n  <sensor_period>1e-9</sensor_period>\n</sensor>\n')), 6,
     "<sensor_period> must be at least 0.0001 s (got 1e-9)"),
    ("timestep above the maximum", world("<simul_timestep>2</simul_timestep>\n"), 2,
     "<simul_timestep> must be at most 1 s (got 2)"),
    ("absurd solver iterations", world("<b2d_vel_iters>100000</b2d_vel_iters>\n"), 2,
     "<b2d_vel_iters> must be at most 1000 (got 100000)"),
    ("absurd gravity", world("<gravity>1e6</gravity>\n"), 2, "<gravity> must be at most 1000 m/s^2 (got 1e6)"),
    ("no gravity (the wheel loads divide by it)", world("<gravity>0</gravity>\n"), 2,
     "<gravity> must be greater than 0 m/s^2 (got 0); negative or zero gravity makes no physical sense"),
    ("block shape far from its origin (Box2D m_I > 0)", world(
        '<block name="b">\n <init_pose>0 0 0</init_pose>\n <shape><pt>10000 0</pt><pt>10000.1 0</pt>'
        '<pt>10000.1 0.1</pt></shape>\n</block>\n'), 4,
     "block 'b': its shape lies 1e+04 m from its reference point but is only 0.0707 m across: Box2D's "
     "single-precision mass properties cannot represent it; put the shape's points around the origin and place "
     "the object with <init_pose>"),
    ("wheel too thin for Box2D", world(VEHICLE.format(
        cls="differential", dyn='  <l_wheel pos="0 0.5" diameter="0.4" width="1e-5"/>\n')), 4,
     'width="..." of <l_wheel> must be at least 0.001 m (got 1e-5)'),
    ("chassis too large for the terrain-step samples", world(VEHICLE.format(
        cls="differential", dyn="  <chassis><shape><pt>-500 -500</pt><pt>500 -500</pt><pt>500 500</pt></shape>"
                                "</chassis>\n")), 4,
     "vehicle 'r1': finding terrain steps around its outline needs 219 GiB, more than the 256 MiB budget for one "
     "array sized by a world file; check the chassis <shape> and the wheel positions (metres)"),
    ("left and right wheels on one line", world(VEHICLE.format(
        cls="differential", dyn='  <l_wheel pos="0 0.2"/>\n  <r_wheel pos="0.3 0.2"/>\n')), 3,
     "vehicle 'r1': <l_wheel> and <r_wheel> are 0 m apart sideways (y = 0.2 and 0.2 m); the track must be at least "
     "0.001 m (their pos=\"x y\")"),
    ("Ackermann without a wheelbase", world(VEHICLE.format(cls="ackermann", dyn="  <f_wheels_x>0</f_wheels_x>\n")),
     3, "vehicle 'r1': the front axle (<f_wheels_x> = 0 m) is 0 m from the rear wheels (x = 0 m); the wheelbase must "
        "be at least 0.001 m"),
    ("Ackermann steering to 90 degrees", world(VEHICLE.format(
        cls="ackermann", dyn="  <max_steer_ang_deg>90</max_steer_ang_deg>\n")), 3,
     "vehicle 'r1': <max_steer_ang_deg> is 90°; a steering limit must be below 90°"),
    ("initial velocity beyond the runaway limit", world(
        '<block name="b">\n <init_pose>0 0 0</init_pose>\n <init_vel>1e9 0 0</init_vel>\n</block>\n'), 4,
     "<init_vel> 1e+09 0 0 is beyond 100 m/s or 5730 deg/s; the simulation stops a body that fast as a blow-up"),
    ("joint of a body to itself", world(
        '<block name="a"><init_pose>0 0 0</init_pose></block>\n<joint type="revolute" body_a="a"\n body_b="a"/>\n'),
     4, "joint body_a and body_b are both 'a'; a joint links two different bodies"),
    ("joint limits the wrong way round", world(
        '<block name="a"><init_pose>0 0 0</init_pose></block>\n<block name="b"><init_pose>2 0 0</init_pose></block>\n'
        '<joint type="revolute" body_a="a" body_b="b" enable_limit="true" lower_angle_deg="30" upper_angle_deg="-30"/>'
        '\n'), 4, "joint lower_angle_deg (30) is larger than upper_angle_deg (-30)"),
    ("a block too large for its occupancy-grid collision neighbourhood", world(
        f'<element class="occupancy_grid">\n <file>{MAP}</file>\n</element>\n<block name="slab">\n'
        ' <init_pose>0 0 0</init_pose>\n <shape><pt>-300 -300</pt><pt>300 -300</pt><pt>300 300</pt></shape>\n'
        '</block>\n'), 5,
     "block 'slab' (reaching 424 m from its reference point) on the occupancy grid at {path}:2 (0.1 m cells): "
     "searching the cells around it for collisions needs 9.66 GiB, more than the 256 MiB budget for one array "
     "sized by a world file; use a coarser grid resolution or a smaller object"),
    ("occupancy grid cells below 1 mm", world(
        f'<element class="occupancy_grid">\n <file>{MAP}</file>\n <resolution>1e-300</resolution>\n</element>\n'),
     4, "<resolution> must be at least 0.001 m (got 1e-300)"),
]


@pytest.mark.parametrize(("kind", "text", "line", "message"), CASES, ids=[c[0] for c in CASES])
def test_refused_at_load(tmp_path: Path, capsys, kind: str, text: str, line: int, message: str) -> None:
    path = tmp_path / "w.world.xml"
    path.write_text(text)
    message = message.replace("{path}", str(path))
    with pytest.raises(mv.WorldFileError) as ei:
        mv.load_world(path)
    assert (ei.value.file, ei.value.line, ei.value.message) == (str(path), line, message)
    assert cli_main(["check", str(path)]) == 2
    assert capsys.readouterr().err == f"{path}:{line}: {message}\n"


def test_timestep_at_the_minimum_runs(tmp_path: Path) -> None:
    path = tmp_path / "w.world.xml"
    path.write_text(world("<simul_timestep>1e-4</simul_timestep>\n" + BOT.format(body="")))
    w = mv.load_world(path)
    w.run(0.01)
    assert w.timestep == 1e-4 and w.time == pytest.approx(0.01)


def test_spawned_object_is_checked_against_the_grids(tmp_path: Path) -> None:
    path = tmp_path / "w.world.xml"
    path.write_text(world(f'<element class="occupancy_grid">\n <file>{MAP}</file>\n</element>\n'))
    w = mv.load_world(path)
    w.run(0.01)
    with pytest.raises(mv.WorldFileError) as ei:
        w.spawn('<block name="slab">\n <shape><pt>-300 -300</pt><pt>300 -300</pt><pt>300 300</pt></shape>\n'
                '</block>', pose=(0.0, 0.0, 0.0))
    assert ei.value.line == 1 and ei.value.message == (
        f"block 'slab' (reaching 424 m from its reference point) on the occupancy grid at {path}:2 (0.1 m cells): "
        f"searching the cells around it for collisions needs 9.66 GiB, more than the 256 MiB budget for one array "
        f"sized by a world file; use a coarser grid resolution or a smaller object")
    assert "slab" not in w.blocks
    w.run(0.01)
