"""The output model: each vehicle declares odometry, ground truth and collision; the kinds are documented once."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import mvsim_core as mv
from mvsim_core import outputs as om
from mvsim_core.outputs import (
    KINDS,
    SENSOR_KINDS,
    VEHICLE_KINDS,
    WORLD_FRAME,
    Output,
    OutputKind,
    PlanarOdometry,
    outputs_of,
    vehicle_roles,
)
from mvsim_core.sensors import outputs as sensor_outputs

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def driven() -> mv.World:
    """demo.world.xml after 3 s of bot1 on a curve."""
    w = mv.load_world(REPO / "worlds/demo.world.xml")
    w.vehicles["bot1"].set_twist(0.5, 0.0, 0.3)
    w.run(3.0)
    return w


def test_every_kind_is_documented_and_is_a_sensor_or_a_vehicle_kind():
    assert set(KINDS) == set(OutputKind)
    assert SENSOR_KINDS | VEHICLE_KINDS == set(OutputKind) and not SENSOR_KINDS & VEHICLE_KINDS
    assert VEHICLE_KINDS == {OutputKind.ODOMETRY, OutputKind.COLLISION, OutputKind.JOINT_STATE,
                             OutputKind.ROBOT_DESCRIPTION}
    assert all(info.summary and info.fields for info in KINDS.values())


def test_the_sensors_package_reexports_the_one_registry():
    for name in om.__all__:
        assert getattr(sensor_outputs, name) is getattr(om, name), name


def test_a_vehicle_declares_odometry_ground_truth_and_collision(driven):
    rows = [(o.kind, o.name, o.frame, o.period, dict(o.options)) for o in outputs_of(driven.vehicles["bot1"])]
    assert rows == [(OutputKind.ODOMETRY, "odom", "base_link", 0.0, {"parent": "odom"}),
                    (OutputKind.ODOMETRY, "base_pose_ground_truth", "base_link", 0.0, {"parent": WORLD_FRAME}),
                    (OutputKind.COLLISION, "collision", "base_link", 0.0, {}),
                    (OutputKind.JOINT_STATE, "joint_states", "base_link", 0.0, {}),
                    (OutputKind.ROBOT_DESCRIPTION, "robot_description", "base_link", 0.0, {"latched": True})]


def test_a_vehicle_samples_its_joint_state_and_description(driven):
    veh = driven.vehicles["bot1"]
    by_kind = {o.kind: o for o in outputs_of(veh)}
    js = by_kind[OutputKind.JOINT_STATE].observe(veh)
    assert js == veh.joint_state() and js.names == ("l_wheel_joint", "r_wheel_joint")
    assert js.positions == (float(veh.phi[0]), float(veh.phi[1]))
    text = by_kind[OutputKind.ROBOT_DESCRIPTION].observe(veh)
    assert text is veh.robot_description().urdf and text.startswith('<?xml version="1.0"?>\n<robot name="bot1">')


def test_the_samples_are_the_vehicle_state(driven):
    veh = driven.vehicles["bot1"]
    est, truth, bump = vehicle_roles(outputs_of(veh))
    assert est is not None and truth is not None and bump is not None
    ox, oy, oyaw = veh.odometry
    vx, vy, wz = veh.twist
    mx, my, myaw = veh.odometry_multipliers
    s = est.observe(veh)
    assert isinstance(s, PlanarOdometry)
    assert s == ((ox, oy, 0.0, oyaw, 0.0, 0.0), (vx * mx, vy * my, wz * myaw), veh.odometry_std)
    assert truth.observe(veh) == (veh.pose, veh.twist, None)
    assert vx == pytest.approx(0.5, abs=0.05) and wz == pytest.approx(0.3, abs=0.05)  # it is driving
    assert math.hypot(ox, oy) > 1.0  # 3 s at 0.5 m/s on a curve
    assert bump.observe(veh) is veh.collision is False


def test_roles_take_the_first_of_each_and_ignore_the_rest():
    a = Output(OutputKind.ODOMETRY, "a", "base_link", 0.0, options={"parent": "odom"})
    b = Output(OutputKind.ODOMETRY, "b", "base_link", 0.0, options={"parent": "odom"})
    g = Output(OutputKind.ODOMETRY, "g", "base_link", 0.0)  # no parent: the world
    c = Output(OutputKind.COLLISION, "c", "base_link", 0.0)
    scan = Output(OutputKind.SCAN, "s", "s", 0.1)
    assert vehicle_roles([scan, a, b, g, c]) == (a, g, c)
    assert vehicle_roles([scan]) == (None, None, None)
