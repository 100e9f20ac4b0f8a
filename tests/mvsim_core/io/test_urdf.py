"""mvsim_core.io.urdf: reading URDF/xacro into links, joints, the tree and forward kinematics; its errors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from mvsim_core.errors import WorldFileError
from mvsim_core.io.urdf import UrdfError, parse_urdf, read_urdf, resolve_package_uri
from tests.mvsim_core.robots import ament_prefix, urdf_path


def test_turtlebot3_links_joints_and_forward_kinematics() -> None:
    m = read_urdf(urdf_path("turtlebot3_burger"))
    assert m.root == "base_footprint"
    assert list(m.links) == ["base_footprint", "base_link", "wheel_left_link", "wheel_right_link",
                             "caster_back_link", "imu_link", "base_scan"]
    assert [j.name for j in m.joints] == ["base_joint", "wheel_left_joint", "wheel_right_joint",
                                          "caster_back_joint", "imu_joint", "scan_joint"]
    wl = m.joints[1]
    assert (wl.type, wl.parent, wl.child, wl.axis) == ("continuous", "base_link", "wheel_left_link", (0, 0, 1))
    assert wl.origin.rpy == (-1.57, 0.0, 0.0)
    t = m.link_transform("wheel_left_link")
    np.testing.assert_allclose(t[:3, 3], [0.0, 0.08, 0.033], atol=1e-12)
    np.testing.assert_allclose(m.axis_in_root(wl), [0.0, math.sin(1.57), math.cos(1.57)], atol=1e-12)
    cyl = m.links["wheel_left_link"].collisions[0]
    assert (cyl.kind, cyl.radius, cyl.length) == ("cylinder", 0.033, 0.018)
    assert m.links["base_link"].inertial is not None and m.links["base_link"].inertial.mass == 0.82573504
    # a quarter turn of the wheel about its axis moves its frame's x axis, not its origin
    t2 = m.link_transform("wheel_left_link", {"wheel_left_joint": math.pi / 2})
    np.testing.assert_allclose(t2[:3, 3], t[:3, 3], atol=1e-12)
    assert not np.allclose(t2[:3, :3], t[:3, :3])


def test_mimic_and_limits_of_carlikebot() -> None:
    m = read_urdf(urdf_path("carlikebot"))
    fr = next(j for j in m.joints if j.name == "front_right_wheel_joint")
    assert fr.mimic is not None and (fr.mimic.joint, fr.mimic.multiplier, fr.mimic.offset) == \
        ("virtual_front_wheel_joint", 1.0, 0.0)
    assert (fr.lower, fr.upper) == (-0.4, 0.4)
    # the mimic follows its joint in forward kinematics
    t = m.link_transform("front_right_wheel", {"virtual_front_wheel_joint": 0.3})
    yaw = math.atan2(t[1, 0], t[0, 0])
    assert yaw == pytest.approx(math.pi / 2 + 0.3, abs=1e-6)


def test_xacro_source_with_an_ament_prefix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix, entry = ament_prefix("husky", tmp_path)
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
    m = read_urdf(entry)
    plain = read_urdf(urdf_path("husky"))
    assert [j.name for j in m.joints] == [j.name for j in plain.joints]
    assert m.root == "base_link"


ROBOT = '<robot name="r">{}</robot>'


@pytest.mark.parametrize(("body", "line", "text"), [
    ('<link name="a"/><joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>', 1,
     "joint 'j' names unknown child link 'b'; define <link name=\"b\"> or fix the name (links: a)"),
    ('<link name="a"/>\n<link name="b"/>\n<link name="c"/>\n'
     '<joint name="j1" type="fixed"><parent link="a"/><child link="b"/></joint>\n'
     '<joint name="j2" type="fixed"><parent link="c"/><child link="b"/></joint>', 5,
     "link 'b' has two parents: joints 'j1' (line 4) and 'j2'; a URDF is a tree, remove one"),
    ('<link name="a"/>\n<link name="b"/>\n', 2,
     "several root links (a, b): a URDF tree has one root; connect 'b' to the tree with a joint"),
])
def test_tree_errors(body: str, line: int, text: str) -> None:
    with pytest.raises(UrdfError) as e:
        parse_urdf(ROBOT.format(body), source="r.urdf")
    assert str(e.value) == f"r.urdf:{line}: {text}"
    assert isinstance(e.value, WorldFileError)


def test_a_cycle() -> None:
    body = ('<link name="r"/>\n<link name="a"/>\n<link name="b"/>\n'
            '<joint name="ra" type="fixed"><parent link="r"/><child link="a"/></joint>\n'
            '<joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>\n'
            '<joint name="ba" type="fixed"><parent link="b"/><child link="a"/></joint>')
    with pytest.raises(UrdfError, match="two parents"):  # a cycle through a child of the tree = two parents
        parse_urdf(ROBOT.format(body), source="r.urdf")
    body = ('<link name="a"/>\n<link name="b"/>\n'
            '<joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>\n'
            '<joint name="ba" type="fixed"><parent link="b"/><child link="a"/></joint>')
    with pytest.raises(UrdfError) as e:
        parse_urdf(ROBOT.format(body), source="r.urdf")
    assert str(e.value) == ("r.urdf:3: the joints form a cycle (ba -> ab): a URDF is a tree with one root link; "
                            "remove a joint of the cycle")


def test_not_xml_and_no_robot() -> None:
    with pytest.raises(UrdfError, match=r"^r.urdf:1: not XML: .*; fix the XML syntax$"):
        parse_urdf("<robot", source="r.urdf")
    with pytest.raises(UrdfError) as e:
        parse_urdf("<world/>", source="r.urdf")
    assert str(e.value) == 'r.urdf:1: root element is <world>; a URDF file holds one <robot name="..."> element'


def test_package_uris(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "meshes").mkdir(parents=True)
    (tmp_path / "pkg" / "meshes" / "m.stl").write_text("solid x\nendsolid x\n")
    assert resolve_package_uri("package://pkg/meshes/m.stl", [tmp_path]) == tmp_path / "pkg" / "meshes" / "m.stl"
    assert resolve_package_uri("package://pkg/meshes/m.stl", [tmp_path / "pkg"]) == \
        tmp_path / "pkg" / "meshes" / "m.stl"
    assert resolve_package_uri("package://pkg/none.stl", [tmp_path]) is None
    assert resolve_package_uri("package://nopkg_xyz/m.stl", []) is None
    with pytest.raises(UrdfError) as e:
        resolve_package_uri("package://nopkg_xyz/m.stl", [tmp_path], source="r.urdf", line=7)
    assert str(e.value) == (f"r.urdf:7: unknown package 'nopkg_xyz' in 'package://nopkg_xyz/m.stl': not in the "
                            f"package paths ({tmp_path}) nor the ament index; add the folder that holds 'nopkg_xyz/' "
                            "with --package-path (package_path=)")
