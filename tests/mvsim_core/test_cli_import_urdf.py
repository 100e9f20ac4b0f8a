"""`mvsim import-urdf`: the class on stdout or in a file, a summary line on stderr, bad input in one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

import mvsim_core as mv
from mvsim_core.cli import main
from tests.mvsim_core.robots import urdf_path


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
