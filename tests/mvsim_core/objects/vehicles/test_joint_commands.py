"""Vehicle.set_joint_commands (mvsim_core.objects.vehicles.joint_commands): wheel rates and steering positions by
joint name -> the twist or drive command they imply, on differential (2, 3, 4 wheels) and Ackermann vehicles."""

from __future__ import annotations

import math

import pytest

from mvsim_core.errors import ArgumentValueError, CommandValueError
from mvsim_core.objects.vehicles.description import Joint, JointSource, RobotDescription

TWIST_PID = '<controller class="twist_pid"><KP>100</KP><KI>5</KI><KD>0</KD><max_torque>100</max_torque></controller>'


def description(*joints: Joint) -> RobotDescription:
    """A hand-made description: base_link with the given joints (each to its own child link)."""
    return RobotDescription(urdf="<robot name='r'/>", root="base_link", height=0.0, joints=joints,
                            links=("base_link",) + tuple(j.child for j in joints))


def spin(name: str, *wheels: int, multiplier: float = 1.0) -> Joint:
    return Joint(name, "continuous", "base_link", name + "_link", axis=(0.0, 1.0, 0.0), source=JointSource.SPIN,
                 wheels=wheels, multiplier=multiplier)


def steer(name: str, wheel: int) -> Joint:
    return Joint(name, "revolute", "base_link", name + "_link", axis=(0.0, 0.0, 1.0), source=JointSource.STEER,
                 wheels=(wheel,))


def vehicle(load, dclass: str, controller: str, *joints: Joint):
    w = load(f'<vehicle name="v"><dynamics class="{dclass}">{controller}</dynamics>'
             "<init_pose>0 0 0</init_pose></vehicle>")
    veh = w.vehicles["v"]
    veh.description = description(*joints)
    return w, veh


def test_equal_rates_drive_straight_at_rate_times_radius(load):
    w, veh = vehicle(load, "differential", TWIST_PID, spin("l_wheel_joint", 0), spin("r_wheel_joint", 1))
    assert veh.set_joint_commands({"l_wheel_joint": 5.0, "r_wheel_joint": 5.0}, {}) == (1.0, 0.0, 0.0)  # 5 · 0.2 m
    w.run(3.0)
    vx, vy, wz = veh.twist
    assert vx == pytest.approx(1.0, rel=0.03) and abs(wz) < 0.01
    assert veh.omega[0] == pytest.approx(5.0, rel=0.03) and veh.omega[1] == pytest.approx(5.0, rel=0.03)


def test_opposite_rates_turn_on_the_spot(load):
    w, veh = vehicle(load, "differential", TWIST_PID, spin("l_wheel_joint", 0), spin("r_wheel_joint", 1))
    # w = (s_R - s_L) / track = (0.4 + 0.4) / 1.0
    assert veh.set_joint_commands({"l_wheel_joint": -2.0, "r_wheel_joint": 2.0}, {}) == (0.0, 0.0, 0.8)
    w.run(3.0)
    vx, _, wz = veh.twist
    assert wz == pytest.approx(0.8, rel=0.03) and abs(vx) < 0.02
    assert veh.omega[0] == pytest.approx(-2.0, rel=0.03) and veh.omega[1] == pytest.approx(2.0, rel=0.03)


def test_multiplier_maps_the_joint_axis_and_an_omitted_joint_keeps_its_value(load):
    # the right joint's axis points to the vehicle's right: multiplier -1, a negative rate rolls forward
    _, veh = vehicle(load, "differential", TWIST_PID, spin("l", 0), spin("r", 1, multiplier=-1.0))
    assert veh.set_joint_commands({"l": 5.0, "r": -5.0}, {}) == (1.0, 0.0, 0.0)
    # only l changes; r keeps -5 (rim 1 m/s): w = (1 - 0) / 1, v = 0 + w · 0.5
    assert veh.set_joint_commands({"l": 0.0}, {}) == (0.5, 0.0, 1.0)
    assert veh.set_joint_commands({}, {}) == (0.5, 0.0, 1.0)
    veh.stop()  # zeroes the remembered rates
    assert veh.set_joint_commands({"l": 1.0}, {}) == (0.1, 0.0, -0.2)


def test_refusals_name_the_joints_and_change_nothing(load):
    _, veh = vehicle(load, "differential", TWIST_PID, spin("l", 0), spin("r", 1))
    veh.set_joint_commands({"l": 1.0, "r": 1.0}, {})
    with pytest.raises(ArgumentValueError) as e:
        veh.set_joint_commands({"front": 1.0}, {})
    assert str(e.value) == ("vehicle 'v': set_joint_commands(): velocities must be keyed by commandable joints "
                            "(l (velocity), r (velocity)), not 'front'; refused, nothing changed")
    with pytest.raises(ArgumentValueError) as e:
        veh.set_joint_commands({}, {"l": 0.3})
    assert str(e.value) == ("vehicle 'v': set_joint_commands(): positions must be keyed by joints commanded by "
                            "position; joint 'l' takes a velocity (rad/s); refused, nothing changed")
    with pytest.raises(CommandValueError) as e:
        veh.set_joint_commands({"l": 2.0, "r": math.nan}, {})
    assert str(e.value) == "vehicle 'v': r velocity is nan; command ignored, the last good one stays"
    with pytest.raises(CommandValueError):
        veh.set_joint_commands({"l": math.inf}, {})
    assert tuple(veh.controller.setpoint) == (0.2, 0.0, 0.0)
    assert veh.set_joint_commands({"r": 3.0}, {}) == pytest.approx((0.4, 0.0, 0.4))  # l stayed 1.0, not 2.0


def test_limits_go_through_the_command_gate(load):
    _, veh = vehicle(load, "differential", TWIST_PID, spin("l", 0), spin("r", 1))
    veh.command_limits = veh.command_limits.replace(max_speed=0.5, max_omega=0.3)
    assert veh.set_joint_commands({"l": 10.0, "r": 20.0}, {}) == (0.5, 0.0, 0.3)  # asked (3, 0, 2)


def test_caster_is_not_commandable_and_mimic_joints_are_ignored(load):
    mimic = Joint("l_mirror", "continuous", "base_link", "mirror", source=JointSource.MIMIC, mimic="l",
                  multiplier=2.0)
    _, veh = vehicle(load, "differential_3_wheels", TWIST_PID, spin("l", 0), spin("r", 1), spin("caster", 2),
                     mimic)
    assert veh.set_joint_commands({"l": 5.0, "r": 5.0, "l_mirror": 99.0}, {}) == (1.0, 0.0, 0.0)
    with pytest.raises(ArgumentValueError, match=r"\(l \(velocity\), r \(velocity\)\), not 'caster'"):
        veh.set_joint_commands({"caster": 1.0}, {})


def test_skid_steer_takes_the_mean_of_each_side(load):
    _, veh = vehicle(load, "differential_4_wheels", TWIST_PID, spin("lr", 0), spin("rr", 1), spin("lf", 2),
                     spin("rf", 3))
    # left rims 0.2 and 0.6 m/s (mean 0.4), right 1.0 and 1.0: w = 0.6 / 1.0, v = 0.4 + 0.6 · 0.5
    vx, vy, wz = veh.set_joint_commands({"lr": 1.0, "lf": 3.0, "rr": 5.0, "rf": 5.0}, {})
    assert (vx, vy, wz) == (pytest.approx(0.7), 0.0, pytest.approx(0.6))


def test_ackermann_rear_rates_and_wheel_steering_give_speed_and_centre_angle(load):
    w, veh = vehicle(load, "ackermann", '<controller class="front_steer_pid"/>', spin("rl", 0), spin("rr", 1),
                     steer("fl_steer", 2), steer("fr_steer", 3))
    delta, v = 0.2, 2.0
    fl, fr = veh.dynamics.front_wheel_angles(delta)
    c = math.tan(delta) / veh.dynamics.wheelbase
    rates = {"rl": v * (1 - 0.9 * c) / 0.2, "rr": v * (1 + 0.9 * c) / 0.2}  # rear wheels at y = ±0.9 m, r = 0.2 m
    speed, angle = veh.set_joint_commands(rates, {"fl_steer": fl, "fr_steer": fr})
    assert speed == pytest.approx(v, abs=1e-9) and angle == pytest.approx(delta, abs=1e-9)
    assert (veh.controller.speed, veh.controller.steer_angle) == (speed, angle)
    # straight ahead: the speed is the mean rim speed
    assert veh.set_joint_commands({"rl": 10.0, "rr": 10.0}, {"fl_steer": 0.0, "fr_steer": 0.0}) == (2.0, 0.0)
    with pytest.raises(ArgumentValueError, match="joint 'fl_steer' takes a position"):
        veh.set_joint_commands({"fl_steer": 1.0}, {})
    w.run(4.0)
    assert veh.twist[0] == pytest.approx(2.0, rel=0.05)
