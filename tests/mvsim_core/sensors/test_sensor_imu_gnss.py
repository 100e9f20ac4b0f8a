"""``<sensor class="imu">`` and ``<sensor class="gnss">``: noise parameters, aliases, default names."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mvsim_core.errors import WorldFileError
from mvsim_core.sensors import Gnss, Imu


def test_imu_defaults(make_sensor):
    s, ctx = make_sensor('<sensor class="imu"/>')
    assert isinstance(s, Imu)
    assert s.name == "imu1"
    assert (s.gyro_noise, s.accel_noise) == (2e-4, 0.017)
    p = s.params
    assert (p.angular_velocity_random_walk_std_noise, p.linear_acceleration_random_walk_std_noise) == (0.0, 0.0)
    assert (p.measure_orientation, p.orientation_std_noise) == (False, 0.005)
    assert ctx.warnings == []


def test_imu_legacy_noise_names_are_aliases(make_sensor):
    s, ctx = make_sensor('<sensor class="imu"><angular_velocity_std_noise>0.1</angular_velocity_std_noise>'
                         "<linear_acceleration_std_noise>0.2</linear_acceleration_std_noise></sensor>")
    assert (s.gyro_noise, s.accel_noise) == (0.1, 0.2)
    assert ctx.warnings == []


def test_imu_pose_2d(make_sensor):
    s, _ = make_sensor('<sensor class="imu"><pose>0.1 0.2 90</pose></sensor>')
    assert s.pose == pytest.approx((0.1, 0.2, 0, math.pi / 2, 0, 0))


@pytest.mark.parametrize("tag", ["angular_velocity_white_noise_std_noise", "linear_acceleration_std_noise",
                                 "angular_velocity_random_walk_std_noise", "orientation_std_noise"])
def test_imu_negative_noise_is_located(make_sensor, xml_file, tag):
    with pytest.raises(WorldFileError) as e:
        make_sensor(f'<sensor class="imu">\n  <{tag}>-1e-3</{tag}>\n</sensor>')
    assert (e.value.file, e.value.line) == (xml_file, 2)
    assert tag in e.value.message and "at least 0" in e.value.message


def test_gnss_defaults_and_name_prefix(make_sensor):
    s, ctx = make_sensor('<sensor class="gnss"/>')
    assert isinstance(s, Gnss)
    assert s.name == "gnss1"
    assert (s.params.horizontal_std_noise, s.params.vertical_std_noise) == (2.0, 4.0)
    np.testing.assert_array_equal(s.covariance_enu, np.diag([4.0, 4.0, 16.0]))
    assert ctx.warnings == []


@pytest.mark.parametrize("tag", ["horizontal_std_noise", "vertical_std_noise"])
def test_gnss_negative_noise_is_located(make_sensor, xml_file, tag):
    with pytest.raises(WorldFileError) as e:
        make_sensor(f'<sensor class="gnss">\n\n  <{tag}>-2</{tag}>\n</sensor>')
    assert (e.value.file, e.value.line) == (xml_file, 3)
    assert tag in e.value.message
