"""A sensor nobody reads costs nothing (mvsim_core.sensors.demand): sampling on demand, readers, ``enabled``, the
schedule's phase, and noise that stays each sensor's own whoever else samples."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.gym.env import restart

ROBOT = ('<vehicle name="bot"><init_pose>0 0 0</init_pose><dynamics class="differential">'
         '<l_wheel pos="0 0.2" diameter="0.2" width="0.05"/><r_wheel pos="0 -0.2" diameter="0.2" width="0.05"/>'
         '<controller class="twist_ideal"/></dynamics>{sensors}</vehicle>')
WALLS = ('<walls><wallThickness>0.2</wallThickness><wallHeight>2</wallHeight><shape>'
         '<pt>-4 -4</pt><pt>4 -4</pt> <pt>4 -4</pt><pt>4 4</pt> <pt>4 4</pt><pt>-4 4</pt> <pt>-4 4</pt><pt>-4 -4</pt>'
         '</shape></walls>')


def laser(name: str, period: float = 0.1, noise: float = 0.01) -> str:
    return (f'<sensor class="laser" name="{name}"><pose_3d>0 0 0.3 0 0 0</pose_3d><nrays>90</nrays>'
            f'<sensor_period>{period}</sensor_period><range_std_noise>{noise}</range_std_noise>'
            f'<angle_std_noise_deg>0.5</angle_std_noise_deg></sensor>')


IMU = ('<sensor class="imu" name="imu"><pose_3d>0.1 0 0.2 0 0 0</pose_3d><sensor_period>0.01</sensor_period>'
       '<angular_velocity_white_noise_std_noise>0</angular_velocity_white_noise_std_noise>'
       '<linear_acceleration_white_noise_std_noise>0</linear_acceleration_white_noise_std_noise>'
       '<angular_velocity_random_walk_std_noise>0</angular_velocity_random_walk_std_noise>'
       '<linear_acceleration_random_walk_std_noise>0</linear_acceleration_random_walk_std_noise></sensor>')


@pytest.fixture
def world(load: Callable[..., mv.World]) -> Callable[..., mv.World]:
    def make(sensors: str, *, seed: int = 0, on_demand: bool = True) -> mv.World:
        w = load(WALLS + ROBOT.format(sensors=sensors), seed=seed)
        w.sensors_on_demand = on_demand
        return w

    return make


def test_on_demand_nobody_reads_nothing_sampled(world: Callable[..., mv.World]) -> None:
    w = world(laser("a") + IMU)
    w.run(1.0)
    assert all(s.last is None for s in w.vehicles["bot"].sensors.values())
    assert w.sensor_scheduler.runs == 0


def test_a_reader_gets_the_next_sample_at_the_sensors_own_period(world: Callable[..., mv.World]) -> None:
    """The schedule keeps its phase while nobody reads: wanted at t = 0.53, the lidar (period 0.1) samples at 0.6."""
    w = world(laser("a"))
    a = w.vehicles["bot"].sensors["a"]
    w.run(0.53)
    a.want("me")
    assert a.readers == frozenset({"me"})
    w.run(0.05)
    assert a.last is None
    w.run(0.05)
    assert a.last.stamp == pytest.approx(0.6)
    a.unwant("me")
    w.run(0.5)
    assert a.last.stamp == pytest.approx(0.6)  # the latest sample taken stays
    a.want("me")
    a.want("me")  # wanting twice is wanting once
    a.unwant("me")
    w.run(0.2)
    assert a.last.stamp == pytest.approx(0.6)


def test_by_default_every_sensor_samples_and_enabled_false_stops_one(world: Callable[..., mv.World]) -> None:
    w = world(laser("a") + laser("b"), on_demand=False)
    b = w.vehicles["bot"].sensors["b"]
    b.enabled = False
    w.run(0.3)
    assert w.vehicles["bot"].sensors["a"].last.stamp == pytest.approx(0.3)
    assert b.last is None
    w.sensors_on_demand = True
    b.enabled = True
    b.want("me")
    w.run(0.1)
    assert b.last.stamp == pytest.approx(0.4)
    b.enabled = False
    w.run(0.2)
    assert b.last.stamp == pytest.approx(0.4)  # enabled False wins over the readers


def test_noise_of_one_sensor_does_not_depend_on_which_others_sample(world: Callable[..., mv.World]) -> None:
    """Lidar ``a``'s noisy scans are the same bits whether ``b`` samples too, or not, or everything samples."""
    scans = []
    for wanted in (("a",), ("a", "b"), None):
        w = world(laser("b", period=0.05) + laser("a"), on_demand=wanted is not None)
        for n in wanted or ():
            w.vehicles["bot"].sensors[n].want("me")
        a = w.vehicles["bot"].sensors["a"]
        got = []
        for _ in range(5):
            w.run(0.1)
            got.append(a.last.ranges.copy())
        scans.append(np.stack(got))
    assert np.array_equal(scans[0], scans[1]) and np.array_equal(scans[0], scans[2])
    assert np.std(scans[0][:, :] - scans[0][0]) > 0  # and there is noise
    other = world(laser("a"), seed=1, on_demand=False)
    other.run(0.1)
    assert not np.array_equal(other.vehicles["bot"].sensors["a"].last.ranges, scans[0][0])  # another seed


def test_reset_snapshot_and_gym_restart_replay_each_sensors_stream(world: Callable[..., mv.World]) -> None:
    w = world(laser("a"), on_demand=False)
    a = w.vehicles["bot"].sensors["a"]
    w.run(0.2)
    first = a.last.ranges.copy()
    state = w.snapshot()
    w.run(0.1)
    after = a.last.ranges.copy()
    w.restore(state)
    w.run(0.1)
    assert np.array_equal(a.last.ranges, after)  # a snapshot carries the sensor's stream
    w.reset()
    w.run(0.2)
    assert np.array_equal(a.last.ranges, first)  # a reset starts it again
    restart(w, None)  # a new episode goes on drawing where the last one left off
    w.run(0.2)
    assert not np.array_equal(a.last.ranges, first)
    restart(w, 0)  # ... unless seeded again
    w.run(0.2)
    assert np.array_equal(a.last.ranges, first)


def test_imu_after_a_gap_does_not_difference_across_it(world: Callable[..., mv.World]) -> None:
    """Read while the robot stands, then not while it speeds up to 0.5 m/s, then again while it cruises: the first
    sample after the gap reads no forward acceleration (it used to see 0.5 m/s gained over the gap)."""
    w = world(IMU)
    imu = w.vehicles["bot"].sensors["imu"]
    bot = w.vehicles["bot"]
    imu.want("me")
    w.run(0.2)
    assert imu.last.linear_acceleration[0] == pytest.approx(0.0, abs=1e-9)
    imu.unwant("me")
    bot.set_twist(0.5, 0.0, 0.0)
    w.run(2.0)
    assert bot.twist[0] == pytest.approx(0.5, abs=1e-3)
    imu.want("me")
    w.run(0.01)
    assert imu.last.stamp == pytest.approx(2.21)
    assert abs(imu.last.linear_acceleration[0]) < 1e-3
