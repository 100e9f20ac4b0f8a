"""The generated robot description of vehicles without a URDF: names, tree and geometry, read back by two
independent URDF parsers (urdf_parser_py, yourdfpy)."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
import yourdfpy
from urdf_parser_py.urdf import URDF

SENSOR = '<sensor class="laser" name="laser1"><pose_3d>0.4 0.1 0.3 90 0 0</pose_3d></sensor>'
SPIN_AND_FIXED = ["base_footprint_joint", "chassis_joint"]
CLASSES = {
    "differential": ["l_wheel", "r_wheel"],
    "differential_3_wheels": ["l_wheel", "r_wheel", "caster_wheel"],
    "differential_4_wheels": ["lr_wheel", "rr_wheel", "lf_wheel", "rf_wheel"],
    "ackermann": ["rl_wheel", "rr_wheel", "fl_wheel", "fr_wheel"],
    "ackermann_drivetrain": ["rl_wheel", "rr_wheel", "fl_wheel", "fr_wheel"],
}


def vehicle(load, dclass):
    w = load(f'<vehicle name="v"><dynamics class="{dclass}"/><init_pose>0 0 0</init_pose>{SENSOR}</vehicle>')
    return w.vehicles["v"]


def expected_joints(dclass):
    names = list(SPIN_AND_FIXED)
    for t in CLASSES[dclass]:
        if dclass.startswith("ackermann") and t in ("fl_wheel", "fr_wheel"):
            names.append(f"{t}_steer_joint")
        names.append(f"{t}_joint")
    return [*names, "laser1_joint"]


@pytest.mark.parametrize("dclass", list(CLASSES))
def test_generated_descriptions_parse_with_the_convention_names(load, dclass):
    veh = vehicle(load, dclass)
    d = veh.robot_description()
    assert veh.robot_description() is d  # made once
    assert (d.root, d.height, d.source) == ("base_link", 0.0, "")
    assert [j.name for j in d.joints] == expected_joints(dclass)
    u = URDF.from_xml_string(d.urdf)
    assert [j.name for j in u.joints] == expected_joints(dclass)
    assert u.get_root() == "base_link"
    y = yourdfpy.URDF.load(io.StringIO(d.urdf), build_scene_graph=True, load_meshes=False)
    assert y.validate()
    assert y.base_link == "base_link"
    for w in veh.wheels:
        joint = u.joint_map[f"{w.name}_joint"]
        assert (joint.type, joint.axis) == ("continuous", [0.0, 1.0, 0.0])
        cyl = u.link_map[w.name].visual.geometry
        assert (cyl.radius, cyl.length) == (w.radius, w.width)
        assert u.link_map[w.name].inertial.inertia.iyy == pytest.approx(w.inertia)
        # the wheel centre in base_link at rest: (x, y, radius)
        centre = y.get_transform(w.name, "base_link")[:3, 3]
        assert centre.tolist() == pytest.approx([w.x, w.y, w.radius], abs=1e-12)
    laser = y.get_transform("laser1", "base_link")
    assert laser[:3, 3].tolist() == pytest.approx([0.4, 0.1, 0.3])
    assert laser[:3, 0].tolist() == pytest.approx([0.0, 1.0, 0.0], abs=1e-12)  # yaw 90°: x looks left


def test_ackermann_steer_joints_turn_about_z_within_the_inner_wheel_limit(load):
    veh = vehicle(load, "ackermann")
    u = URDF.from_xml_string(veh.robot_description().urdf)
    fl = u.joint_map["fl_wheel_steer_joint"]
    assert (fl.type, fl.parent, fl.child, fl.axis) == ("revolute", "base_link", "fl_wheel_steer", [0.0, 0.0, 1.0])
    assert fl.origin.xyz == [1.3, 1.0, 0.2]
    inner = veh.dynamics.front_wheel_angles(math.radians(30))[0]
    assert fl.limit.upper == pytest.approx(inner) and fl.limit.lower == pytest.approx(-inner)
    assert inner == pytest.approx(0.8043, abs=1e-4)  # cot = cot 30° + 1/1.3 − 2/1.3
    spin = u.joint_map["fl_wheel_joint"]
    assert (spin.parent, spin.origin.xyz) == ("fl_wheel_steer", [0.0, 0.0, 0.0])


def test_the_chassis_is_a_box_over_the_footprint(load):
    veh = vehicle(load, "ackermann")
    u = URDF.from_xml_string(veh.robot_description().urdf)
    box = u.link_map["chassis"].visual
    assert box.geometry.size == pytest.approx([2.6, 2.0, 1.2])  # x -0.8..1.8, y -1..1, z 0.2..1.4
    assert box.origin.xyz == pytest.approx([0.5, 0.0, 0.8])
    assert u.link_map["chassis"].inertial.mass == 500.0


def test_a_mounting_yaw_turns_the_spin_joint(load):
    w = load('<vehicle name="v"><dynamics class="differential"><l_wheel pos="0 0.5 10"/></dynamics>'
             "<init_pose>0 0 0</init_pose></vehicle>")
    d = w.vehicles["v"].robot_description()
    assert d.joint("l_wheel_joint").origin == pytest.approx((0.0, 0.5, 0.2, 0.0, 0.0, math.radians(10)))
    assert np.isfinite(d.joint("r_wheel_joint").origin).all()
