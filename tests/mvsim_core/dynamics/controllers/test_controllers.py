"""``<controller class="...">``: registry per family, defaults, setpoint units, validation, shipped vehicle files."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from mvsim_core.dynamics.controllers import (
    AckermannDrivetrainRaw,
    AckermannDrivetrainTwistFrontSteerPid,
    AckermannRaw,
    AckermannTrajectory,
    AckermannTwistFrontSteerPid,
    AckermannTwistIdeal,
    Controller,
    DifferentialRaw,
    DifferentialTrajectory,
    DifferentialTwistIdeal,
    DifferentialTwistPid,
    Family,
    FrontSteerPid,
    PidConfig,
    Twist2D,
)
from mvsim_core.errors import ControllerError, WorldFileError
from mvsim_core.xml.context import ParseContext

REPO = Path(__file__).resolve().parents[4]
VEHICLE_FILES = sorted((REPO.parent / "shared" / "worlds" / "definitions").glob("*.vehicle.xml")) + \
    sorted((REPO / "worlds" / "definitions").glob("*.vehicle.xml"))

DIFF, ACK, ACKDT = Family.DIFFERENTIAL, Family.ACKERMANN, Family.ACKERMANN_DRIVETRAIN


def build(xml_node, text: str, family, ctx: ParseContext | None = None) -> tuple[Controller, ParseContext]:
    ctx = ctx if ctx is not None else ParseContext(env={})
    return Controller.from_xml(xml_node(text), ctx, family), ctx


# ---------------------------------------------------------------------- families and registry
@pytest.mark.parametrize("dynamics, family", [("differential", DIFF), ("differential_3_wheels", DIFF),
                                              ("differential_4_wheels", DIFF), ("ackermann", ACK),
                                              ("ackermann_drivetrain", ACKDT), (ACK, ACK)])
def test_family_of_dynamics_class(dynamics, family):
    assert Family.parse(dynamics) is family


def test_unknown_dynamics_class():
    with pytest.raises(ValueError, match="tricycle"):
        Family.parse("tricycle")


def test_registry_per_family():
    assert Controller.registry == {
        (DIFF, "raw"): DifferentialRaw,
        (DIFF, "twist_pid"): DifferentialTwistPid,
        (DIFF, "twist_ideal"): DifferentialTwistIdeal,
        (DIFF, "trajectory"): DifferentialTrajectory,
        (ACK, "raw"): AckermannRaw,
        (ACK, "front_steer_pid"): FrontSteerPid,
        (ACK, "twist_front_steer_pid"): AckermannTwistFrontSteerPid,
        (ACK, "twist_ideal"): AckermannTwistIdeal,
        (ACK, "trajectory"): AckermannTrajectory,
        (ACKDT, "raw"): AckermannDrivetrainRaw,
        (ACKDT, "front_steer_pid"): FrontSteerPid,
        (ACKDT, "twist_front_steer_pid"): AckermannDrivetrainTwistFrontSteerPid,
    }
    assert Controller.known_classes("ackermann_drivetrain") == ["front_steer_pid", "raw", "twist_front_steer_pid"]


@pytest.mark.parametrize("family, cls", [(DIFF, DifferentialRaw), ("differential_4_wheels", DifferentialRaw),
                                         (ACK, AckermannRaw), (ACKDT, AckermannDrivetrainRaw)])
def test_absent_controller_is_raw(family, cls):
    c = Controller.from_xml(None, ParseContext(env={}), family)
    assert type(c) is cls and c.xml_class == "raw" and c.node is None
    assert not c.accepts_twist


def test_twist_ideal_does_not_exist_for_drivetrain(xml_node, xml_file):
    with pytest.raises(WorldFileError) as e:
        build(xml_node, '<controller\n class="twist_ideal"/>', "ackermann_drivetrain")
    assert (e.value.file, e.value.line) == (xml_file, 2)
    m = e.value.message
    assert '"twist_ideal"' in m and "ackermann_drivetrain" in m
    assert "exists only for ackermann, differential" in m
    assert "front_steer_pid, raw, twist_front_steer_pid" in m


def test_unknown_class_names_class_family_and_known(xml_node, xml_file):
    with pytest.raises(WorldFileError) as e:
        build(xml_node, '<controller class="mpc"/>', DIFF)
    assert (e.value.file, e.value.line) == (xml_file, 1)
    assert e.value.message == ('unknown controller class "mpc" for differential dynamics; '
                               "controllers of differential vehicles: raw, trajectory, twist_ideal, twist_pid")


def test_missing_class(xml_node, xml_file):
    with pytest.raises(WorldFileError) as e:
        build(xml_node, "\n<controller><KP>1</KP></controller>", ACK)
    assert (e.value.file, e.value.line) == (xml_file, 2)
    assert 'class="..."' in e.value.message


def test_class_attribute_is_substituted(xml_node):
    c, _ = build(xml_node, '<controller class="${controller|twist_ideal}"/>', DIFF)
    assert type(c) is DifferentialTwistIdeal
    c, _ = build(xml_node, '<controller class="${controller|twist_ideal}"/>', DIFF,
                 ParseContext(env={}, variables={"controller": "twist_pid"}))
    assert type(c) is DifferentialTwistPid


# ---------------------------------------------------------------------- defaults
PID_DEFAULTS = {"KI": 0.0, "KD": 0.0, "N": 0.0, "enable_antiwindup": False, "enable_feedforward": False,
                "feedforward_gain": 1.0, "enable_reference_filter": False, "reference_filter_tau": 0.1,
                "reference_filter_order": 1, "V": 0.0, "W": 0.0}


@pytest.mark.parametrize("family, cls_name, kp, max_torque, thresholds", [
    (DIFF, "twist_pid", 10.0, 100.0, False),
    (ACK, "twist_front_steer_pid", 100.0, 100.0, True),
    (ACKDT, "twist_front_steer_pid", 100.0, 400.0, True),
])
def test_pid_controller_defaults(xml_node, family, cls_name, kp, max_torque, thresholds):
    c, ctx = build(xml_node, f'<controller class="{cls_name}"/>', family)
    expected = {**PID_DEFAULTS, "KP": kp, "max_torque": max_torque}
    if thresholds:
        expected |= {"zero_threshold": 0.001, "stop_threshold": 0.05}
        assert (c.zero_threshold, c.stop_threshold) == (0.001, 0.05)
    assert dict(c.params) == expected
    assert c.pid == PidConfig(kp=kp, max_out=max_torque)
    assert c.setpoint == Twist2D(0.0, 0.0, 0.0)
    assert c.accepts_twist
    assert ctx.warnings == []


@pytest.mark.parametrize("family", [ACK, ACKDT])
def test_front_steer_pid_defaults(xml_node, family):
    c, ctx = build(xml_node, '<controller class="front_steer_pid"/>', family)
    assert isinstance(c, FrontSteerPid) and c.family is family
    assert dict(c.params) == {"KP": 100.0, "KI": 0.0, "KD": 0.0, "max_torque": 100.0, "V": 0.0, "STEER_ANG": 0.0}
    assert (c.speed, c.steer_angle) == (0.0, 0.0)
    assert not c.accepts_twist
    assert ctx.warnings == []


# ---------------------------------------------------------------------- setpoints and units
def test_twist_setpoint_w_in_degrees_per_second(xml_node):
    c, _ = build(xml_node, '<controller class="twist_pid"><V>0.5</V><W>90</W></controller>', DIFF)
    assert c.setpoint.vx == 0.5
    assert c.setpoint.omega == pytest.approx(math.pi / 2)
    assert c.params["W"] == pytest.approx(math.pi / 2)


def test_front_steer_setpoint_in_degrees(xml_node):
    c, _ = build(xml_node, '<controller class="front_steer_pid"><V>2</V><STEER_ANG>-15</STEER_ANG></controller>',
                 ACK)
    assert (c.speed, c.steer_angle) == (2.0, pytest.approx(math.radians(-15)))
    c.set_command(1.0, 0.1)
    assert (c.speed, c.steer_angle) == (1.0, 0.1)


def test_raw_ackermann_torques_and_steering(xml_node):
    c, ctx = build(xml_node, '<controller class="raw"><fl_torque>-3</fl_torque><fr_torque>-4.5</fr_torque>'
                             "<steer_ang_deg>10</steer_ang_deg></controller>", ACK)
    assert (c.torque_fl, c.torque_fr, c.steer_angle) == (-3.0, -4.5, pytest.approx(math.radians(10)))
    assert ctx.warnings == []


def test_raw_drivetrain_torque_and_steering(xml_node):
    c, _ = build(xml_node, '<controller class="raw"><torque>-20</torque><steer_ang_deg>-5</steer_ang_deg>'
                           "</controller>", ACKDT)
    assert (c.torque, c.steer_angle) == (-20.0, pytest.approx(math.radians(-5)))


def test_raw_differential_has_no_parameters(xml_node, xml_file):
    c, ctx = build(xml_node, '<controller class="raw">\n<torque>1</torque></controller>', DIFF)
    assert (c.torque_l, c.torque_r) == (0.0, 0.0)
    assert ctx.warnings == [f'{xml_file}:2: unknown tag <torque> in <controller class="raw"> is ignored']


def test_set_twist(xml_node):
    for family, cls_name in [(DIFF, "twist_pid"), (DIFF, "twist_ideal"), (ACK, "twist_ideal"),
                             (ACK, "twist_front_steer_pid"), (ACKDT, "twist_front_steer_pid")]:
        c, _ = build(xml_node, f'<controller class="{cls_name}"/>', family)
        c.set_twist(1.0, 0.0, 0.25)
        assert c.setpoint == Twist2D(1.0, 0.0, 0.25)


@pytest.mark.parametrize("family, cls_name", [(DIFF, "raw"), (ACK, "raw"), (ACKDT, "raw"),
                                              (ACK, "front_steer_pid"), (ACKDT, "front_steer_pid")])
def test_controllers_refusing_twist(xml_node, family, cls_name):
    c, _ = build(xml_node, f'<controller class="{cls_name}"/>', family)
    assert not c.accepts_twist
    with pytest.raises(ControllerError, match=cls_name):
        c.set_twist(1.0, 0.0, 0.0)


# ---------------------------------------------------------------------- tolerated and unknown tags
def test_twist_ideal_ignores_pid_tags_silently(xml_node):
    c, ctx = build(xml_node, '<controller class="twist_ideal"><KP>1.0</KP><KI>1.0</KI><I_MAX>1.0</I_MAX><KD>0</KD>'
                             "<V>0.3</V><W>0</W><max_torque>5</max_torque></controller>", DIFF)
    assert ctx.warnings == []
    assert dict(c.params) == {}
    assert c.setpoint == Twist2D()  # upstream's twist_ideal reads no initial setpoint


def test_i_max_is_tolerated_by_pid_controllers(xml_node):
    for family, cls_name in [(DIFF, "twist_pid"), (ACK, "twist_front_steer_pid"), (ACK, "front_steer_pid")]:
        _, ctx = build(xml_node, f'<controller class="{cls_name}"><I_MAX>20</I_MAX></controller>', family)
        assert ctx.warnings == []


def test_unknown_tag_is_warned(xml_node, xml_file):
    _, ctx = build(xml_node, '<controller class="twist_pid">\n  <Kp>3</Kp>\n</controller>', DIFF)
    assert ctx.warnings == [f'{xml_file}:2: unknown tag <Kp> in <controller class="twist_pid"> is ignored']


def test_thresholds_only_where_upstream_reads_them(xml_node, xml_file):
    _, ctx = build(xml_node, '<controller class="twist_pid">\n<zero_threshold>0.1</zero_threshold></controller>',
                   DIFF)
    assert ctx.warnings == [f'{xml_file}:2: unknown tag <zero_threshold> in <controller class="twist_pid"> '
                            f"is ignored"]


# ---------------------------------------------------------------------- values and validation
def test_all_pid_values(xml_node):
    c, _ = build(xml_node, '<controller class="twist_front_steer_pid"><KP>150</KP><KI>59</KI><KD>0.5</KD><N>20</N>'
                           "<max_torque>400.94</max_torque><enable_antiwindup>true</enable_antiwindup>"
                           "<enable_feedforward>1</enable_feedforward><feedforward_gain>2</feedforward_gain>"
                           "<enable_reference_filter>true</enable_reference_filter>"
                           "<reference_filter_tau>0.3</reference_filter_tau>"
                           "<reference_filter_order>2</reference_filter_order><zero_threshold>0.01"
                           "</zero_threshold><stop_threshold>0.1</stop_threshold></controller>", ACK)
    assert c.pid == PidConfig(kp=150, ki=59, kd=0.5, n=20, max_out=400.94, antiwindup=True, feedforward=True,
                              feedforward_gain=2, reference_filter=True, reference_filter_tau=0.3,
                              reference_filter_order=2)
    assert (c.zero_threshold, c.stop_threshold) == (0.01, 0.1)


@pytest.mark.parametrize("family, cls_name, tag, value, words", [
    (DIFF, "twist_pid", "KP", "-1", "at least 0"),
    (DIFF, "twist_pid", "KI", "-0.5", "at least 0"),
    (DIFF, "twist_pid", "KD", "-2", "at least 0"),
    (DIFF, "twist_pid", "max_torque", "0", "greater than 0"),
    (DIFF, "twist_pid", "reference_filter_tau", "0", "greater than 0"),
    (DIFF, "twist_pid", "reference_filter_order", "3", "must be 1 or 2"),
    (DIFF, "twist_pid", "reference_filter_order", "1.5", "integer"),
    (DIFF, "twist_pid", "N", "-1", "at least 0"),
    (DIFF, "twist_pid", "enable_antiwindup", "on", "bool"),
    (DIFF, "twist_pid", "W", "fast", "angle"),
    (ACK, "twist_front_steer_pid", "stop_threshold", "-0.05", "at least 0"),
    (ACKDT, "twist_front_steer_pid", "max_torque", "-400", "greater than 0"),
    (ACK, "front_steer_pid", "KP", "-100", "at least 0"),
    (ACK, "front_steer_pid", "STEER_ANG", "left", "angle"),
    (ACK, "raw", "steer_ang_deg", "x", "angle"),
])
def test_bad_values_are_located(xml_node, xml_file, family, cls_name, tag, value, words):
    with pytest.raises(WorldFileError) as e:
        build(xml_node, f'<controller class="{cls_name}">\n  <!-- line 2 -->\n  <{tag}>{value}</{tag}>\n</controller>',
              family)
    assert (e.value.file, e.value.line) == (xml_file, 3)
    assert tag in e.value.message and words in e.value.message


# ---------------------------------------------------------------------- shipped vehicle definitions
@pytest.mark.parametrize("path", VEHICLE_FILES, ids=lambda p: p.name)
def test_shipped_vehicle_controllers_parse_without_warnings(path, vehicle_classes):
    seen = 0
    for dynamics, root in vehicle_classes(path):
        ctx = ParseContext(env={})
        c = Controller.from_xml(root.child("dynamics").child("controller"), ctx, dynamics)
        assert c.family is Family.parse(dynamics)
        assert ctx.warnings == []
        seen += 1
    assert seen >= 1


def test_shipped_values(defs_dir_vehicle):
    ack = defs_dir_vehicle("ackermann.vehicle.xml")
    assert isinstance(ack, AckermannTwistFrontSteerPid)
    assert (ack.pid.kp, ack.pid.ki, ack.pid.max_out) == (150.2758, 59.1637, 400.94)
    agri = defs_dir_vehicle("agricobiot2.vehicle.xml")
    assert isinstance(agri, AckermannDrivetrainTwistFrontSteerPid)
    assert (agri.pid.kp, agri.pid.ki, agri.pid.max_out) == (100, 5, 400)
    small = defs_dir_vehicle("small_robot.vehicle.xml")
    assert isinstance(small, DifferentialTwistPid)
    assert (small.pid.kp, small.pid.ki, small.pid.max_out) == (4.1543, 1.9118, 14.44)
    assert isinstance(defs_dir_vehicle("jackal.vehicle.xml"), DifferentialTwistIdeal)
    assert isinstance(defs_dir_vehicle("turtlebot3_burger.vehicle.xml"), DifferentialTwistIdeal)


@pytest.fixture
def defs_dir_vehicle(vehicle_classes):
    """``defs_dir_vehicle(name)``: the controller of the first vehicle class of an upstream definition file."""
    base = REPO.parent / "shared" / "worlds" / "definitions"
    if not base.is_dir():
        pytest.skip("shared data not available")

    def _get(name: str) -> Controller:
        dynamics, root = next(iter(vehicle_classes(base / name)))
        return Controller.from_xml(root.child("dynamics").child("controller"), ParseContext(env={}), dynamics)

    return _get
