"""Vehicles (§1.11), common part: names, class/instance lookup, dynamics registry errors, chassis, odometry
multipliers, logging options, sensors."""

from __future__ import annotations

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.io.meshes import convex_footprint, load_mesh
from mvsim_core.rng import WorldRandom

KNOWN = "ackermann, ackermann_drivetrain, differential, differential_3_wheels, differential_4_wheels"


def veh(name="", body="", dyn='<dynamics class="differential"/>'):
    attr = f' name="{name}"' if name else ""
    return f"<vehicle{attr}>{dyn}<init_pose>0 0 0</init_pose>{body}</vehicle>\n"


def test_defaults_and_default_names(load):
    w = load(veh() + veh("bot") + veh())
    assert list(w.vehicles) == ["veh1", "bot", "veh2"]
    v = w.vehicles["veh1"]
    assert (v.class_name, v.controller.xml_class, v.friction.xml_class) == ("", "raw", "default")
    assert (v.log_path, v.auto_start_recording, v.sensors, v.visuals) == ("", False, {}, [])
    assert (v.chassis.linear_damping, v.chassis.angular_damping) == (0.1, 0.1) and v.node.line == 2
    assert v.summary() == ("veh1 [class -]: dynamics differential, controller raw, friction default, 2 wheels, "
                           "at (0, 0, 0°); sensors: none")


def test_class_and_instance(load):
    w = load('<vehicle:class name="bot">\n<dynamics class="differential_3_wheels"><chassis mass="20"/></dynamics>\n'
             '<friction class="wardiagnemma"/><sensor class="laser" name="scan"/><log_path>/tmp/cls</log_path>'
             '</vehicle:class>\n<vehicle name="r1" class="bot"><init_pose>1 2 90</init_pose>'
             '<log_path>/tmp/inst</log_path></vehicle>')
    v = w.vehicles["r1"]
    assert v.class_name == "bot" and v.dynamics.xml_class == "differential_3_wheels" and v.chassis.mass == 20.0
    assert v.friction.xml_class == "wardiagnemma" and list(v.sensors) == ["scan"] and v.log_path == "/tmp/inst"
    assert v.summary() == ("r1 [class bot]: dynamics differential_3_wheels, controller raw, friction wardiagnemma, "
                           "3 wheels, at (1, 2, 90°); sensors: scan (laser)")


def test_include_inside_vehicle(load, tmp_path):
    (tmp_path / "sensors.xml").write_text('<sensor class="imu" name="imu0"/>\n<sensor class="laser"/>')
    v = load(veh("v", '<include file="sensors.xml"/>')).vehicles["v"]
    assert [(n, s.xml_class) for n, s in v.sensors.items()] == [("imu0", "imu"), ("laser1", "laser")]


@pytest.mark.parametrize(("dyn", "line", "message"), [
    ('<dynamics\n class="hovercraft"/>', 3, f"unknown dynamics class 'hovercraft'; known classes: {KNOWN}"),
    ("<dynamics/>", 2, f'<dynamics> needs a class="..." attribute; classes: {KNOWN}'),
    ("", 2, f"vehicle 'v' has no <dynamics class=\"...\">; add one (classes: {KNOWN})"),
])
def test_dynamics_errors(load, dyn, line, message):
    with pytest.raises(mv.WorldFileError) as ei:
        load(veh("v", dyn=dyn))
    assert (ei.value.line, ei.value.message) == (line, message)


def test_unknown_tags_warn(load):
    w = load('<vehicle name="v">\n<dynamics class="differential"><l_wheel/><r_wheel/>\n<gearbox/></dynamics>\n'
             "<init_pose>0 0 0</init_pose>\n<turbo/></vehicle>")
    assert w.warnings == [f"{w.path}:6: unknown tag <turbo> in <vehicle> is ignored",
                          f'{w.path}:4: unknown tag <gearbox> in <dynamics class="differential"> is ignored']


def test_chassis_attributes_and_shape(load):
    v = load(veh("v", dyn='<dynamics class="differential"><chassis mass="8" zmin="0.1" zmax="0.4" color="#00ff00" '
                          'linear_damping="0.3" angular_damping="0.2"><shape><pt>0 0</pt><pt>0 1</pt><pt>1 1</pt>'
                          "<pt>1 0</pt></shape></chassis></dynamics>")).vehicles["v"]
    c = v.chassis
    assert (c.mass, c.zmin, c.zmax, c.color, c.linear_damping, c.angular_damping) == (
        8.0, 0.1, 0.4, (0, 255, 0, 255), 0.3, 0.2)
    assert c.footprint.tolist() == [[1, 0], [1, 1], [0, 1], [0, 0]]  # clockwise input, stored CCW


def test_chassis_zmax_below_zmin(load):
    with pytest.raises(mv.WorldFileError) as ei:
        load('<vehicle name="v"><dynamics class="differential">\n<chassis zmin="1" zmax="0.5"/></dynamics>'
             "<init_pose>0 0 0</init_pose></vehicle>")
    assert (ei.value.line, ei.value.message) == (3, "chassis of 'v': zmax (0.5 m) is below zmin (1 m)")


def test_chassis_shape_from_visual(load, worlds_dir):
    dae = worlds_dir / "models" / "jackal_description" / "jackal.dae"
    v = load(veh("v", f"<visual><model_uri>{dae}</model_uri></visual>",
                 dyn='<dynamics class="differential"><chassis><shape_from_visual/></chassis></dynamics>')
             ).vehicles["v"]
    assert v.chassis.footprint == pytest.approx(convex_footprint(load_mesh(dae)))
    assert v.chassis.footprint.min(axis=0) == pytest.approx((-0.251549, 0.0655), abs=1e-5)
    w = load(veh("v", dyn='<dynamics class="differential">\n<chassis><shape_from_visual/></chassis></dynamics>'))
    v = w.vehicles["v"]
    # nothing to measure: the outline of its wheels (default differential: wheels of 0.4 m x 0.2 m at y = ±0.5)
    fp = np.asarray(v.chassis.footprint)
    assert fp.min(axis=0).tolist() == pytest.approx([-0.2, -0.6])
    assert fp.max(axis=0).tolist() == pytest.approx([0.2, 0.6])
    assert w.warnings[-1] == (f"{w.path}:3: <shape_from_visual/>: vehicle 'v' has no visual model to measure; its "
                              "chassis stands in as the outline of its wheels (0.4 x 1.2 m); give the chassis a "
                              "<shape> to set it")


def test_odometry_multipliers_explicit_and_seeded(load):
    w = load(veh("a", '<odometry x_multiplier="1.1" y_multiplier="0.9" yaw_multiplier="1.05"/>')
             + veh("b", '<odometry y_multiplier="1.2"/>') + veh("c"), seed=3)
    rng = WorldRandom(3)
    draws = [rng.normal(1.0, 0.02) for _ in range(9)]  # three per vehicle, whether written or not
    assert w.vehicles["a"].odometry_multipliers == (1.1, 0.9, 1.05)
    assert w.vehicles["b"].odometry_multipliers == (draws[3], 1.2, draws[5])
    assert w.vehicles["c"].odometry_multipliers == tuple(draws[6:9])
    assert all(0.9 < d < 1.1 for d in draws) and len(set(draws)) == 9
    again = load(veh("c"), seed=3).vehicles["c"].odometry_multipliers
    other = load(veh("c"), seed=4).vehicles["c"].odometry_multipliers
    assert again == tuple(draws[:3]) and other != again
    # the noise model's relative std. dev. per axis: |m - 1| where written, the default draw's σ elsewhere
    assert w.vehicles["a"].odometry_std == pytest.approx((0.1, 0.1, 0.05))
    assert w.vehicles["b"].odometry_std == pytest.approx((0.02, 0.2, 0.02))
    assert w.vehicles["c"].odometry_std == (0.02, 0.02, 0.02)
    exact = load(veh("e", '<odometry x_multiplier="1" y_multiplier="1" yaw_multiplier="1"/>')).vehicles["e"]
    assert exact.odometry_std == (0.0, 0.0, 0.0)  # noise off


@pytest.mark.parametrize(("text", "value"), [("true", True), ("1", True), ("false", False), ("0", False)])
def test_log_path_and_auto_start_recording(load, text, value):
    v = load(veh("v", f"<log_path>/tmp/logs/run_</log_path><auto_start_recording>{text}</auto_start_recording>")
             ).vehicles["v"]
    assert (v.log_path, v.auto_start_recording) == ("/tmp/logs/run_", value)


def test_sensor_order_and_duplicate_name(load):
    v = load(veh("v", '<sensor class="laser"/><sensor class="camera" name="cam"/><sensor class="laser"/>'
                      '<sensor class="imu" name="${PARENT_NAME}_imu"/>')).vehicles["v"]
    assert list(v.sensors) == ["laser1", "cam", "laser2", "v_imu"]
    assert [s.xml_class for s in v.sensors.values()] == ["laser", "camera", "laser", "imu"]
    with pytest.raises(mv.WorldFileError) as ei:
        load(veh("v", '\n<sensor class="laser" name="front"/>\n<sensor class="camera" name="front"/>'))
    assert ei.value.line == 4
    assert ei.value.message == ("duplicate sensor name 'front' in vehicle 'v'; give each sensor a unique "
                                'name="..."')

