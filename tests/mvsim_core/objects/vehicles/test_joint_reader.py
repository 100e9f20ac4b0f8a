"""A vehicle's joint state (Vehicle.joint_state): wheel spins from the wheel arrays, steering from the wheel yaws,
the equivalent centre angle and mimic joints."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from mvsim_core.objects.vehicles.description import Joint, JointSource, JointState, RobotDescription
from mvsim_core.objects.vehicles.joint_reader import JointReader, centre_angle


def test_wheel_angles_after_one_metre_are_distance_over_radius(load):
    w = load('<vehicle name="d"><dynamics class="differential"><controller class="twist_pid"/></dynamics>'
             "<init_pose>0 0 0</init_pose></vehicle>")
    veh = w.vehicles["d"]
    assert veh.joint_state() == JointState(("l_wheel_joint", "r_wheel_joint"), (0.0, 0.0), (0.0, 0.0))
    veh.set_twist(0.5, 0.0, 0.0)
    w.run(2.2)
    x = veh.pose[0]
    assert x == pytest.approx(1.0, abs=0.1)
    js = veh.joint_state()
    for k, wheel in enumerate(veh.wheels):
        assert js.positions[k] == pytest.approx(x / wheel.radius, rel=0.05)
        assert js.positions[k] == float(veh.phi[k]) and js.velocities[k] == float(veh.omega[k])
    assert js.velocities[0] == pytest.approx(0.5 / 0.2, rel=0.05)


def test_ackermann_steering_joints_are_the_wheel_angles(load):
    w = load('<vehicle name="c"><dynamics class="ackermann"><controller class="twist_front_steer_pid"/>'
             "</dynamics><init_pose>0 0 0</init_pose></vehicle>")
    veh = w.vehicles["c"]
    veh.set_twist(1.0, 0.0, 0.3)
    w.run(1.0)
    js = veh.joint_state()
    pos = dict(zip(js.names, js.positions, strict=True))
    fl, fr = veh.wheels[2].yaw, veh.wheels[3].yaw
    assert fl > fr > 0.1  # turning left: the left wheel is the inner one
    assert (pos["fl_wheel_steer_joint"], pos["fr_wheel_steer_joint"]) == (fl, fr)
    assert dict(zip(js.names, js.velocities, strict=True))["fl_wheel_steer_joint"] == 0.0
    # their equivalent centre angle is the commanded bicycle angle: tan δ = ω·wheelbase / v
    assert centre_angle([fl, fr]) == pytest.approx(math.atan(0.3 * 1.3 / 1.0), abs=0.02)


def test_centre_mimic_and_passive_sources(load):
    w = load('<vehicle name="c"><dynamics class="ackermann"><controller class="twist_front_steer_pid"/>'
             "</dynamics><init_pose>0 0 0</init_pose></vehicle>")
    veh = w.vehicles["c"]
    veh.set_twist(1.0, 0.0, 0.3)
    w.run(0.5)
    joints = (Joint("steer", "revolute", "base_link", "s", source=JointSource.STEER_CENTRE, wheels=(2, 3)),
              Joint("copy", "revolute", "base_link", "c", source=JointSource.MIMIC, mimic="back", multiplier=2.0,
                    offset=0.5),
              Joint("back", "continuous", "base_link", "b", source=JointSource.SPIN, wheels=(0, 1),
                    multiplier=-1.0),
              Joint("free", "continuous", "base_link", "f", source=JointSource.PASSIVE, offset=0.25),
              Joint("mount", "fixed", "base_link", "m"))
    d = RobotDescription("<robot/>", "base_link", 0.0, joints, ("base_link", "s", "c", "b", "f", "m"))
    js = JointReader(veh, d).read(veh)
    assert js.names == ("steer", "copy", "back", "free")
    mean_phi = (float(veh.phi[0]) + float(veh.phi[1])) / 2
    mean_omega = (float(veh.omega[0]) + float(veh.omega[1])) / 2
    assert js.positions[0] == centre_angle([veh.wheels[2].yaw, veh.wheels[3].yaw]) > 0.2
    assert js.positions[2] == -mean_phi and js.velocities[2] == -mean_omega
    assert js.positions[1] == pytest.approx(-2.0 * mean_phi + 0.5) and js.velocities[1] == -2.0 * mean_omega
    assert (js.positions[3], js.velocities[3]) == (0.25, 0.0)


def test_centre_angle_of_an_ackermann_pair():
    assert centre_angle([0.0, 0.0]) == 0.0
    assert centre_angle([]) == 0.0
    assert centre_angle([0.3, 0.3]) == pytest.approx(0.3)
    assert centre_angle([0.4, -0.4]) == 0.0  # cotangents cancel


def test_a_urdf_vehicle_reports_its_root_frame_and_height(load):
    w = load('<vehicle name="d"><dynamics class="differential"/><init_pose>1 2 0</init_pose></vehicle>')
    veh = w.vehicles["d"]
    gen = veh.robot_description()
    veh.description = replace(gen, root="body", height=0.125, source="robot.urdf")
    outs = veh.outputs()
    assert [o.frame for o in outs[:3]] == ["body"] * 3
    assert outs[0].observe(veh).pose[2] == 0.125
    truth = outs[1].observe(veh).pose
    assert truth[:3] == (1.0, 2.0, 0.125)
    assert veh.robot_description() is veh.description
