"""`mvsim import-urdf`: the class on stdout or in a file, a summary line on stderr, bad input in one line, exit 2."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.cli import main
from mvsim_core.objects.vehicles.base import Vehicle
from tests.mvsim_core.robots import ROBOTS, urdf_path


def test_writes_a_class_that_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tb3.vehicle.xml"
    assert main(["import-urdf", str(urdf_path("turtlebot3_waffle")), "-o", str(out), "--class-name", "tb3"]) == 0
    err = capsys.readouterr().err
    assert err == "class 'tb3': differential, 2 wheels, radius 0.033 m, track 0.288 m\n"
    w = tmp_path / "w.world.xml"
    w.write_text(f'<mvsim_world version="1.0"><include file="{out}"/>'
                 '<vehicle name="v" class="tb3"><init_pose>0 0 0</init_pose></vehicle></mvsim_world>')
    v = mv.load_world(w).vehicles["v"]
    assert [round(wh.y, 3) for wh in v.wheels] == [0.144, -0.144]


def test_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import-urdf", str(urdf_path("diffbot"))]) == 0
    out = capsys.readouterr()
    assert out.out.startswith('<vehicle:class name="diffdrive_robot">')
    assert out.err == "class 'diffdrive_robot': differential, 2 wheels, radius 0.015 m, track 0.1 m\n"


def test_bad_input_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.urdf"
    bad.write_text('<robot name="b">\n<link name="a"/>\n<mesh/>\n<link name="m"><visual><geometry>'
                   '<mesh filename="package://no_such_pkg/m.stl"/></geometry></visual></link>\n'
                   '<joint name="j" type="fixed"><parent link="a"/><child link="m"/></joint></robot>\n')
    assert main(["import-urdf", str(bad)]) == 2
    assert capsys.readouterr().err == (f"{bad}:2: robot 'b' has no wheels: a wheel is a continuous joint about the "
                                       "lateral axis whose child link has a cylinder <collision>; add one per wheel\n")
    cyc = tmp_path / "cyc.urdf"
    cyc.write_text('<robot name="c">\n<link name="a"/>\n<link name="b"/>\n'
                   '<joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>\n'
                   '<joint name="ba" type="fixed"><parent link="b"/><child link="a"/></joint></robot>\n')
    assert main(["import-urdf", str(cyc)]) == 2
    assert capsys.readouterr().err == (f"{cyc}:4: the joints form a cycle (ba -> ab): a URDF is a tree with one root "
                                       "link; remove a joint of the cycle\n")


def test_unknown_package_with_package_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "pkg.urdf"
    p.write_text(urdf_path("turtlebot3_burger").read_text())
    assert main(["import-urdf", str(p), "--package-path", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{p}:") and err.endswith(
        f": unknown package 'turtlebot3_description' in 'package://turtlebot3_description/meshes/bases/"
        f"burger_base.stl': not in the package paths ({tmp_path}) nor the ament index; add the folder that holds "
        "'turtlebot3_description/' with --package-path (package_path=)\n")


@pytest.mark.parametrize("robot", list(ROBOTS))
def test_the_written_class_is_the_vehicle_the_urdf_attribute_makes(robot: str, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """`mvsim import-urdf` output, included as a class file, gives the vehicle that ``<vehicle:class urdf=...>``
    gives: the same dynamics class, wheels (tag, position m, mounting yaw rad, size m, mass kg) and chassis
    (mass kg, z range m, footprint m), under the class name given."""
    out = tmp_path / f"{robot}.vehicle.xml"
    assert main(["import-urdf", str(urdf_path(robot)), "-o", str(out), "--class-name", "c"]) == 0
    capsys.readouterr()
    vehicle = '<vehicle name="v" class="c"><init_pose>0 0 0</init_pose></vehicle>'
    (tmp_path / "inc.world.xml").write_text(f'<mvsim_world version="1.0"><include file="{out}"/>{vehicle}'
                                            '</mvsim_world>')
    (tmp_path / "attr.world.xml").write_text(f'<mvsim_world version="1.0"><vehicle:class name="c" '
                                             f'urdf="{urdf_path(robot)}"/>{vehicle}</mvsim_world>')
    inc = mv.load_world(tmp_path / "inc.world.xml").vehicles["v"]
    attr = mv.load_world(tmp_path / "attr.world.xml").vehicles["v"]

    def wheels(v: Vehicle) -> list[tuple[object, ...]]:
        return [(w.name, w.x, w.y, w.yaw, w.width, w.diameter, w.mass) for w in v.wheels]

    assert inc.dynamics.xml_class == attr.dynamics.xml_class == ROBOTS[robot][5]
    assert wheels(inc) == wheels(attr) and len(inc.wheels) in (2, 4)
    assert (inc.chassis.mass, inc.chassis.zmin, inc.chassis.zmax) == \
        (attr.chassis.mass, attr.chassis.zmin, attr.chassis.zmax)
    np.testing.assert_array_equal(inc.chassis.footprint, attr.chassis.footprint)
    assert inc.class_name == attr.class_name == "c"
    assert inc.description is None and attr.description is not None  # a plain class file has no URDF


HUSKY_XACRO = Path(__file__).resolve().parents[2].parent / "shared" / "robots" / "husky" / "src"


def test_xacro_finds_packages_on_the_package_path(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Husky's xacro ``$(find husky_description)`` / ``$(find husky_control)``: found in the folder that
    ``--package-path`` names (each sub-folder a package), with an empty ament prefix on AMENT_PREFIX_PATH; without
    it, one line saying which package is missing and how to give it; without any AMENT_PREFIX_PATH, one line too."""
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path))
    entry = HUSKY_XACRO / "husky_description" / "urdf" / "husky.urdf.xacro"
    assert main(["import-urdf", str(entry)]) == 2
    assert capsys.readouterr().err == (
        f"{entry}: xacro failed: $(find husky_control): package 'husky_control' not found; add the folder that holds "
        "'husky_control/' with --package-path (package_path=), or put the package on AMENT_PREFIX_PATH\n")
    assert main(["import-urdf", str(entry), "--package-path", str(HUSKY_XACRO)]) == 0
    out = capsys.readouterr()
    assert out.out.startswith('<vehicle:class name="husky">')
    assert out.err == ("class 'husky': differential_4_wheels, 4 wheels, radius 0.1651 m, track 0.5708 m, "
                       "wheelbase 0.512 m\n")
    assert os.environ["AMENT_PREFIX_PATH"] == str(tmp_path)  # put back as it was
    monkeypatch.delenv("AMENT_PREFIX_PATH")
    assert main(["import-urdf", str(entry)]) == 2
    assert capsys.readouterr().err == (
        f"{entry}: xacro failed: $(find ...) needs an ament index and AMENT_PREFIX_PATH is not set; add the folder "
        "that holds the packages with --package-path (package_path=), or source a ROS 2 setup\n")
    assert main(["import-urdf", str(entry), "--package-path", str(HUSKY_XACRO)]) == 0
    assert "AMENT_PREFIX_PATH" not in os.environ
