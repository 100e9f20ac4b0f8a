"""Actors walk (§1.15; :meth:`mvsim_core.objects.actor.Actor.walk`, played by the physics on kinematic circles):
along their waypoints at their speed, pausing and looping; a 2D lidar sees them; a vehicle driving into one is
stopped by the contact."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.sensors.lidar2d import LaserScan

LIDAR = ('<sensor class="laser" name="laser1"><pose>0 0 0</pose><height>0.4</height><fov_degrees>180</fov_degrees>'
         '<nrays>181</nrays><max_range>20</max_range><sensor_period>0.1</sensor_period>'
         '<range_std_noise>0</range_std_noise><angle_std_noise_deg>0</angle_std_noise_deg></sensor>')


def world(tmp_path: Path, body: str) -> mv.World:
    p = tmp_path / "actors.world.xml"
    p.write_text('<mvsim_world version="1.0"><simul_timestep>0.005</simul_timestep>\n'
                 '<element class="horizontal_plane"><x_min>-20</x_min><y_min>-20</y_min><x_max>20</x_max>'
                 f'<y_max>20</y_max></element>\n{body}\n</mvsim_world>\n')
    return mv.load_world(p)


SQUARE = ('<actor name="bob"><walking_speed>1.0</walking_speed><path loop="true"><waypoint>0 0 0</waypoint>'
          '<waypoint pause="1">4 0 0</waypoint><waypoint>4 3 0</waypoint><waypoint>0 3 0</waypoint></path></actor>')


def expected(t: float) -> tuple[float, float]:
    """Where the SQUARE walker should be (computed here from its path, not from the engine's track): 1 m/s,
    (0, 0) → (4, 0) [4 s], pause 1 s, → (4, 3) [3 s], → (0, 3) [4 s], → (0, 0) [3 s]; period 15 s."""
    legs = [((0, 0), (4, 0), 4.0), ((4, 0), (4, 0), 1.0), ((4, 0), (4, 3), 3.0), ((4, 3), (0, 3), 4.0),
            ((0, 3), (0, 0), 3.0)]
    u = t % 15.0
    for a, b, d in legs:
        if u <= d:
            f = u / d
            return a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1])
        u -= d
    raise AssertionError


def test_a_looping_walker_is_where_its_path_says_at_every_sample(tmp_path):
    w = world(tmp_path, SQUARE)
    a = w.actors["bob"]
    for t in (2.0, 4.6, 6.5, 10.0, 14.0, 17.0):
        w.run(t - w.time)
        x, y, _, yaw, _, _ = a.pose
        ex, ey = expected(t)
        assert math.hypot(x - ex, y - ey) < 0.05, (t, (x, y), (ex, ey))
        body = w.physics.bodies.actor_bodies["bob"]
        assert (body.position[0], body.position[1]) == pytest.approx((x, y), abs=1e-4)
    # facing where it walks: at t = 17 s (2 s into its second round) it heads along +x
    assert a.pose[3] == pytest.approx(0.0, abs=1e-9)


def test_a_walker_that_does_not_loop_stays_at_its_last_waypoint(tmp_path):
    w = world(tmp_path, SQUARE.replace('loop="true"', 'loop="false"'))
    w.run(20.0)
    assert w.actors["bob"].pose[:2] == pytest.approx((0.0, 3.0), abs=1e-9)
    w.run(5.0)
    assert w.actors["bob"].pose[:2] == pytest.approx((0.0, 3.0), abs=1e-9)


def test_a_lidar_sees_an_actor_cross_in_front(tmp_path):
    """The actor (radius 0.3 m) walks along x = 3 from y = -2 to 2 and back; the ray straight ahead of a lidar at
    the origin reads about 2.7 m while it passes, nothing before and after. A dynamic crate stands to the left (the
    scene holds vehicles, then dynamic blocks, then actors) and is seen where it is; a second one stands behind."""
    crate = ''.join(f'<block name="crate{i}"><init_pose>{x} {y} 0</init_pose><mass>2</mass><zmax>0.5</zmax><shape>'
                    '<pt>-0.2 -0.2</pt><pt>0.2 -0.2</pt><pt>0.2 0.2</pt><pt>-0.2 0.2</pt></shape></block>'
                    for i, (x, y) in enumerate(((0, 4), (-5, 0))))
    w = world(tmp_path, f'<vehicle name="r1"><dynamics class="differential"/><init_pose>0 0 0</init_pose>{LIDAR}'
                        '</vehicle><actor name="bob"><walking_speed>1.0</walking_speed><path loop="true">'
                        f'<waypoint>3 -2 0</waypoint><waypoint>3 2 0</waypoint></path></actor>{crate}')
    seen = []
    for t in (1.0, 2.0, 3.0):
        w.run(t - w.time)
        scan = w.vehicles["r1"].sensors["laser1"].last
        assert isinstance(scan, LaserScan)
        seen.append(float(scan.ranges[int(np.argmin(np.abs(scan.angles)))]))
        left = float(scan.ranges[int(np.argmin(np.abs(scan.angles - math.pi / 2)))])
        assert left == pytest.approx(4.0 - 0.2 - scan.sensor_pose[1], abs=0.02)
    assert seen[0] == 20.0 and seen[2] == 20.0  # nothing: max range
    assert seen[1] == pytest.approx(3.0 - 0.3, abs=0.02)


def test_a_vehicle_driving_into_an_actor_is_stopped_by_the_contact(tmp_path):
    """The default differential robot (front at x + 0.6 m) drives at 0.5 m/s towards an actor standing at x = 2:
    it stops with its front against the actor's circle (x ≈ 2 - 0.3 - 0.6), flagged as colliding, and the actor
    stays where it stands."""
    w = world(tmp_path, '<vehicle name="r1"><dynamics class="differential"><controller class="twist_pid"/>'
                        '</dynamics><init_pose>0 0 0</init_pose></vehicle>'
                        '<actor name="bob"><init_pose>2 0 0</init_pose></actor>')
    v = w.vehicles["r1"]
    hit = False
    for _ in range(1200):  # 6 s: it would reach x = 3 unhindered
        v.set_twist(0.5, 0.0, 0.0)
        w.step()
        hit = hit or v.collision
    assert hit
    assert v.pose[0] == pytest.approx(2.0 - 0.3 - 0.6, abs=0.05)
    assert w.actors["bob"].pose[:2] == pytest.approx((2.0, 0.0), abs=1e-9)


def test_a_vehicle_driving_into_a_walkers_path_is_stopped_by_her(tmp_path):
    """An actor paces across the robot's way (x = 2, y from -0.5 to 0.5 and back, looping); the robot, driving at
    0.5 m/s along +x from far away (her body asleep until it comes near), is stopped by the contact at her circle's
    near side (x = 1.7) and flagged as colliding."""
    w = world(tmp_path, '<vehicle name="r1"><dynamics class="differential"><controller class="twist_pid"/>'
                        '</dynamics><init_pose>-3 0 0</init_pose></vehicle>'
                        '<actor name="ann"><walking_speed>0.5</walking_speed><path loop="true">'
                        '<waypoint>2 -0.5 90</waypoint><waypoint>2 0.5 90</waypoint></path></actor>')
    v = w.vehicles["r1"]
    body = w.start().physics.bodies.actor_bodies["ann"]
    hit, front = False, []
    for k in range(2400):  # 12 s: it would reach x = 3 unhindered
        v.set_twist(0.5, 0.0, 0.0)
        w.step()
        hit = hit or v.collision
        front.append(v.pose[0] + 0.6)
        if k == 10:
            assert not body.awake  # 4 m away: Box2D does not simulate her
    assert hit and body.awake
    # held at her: its front (x + 0.6, the robot turned a little by the pushes) within 10 cm of her near side
    assert 1.6 < max(front) < 1.7 + 0.1 and v.pose[0] < 1.2
    assert w.actors["ann"].pose[0] == pytest.approx(2.0, abs=1e-9)  # she is not pushed
