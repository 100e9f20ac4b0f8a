"""URDF robots as vehicles: the class and description each shared robot implies, how they drive, the errors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.io.urdf import UrdfError
from mvsim_core.objects.vehicles.description import JointSource
from mvsim_core.objects.vehicles.urdf_import import import_urdf
from tests.mvsim_core.robots import ROBOTS, ament_prefix, urdf_path

DATA = Path(__file__).parent / "data"
ROOT_SHARED = Path(__file__).resolve().parents[4].parent / "shared"


def _world(tmp_path: Path, urdf: Path) -> Path:
    w = tmp_path / "w.world.xml"
    w.write_text(f'<mvsim_world version="1.0"><simul_timestep>0.005</simul_timestep>'
                 f'<vehicle:class name="c" urdf="{urdf}"/>'
                 f'<vehicle name="v" class="c"><init_pose>0 0 0</init_pose></vehicle></mvsim_world>')
    return w


@pytest.mark.parametrize("robot", list(ROBOTS))
@pytest.mark.parametrize("source", ["urdf", "xacro"])
def test_shared_robot_imports_and_drives(robot: str, source: str, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, radius, track, wheelbase, dynamics = ROBOTS[robot]
    if source == "xacro":
        prefix, path = ament_prefix(robot, tmp_path / "prefix")
        monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
    else:
        path = urdf_path(robot)
    veh = import_urdf(path)
    assert veh.dynamics == dynamics
    assert veh.radius == pytest.approx(radius, abs=1e-3)
    assert veh.track == pytest.approx(track, abs=1e-3)
    assert veh.wheelbase == pytest.approx(wheelbase, abs=1e-3)
    world = mv.load_world(_world(tmp_path, path))
    v = world.vehicles["v"]
    assert v.description is not None and v.base_frame == veh.description.root
    v.set_twist(0.3, 0.0, 0.0)
    world.run(3.0)
    x, y = v.pose[:2]
    assert 0.8 <= x <= 1.0 and abs(y) < 0.01


def test_descriptions_of_diffbot_and_carlikebot() -> None:
    d = import_urdf(urdf_path("diffbot")).description
    assert (d.root, d.height) == ("base_link", pytest.approx(0.04))
    # left_wheel_joint sits at y = -0.05: it drives the vehicle's right wheel (index 1), whatever its name
    lw = d.joint("left_wheel_joint")
    assert (lw.source, lw.wheels, lw.multiplier) == (JointSource.SPIN, (1,), 1.0)
    assert d.joint("caster_rear_wheel_joint").source is JointSource.FIXED
    c = import_urdf(urdf_path("carlikebot")).description
    assert (c.joint("virtual_rear_wheel_joint").source, c.joint("virtual_rear_wheel_joint").wheels) == \
        (JointSource.SPIN, (0, 1))
    assert (c.joint("virtual_front_wheel_joint").source, c.joint("virtual_front_wheel_joint").wheels) == \
        (JointSource.STEER_CENTRE, (2, 3))
    fr = c.joint("front_right_wheel_joint")
    assert (fr.source, fr.mimic, fr.multiplier, fr.lower, fr.upper) == \
        (JointSource.MIMIC, "virtual_front_wheel_joint", 1.0, -0.4, 0.4)
    assert c.urdf == urdf_path("carlikebot").read_text()
    h = import_urdf(urdf_path("husky")).description
    assert h.height == pytest.approx(0.1651 - 0.03282)


def test_carlikebot_turns_with_the_bicycle_radius(tmp_path: Path) -> None:
    world = mv.load_world(_world(tmp_path, urdf_path("carlikebot")))
    v = world.vehicles["v"]
    steer = 0.3
    v.drive(0.3, steer)
    world.run(4.0)
    vx, _, wz = v.twist  # the rear axle's centre has no sideways speed: it turns on radius vx / wz
    assert vx / wz == pytest.approx(0.325 / math.tan(steer), rel=0.05)


def test_world_tag_with_a_sensor_on_a_urdf_link() -> None:
    world = mv.load_world(DATA / "urdf_robot.world.xml")
    v = world.vehicles["r1"]
    assert v.description is not None and v.description.root == "base_footprint"
    assert v.dynamics.xml_class == "differential"
    imu = v.sensors["imu_link"]
    assert imu.pose == pytest.approx((-0.032, 0.0, 0.078, 0.0, 0.0, 0.0), abs=1e-9)


def test_a_vehicles_own_sensor_on_a_urdf_link_takes_the_links_pose(tmp_path: Path) -> None:
    """A ``<sensor>`` of the ``<vehicle>`` (not of its URDF class) named as a URDF link and without a pose sits on
    that link (the burger's base_scan: scan_joint at (-0.032, 0, 0.172) on base_link, 0.010 above the ground);
    one with a pose keeps it."""
    w = tmp_path / "w.world.xml"
    scan = '<sensor class="laser" name="{0}"><nrays>11</nrays>{1}</sensor>'
    w.write_text(f'<mvsim_world version="1.0"><vehicle:class name="c" urdf="{urdf_path("turtlebot3_burger")}"/>'
                 f'<vehicle name="v" class="c"><init_pose>0 0 0</init_pose>{scan.format("base_scan", "")}'
                 f'{scan.format("imu_link", "<pose_3d>0.1 0 0.2 0 0 0</pose_3d>")}</vehicle></mvsim_world>')
    v = mv.load_world(w).vehicles["v"]
    assert v.sensors["base_scan"].pose == pytest.approx((-0.032, 0.0, 0.182, 0.0, 0.0, 0.0), abs=1e-9)
    assert v.sensors["imu_link"].pose == pytest.approx((0.1, 0.0, 0.2, 0.0, 0.0, 0.0), abs=1e-9)


LINK = '<link name="{0}"><collision><geometry><cylinder radius="0.05" length="0.02"/></geometry></collision></link>'
WHEEL = ('<joint name="{0}_joint" type="continuous"><parent link="base"/><child link="{0}"/>'
         '<origin xyz="0 {1} 0.05"/><axis xyz="0 1 0"/></joint>')


def _bad(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "bad.urdf"
    p.write_text(f'<robot name="bad">\n<link name="base"><collision><geometry><box size="0.3 0.2 0.1"/>'
                 f'</geometry></collision></link>\n{body}</robot>\n')
    return p


def test_no_wheels(tmp_path: Path) -> None:
    with pytest.raises(UrdfError) as e:
        import_urdf(_bad(tmp_path, ""))
    assert str(e.value) == (f"{tmp_path}/bad.urdf:2: robot 'bad' has no wheels: a wheel is a continuous joint about "
                            "the lateral axis whose child link has a cylinder <collision>; add one per wheel")


def test_a_wheel_link_without_collision(tmp_path: Path) -> None:
    body = ('<link name="lw"><visual><geometry><cylinder radius="0.05" length="0.02"/></geometry></visual></link>\n'
            + WHEEL.format("lw", 0.1) + "\n" + LINK.format("rw") + WHEEL.format("rw", -0.1) + "\n")
    with pytest.raises(UrdfError) as e:
        import_urdf(_bad(tmp_path, body))
    assert str(e.value) == (f"{tmp_path}/bad.urdf:3: wheel link 'lw' (joint 'lw_joint') has no <collision>; give it "
                            "a cylinder collision (radius, length) so that it can roll on the ground")


def test_driven_wheels_of_different_radii(tmp_path: Path) -> None:
    body = (LINK.format("lw") + WHEEL.format("lw", 0.1) + "\n"
            + LINK.format("rw").replace('0.05"', '0.06"') + WHEEL.format("rw", -0.1) + "\n")
    with pytest.raises(UrdfError) as e:
        import_urdf(_bad(tmp_path, body))
    assert str(e.value) == (f"{tmp_path}/bad.urdf:4: driven wheels of different radii (0.05, 0.06 m): the simulated "
                            "drive needs one radius; make the wheel cylinders equal")


MESH_ROBOT = """<robot name="toter">
<link name="base"><collision><geometry><box size="0.4 0.3 0.1"/></geometry></collision>
 <visual><origin xyz="0.1 0 0.2" rpy="0 0 1.5707963267948966"/><geometry><mesh filename="{uri}"/></geometry></visual>
</link>
{wheels}
</robot>
"""


def _mesh_world(tmp_path: Path, uri: str, package_path: str) -> Path:
    wheels = LINK.format("lw") + WHEEL.format("lw", 0.2) + LINK.format("rw") + WHEEL.format("rw", -0.2)
    (tmp_path / "toter.urdf").write_text(MESH_ROBOT.format(uri=uri, wheels=wheels))
    attr = f' package_path="{package_path}"' if package_path else ""
    w = tmp_path / "w.world.xml"
    w.write_text(f'<mvsim_world version="1.0"><vehicle:class name="c" urdf="toter.urdf"{attr}/>'
                 f'<vehicle name="v" class="c"><init_pose>0 0 0</init_pose></vehicle></mvsim_world>')
    return w


def test_a_found_mesh_visual_is_loaded_as_the_vehicles_visual(tmp_path: Path) -> None:
    """A ``package://`` mesh found on the package path is the vehicle's visual, at the URDF visual's pose on the
    ground frame (the wheel centres are 0.05 m up, radius 0.05: the root is on the ground)."""
    assets = ROOT_SHARED / "assets"
    world = mv.load_world(_mesh_world(tmp_path, "package://mvsim-models/tote.dae", str(assets)))
    (vis,) = world.vehicles["v"].visuals
    assert vis.path == assets / "mvsim-models" / "tote.dae"
    assert (vis.params["model_offset_x"], vis.params["model_offset_z"]) == pytest.approx((0.1, 0.2), abs=1e-6)
    assert vis.params["model_yaw"] == pytest.approx(math.pi / 2, abs=1e-5)
    b = vis.bounds
    assert b is not None and np.all(np.isfinite(b))
    assert world.missing_assets == {}


def test_a_mesh_that_is_not_found_gets_the_missing_model_stand_in(tmp_path: Path) -> None:
    """Without package paths an unresolvable mesh keeps its URI and counts as a missing asset (the viewer draws the
    stand-in); the vehicle still loads and drives."""
    world = mv.load_world(_mesh_world(tmp_path, "package://no_such_pkg/meshes/base.dae", ""))
    v = world.vehicles["v"]
    (vis,) = v.visuals
    assert vis.path is None and vis.uri == "package://no_such_pkg/meshes/base.dae"
    assert list(world.missing_assets) == ["package://no_such_pkg/meshes/base.dae"]
    v.set_twist(0.3, 0.0, 0.0)
    world.run(1.0)
    assert v.pose[0] > 0.2
