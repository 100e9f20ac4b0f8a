"""``<controller class="trajectory">`` (upstream 1.4): the timed path and its pure-pursuit twist as numbers, the XML
(attributes or tags, waypoints, errors), and vehicles following it in a world."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import mvsim_core as mv
from mvsim_core.dynamics.controllers import AckermannTrajectory, DifferentialTrajectory, Family
from mvsim_core.dynamics.controllers.trajectory import TimedPath, Waypoint
from mvsim_core.errors import WorldFileError
from mvsim_core.gui.teleop import Teleop

L_PATH = [Waypoint(0, 0, 0), Waypoint(10, 10, 0), Waypoint(20, 10, 10)]  # 1 m/s east, then 1 m/s north


# ---------------------------------------------------------------------- the path
def test_reference_interpolates_in_time_and_speed_is_segment_length_over_duration():
    p = TimedPath(L_PATH, loop=False)
    assert p.length == 20.0
    assert p.reference(5.0) == (5.0, 0.0, 5.0, 1.0)
    assert p.reference(15.0) == (10.0, 5.0, 15.0, 1.0)
    assert p.reference(-3.0) == (0.0, 0.0, 0.0, 1.0)  # clamped to the first waypoint
    assert p.reference(25.0) == (10.0, 10.0, 20.0, 1.0)  # ... and to the last
    fast = TimedPath([Waypoint(0, 0, 0), Waypoint(2, 3, 4)])
    assert fast.reference(1.0) == (1.5, 2.0, 2.5, 2.5)  # 5 m in 2 s


def test_loop_wraps_time_and_arc_length():
    p = TimedPath(L_PATH, loop=True)
    assert p.wrap_time(25.0) == 5.0
    assert p.wrap_time(-5.0) == 15.0
    assert p.reference(25.0) == (5.0, 0.0, 5.0, 1.0)
    assert p.position_at(-1.0) == (10.0, 9.0)
    assert p.position_at(21.0) == (1.0, 0.0)
    assert not p.finished(1e6)
    once = TimedPath(L_PATH, loop=False)
    assert once.position_at(21.0) == (10.0, 10.0) and once.position_at(-1.0) == (0.0, 0.0)
    assert once.position_at(12.0) == (10.0, 2.0)
    assert not once.finished(19.999) and once.finished(20.0)


def test_waypoints_are_sorted_by_time():
    p = TimedPath([L_PATH[2], L_PATH[0], L_PATH[1]])
    assert p.waypoints == tuple(L_PATH)


@pytest.mark.parametrize("wps, message", [
    ([Waypoint(0, 0, 0)], "at least 2 waypoints"),
    ([Waypoint(0, 0, 0), Waypoint(1, 1, 0), Waypoint(1, 2, 0)], "strictly increasing; t=1 is repeated"),
])
def test_bad_waypoints(wps, message):
    with pytest.raises(ValueError, match=message):
        TimedPath(wps)


def test_pure_pursuit_twist():
    p = TimedPath(L_PATH, loop=False, lookahead=0.5, max_omega=2.0)
    assert p.twist(5.0, 5.0, 0.0, 0.0) == (1.0, 0.0, 0.0)  # on the path, heading along it
    # 0.5 m right of the path: look-ahead point (0.5, 0.5) in the vehicle frame, κ = 2·0.5/0.5 = 2 1/m
    assert p.twist(5.0, 5.0, -0.5, 0.0) == (1.0, 0.0, 2.0)
    # 1 m right: (0.5, 1), κ = 2/1.25 = 1.6 1/m; from (4.5, -1) heading north the point is (1, -1): κ = -2/2
    assert p.twist(5.0, 5.0, -1.0, 0.0) == (1.0, 0.0, pytest.approx(1.6))
    assert p.twist(5.0, 4.5, -1.0, math.pi / 2) == (1.0, 0.0, pytest.approx(-1.0))
    assert p.twist(20.0, 10.0, 10.0, 0.0) == (0.0, 0.0, 0.0)  # finished


def test_angular_speed_limit_slows_down_keeping_the_curvature():
    p = TimedPath(L_PATH, lookahead=0.5, max_omega=1.0)
    vx, vy, om = p.twist(5.0, 5.0, -1.0, 0.0)  # κ = 1.6: ω would be 1.6 rad/s
    assert (vx, vy, om) == (pytest.approx(1.0 / 1.6), 0.0, 1.0)
    assert om / vx == pytest.approx(1.6)
    unlimited = TimedPath(L_PATH, lookahead=0.5, max_omega=0.0)
    assert unlimited.twist(5.0, 5.0, -1.0, 0.0) == (1.0, 0.0, pytest.approx(1.6))


def test_pause_and_reached_lookahead():
    paused = TimedPath([Waypoint(0, 0, 0), Waypoint(5, 0, 0), Waypoint(10, 5, 0)])
    assert paused.twist(2.0, 0.0, 0.0, 0.0) == (0.0, 0.0, 0.0)  # two waypoints at the same place: hold
    assert paused.twist(7.5, 2.5, 0.0, 0.0) == (1.0, 0.0, 0.0)
    no_lookahead = TimedPath(L_PATH, lookahead=0.0)
    assert no_lookahead.twist(5.0, 5.0, 0.0005, 1.0) == (1.0, 0.0, 0.0)  # within 1 mm: straight on


# ---------------------------------------------------------------------- the XML
def load(tmp_path: Path, dynamics: str, controller: str, extra: str = "") -> mv.World:
    p = tmp_path / "t.world.xml"
    p.write_text(f'<mvsim_world version="1.0">\n<vehicle name="v"><dynamics class="{dynamics}">{extra}\n'
                 f'{controller}\n</dynamics><init_pose>0 0 0</init_pose></vehicle></mvsim_world>\n')
    return mv.load_world(p)


WPS = '<waypoint t="0" x="0" y="0"/><waypoint t="10" x="10" y="0"/><waypoint t="20" x="10" y="10"/>'


def test_defaults_attributes_and_tags(tmp_path):
    w = load(tmp_path, "differential", f'<controller class="trajectory">{WPS}</controller>')
    c = w.vehicles["v"].controller
    assert type(c) is DifferentialTrajectory and c.family is Family.DIFFERENTIAL
    assert (c.path.loop, c.path.lookahead, c.path.max_omega) == (True, 0.5, 2.0)
    assert c.path.waypoints == tuple(L_PATH)
    assert not [m for m in w.warnings if "waypoint" in m]
    w = load(tmp_path, "ackermann", '<controller class="trajectory" loop="false" lookahead_distance="1.5" '
                                    f'max_angular_speed="0.5"><lookahead_distance>2</lookahead_distance>{WPS}'
                                    '</controller>')
    c = w.vehicles["v"].controller
    assert type(c) is AckermannTrajectory
    assert (c.path.loop, c.path.lookahead, c.path.max_omega) == (False, 2.0, 0.5)  # the tag wins
    assert "trajectory (ackermann, 3 waypoints, 20 m in 20 s)" in c.summary()


def test_not_for_drivetrain(tmp_path):
    with pytest.raises(WorldFileError, match='unknown controller class "trajectory" for ackermann_drivetrain'):
        load(tmp_path, "ackermann_drivetrain", f'<controller class="trajectory">{WPS}</controller>')


def test_too_few_waypoints(tmp_path):
    with pytest.raises(WorldFileError) as e:
        load(tmp_path, "differential", '<controller class="trajectory"><waypoint t="0" x="1" y="2"/></controller>')
    assert e.value.line == 3
    assert "needs at least 2 <waypoint" in e.value.message and "(got 1)" in e.value.message


def test_repeated_time_points_at_the_waypoint(tmp_path):
    with pytest.raises(WorldFileError) as e:
        load(tmp_path, "differential", '<controller class="trajectory">\n<waypoint t="0" x="1" y="2"/>\n'
                                       '<waypoint t="0" x="3" y="2"/></controller>')
    assert e.value.line == 4
    assert "strictly increasing; t=0 is repeated" in e.value.message


def test_times_closer_than_the_shortest_step(tmp_path):
    """1e-320 s apart, the reference speed (distance / time) was inf: the ideal twist blew the vehicle up."""
    with pytest.raises(WorldFileError) as e:
        load(tmp_path, "differential", '<controller class="trajectory">\n<waypoint t="0" x="1" y="2"/>\n'
                                       '<waypoint t="1e-320" x="3" y="2"/></controller>')
    assert e.value.line == 4
    assert e.value.message == ("waypoint times must be at least 0.0001 s apart; t=0 and t=9.99989e-321 are not in "
                               "<controller class=\"trajectory\">")


# ---------------------------------------------------------------------- in a world
def test_differential_drives_the_straight_segment_on_schedule(tmp_path):
    """1 m/s from t = 0: the first step computes the twist, so the body moves from the second step on, and Box2D's
    linear damping (chassis default 0.1 1/s) scales each step's advance by 1/(1 + 0.1·dt)."""
    w = load(tmp_path, "differential", '<controller class="trajectory" loop="false"><waypoint t="0" x="0" y="0"/>'
                                       '<waypoint t="10" x="10" y="0"/></controller>')
    v = w.vehicles["v"]
    dt = w.timestep
    w.run(5.0)
    assert v.twist == pytest.approx((1.0, 0.0, 0.0), abs=1e-9)
    assert v.pose[0] == pytest.approx(999 * dt / (1 + 0.1 * dt), abs=2e-4)  # 4.9925 m
    assert v.pose[1] == pytest.approx(0.0, abs=1e-9) and v.pose[3] == pytest.approx(0.0, abs=1e-9)
    w.run(5.5)
    assert v.twist == pytest.approx((0.0, 0.0, 0.0), abs=1e-9)  # the path is over: it stops there
    assert v.pose[0] == pytest.approx(2000 * dt / (1 + 0.1 * dt), abs=5e-4)


def test_ackermann_turns_the_corner_at_the_angular_speed_limit(tmp_path):
    w = load(tmp_path, "ackermann", f'<controller class="trajectory" loop="false">{WPS}</controller>',
             "<max_steer_ang_deg>40</max_steer_ang_deg>")
    v = w.vehicles["v"]
    dyn = v.dynamics
    w.run(10.0)
    vx, _, om = v.twist
    assert om == pytest.approx(2.0, abs=1e-6) and 0.7 < vx < 0.9  # slowed to keep the curvature
    # the equivalent steering angle atan(ω·L/vx) = 1.28 rad is clamped to max_steer (40°)
    fl, fr = v.wheels[2].yaw, v.wheels[3].yaw
    assert (fl, fr) == pytest.approx(dyn.front_wheel_angles(math.radians(40)), abs=1e-9)
    w.run(11.0)
    x, y, _, yaw, _, _ = v.pose
    assert v.twist == pytest.approx((0.0, 0.0, 0.0), abs=1e-9)
    assert math.hypot(x - 10.0, y - 10.0) < 0.1 and yaw == pytest.approx(math.pi / 2, abs=0.02)


def test_takes_no_commands(tmp_path):
    w = load(tmp_path, "differential", f'<controller class="trajectory">{WPS}</controller>')
    v = w.vehicles["v"]
    for call in (lambda: v.set_twist(1, 0, 0), lambda: v.drive(1, 0), lambda: v.set_torques((0, 0)), v.stop):
        with pytest.raises(mv.ControllerError, match="vehicle 'v'"):
            call()
    t = Teleop(w)
    assert not any(t.key(c) for c in "wsad ")
    assert t.help_lines() == ["[v: trajectory] 1-9 select, L/C/N logs"]


def test_waypoints_from_an_included_file(tmp_path):
    """As upstream's demo_trajectory.world.xml: the waypoints come from a snippet file included inside <controller>
    (several top-level <waypoint> elements; the file name from a variable)."""
    (tmp_path / "traj").mkdir()
    (tmp_path / "traj" / "square_loop.trajectory.xml").write_text(
        '<!-- an 8 m square at 0.67 m/s -->\n<waypoint t="0.0" x="0.0" y="0.0"/>\n'
        '<waypoint t="12.0" x="8.0" y="0.0"/>\n<waypoint t="24.0" x="8.0" y="8.0"/>\n'
        '<waypoint t="36.0" x="0.0" y="8.0"/>\n<waypoint t="48.0" x="0.0" y="0.0"/>\n')
    w = load(tmp_path, "differential", '<controller class="trajectory" loop="true">'
                                       '<variable name="TRAJECTORY" value="square_loop"/>'
                                       '<lookahead_distance>0.6</lookahead_distance>'
                                       '<include file="traj/${TRAJECTORY}.trajectory.xml"/></controller>')
    c = w.vehicles["v"].controller
    assert [(p.t, p.x, p.y) for p in c.path.waypoints] == [(0, 0, 0), (12, 8, 0), (24, 8, 8), (36, 0, 8), (48, 0, 0)]
    assert (c.path.loop, c.path.lookahead, c.path.length) == (True, 0.6, 32.0)
    assert c.path.reference(18.0) == (8.0, 4.0, 12.0, pytest.approx(8.0 / 12.0))
    assert not [m for m in w.warnings if "unknown tag" in m]
