"""``<sensor class="lidar3d">``: beams, defaults, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mvsim_core.errors import WorldFileError
from mvsim_core.sensors import Lidar3D


def test_defaults(make_sensor):
    s, ctx = make_sensor('<sensor class="lidar3d"/>')
    assert isinstance(s, Lidar3D)
    assert s.name == "laser1"
    assert (s.vert_nrays, s.horz_nrays) == (16, 180)
    assert s.vert_fov == pytest.approx(math.radians(30))
    assert (s.min_range, s.max_range, s.params.range_std_noise) == (0.01, 80.0, 0.01)
    p = s.params
    assert (p.horz_resolution_factor, p.vert_resolution_factor) == (1.0, 1.0)
    assert (p.max_vert_relative_depth_to_interpolate, p.max_horz_relative_depth_to_interpolate) == (0.30, 0.10)
    assert (p.generate_intensity, p.ignore_parent_body, p.viz_pointSize) == (True, False, 3.0)
    assert ctx.warnings == []
    a = s.vertical_angles()
    assert a.dtype == np.float64
    np.testing.assert_allclose(a, np.radians(np.linspace(-15, 15, 16)), atol=1e-15)


def test_even_beams_from_fov(make_sensor):
    s, _ = make_sensor('<sensor class="lidar3d"><vert_fov_degrees>40</vert_fov_degrees><vert_nrays>5</vert_nrays>'
                       "</sensor>")
    np.testing.assert_allclose(s.vertical_angles(), np.radians([-20, -10, 0, 10, 20]), atol=1e-15)


def test_single_beam_is_horizontal(make_sensor):
    s, _ = make_sensor('<sensor class="lidar3d"><vert_nrays>1</vert_nrays></sensor>')
    assert s.vertical_angles().tolist() == [0.0]


def test_listed_angles_sorted_ascending_and_count_taken_from_the_list(make_sensor):
    s, ctx = make_sensor('<sensor class="lidar3d"><vertical_ray_angles>10 -30, 2.5\n -1</vertical_ray_angles>'
                         "</sensor>")
    assert s.vert_nrays == 4
    np.testing.assert_allclose(s.vertical_angles(), np.radians([-30, -1, 2.5, 10]))
    assert s.vert_fov == pytest.approx(math.radians(40))
    assert ctx.warnings == []


def test_listed_angles_override_fov(make_sensor):
    s, _ = make_sensor('<sensor class="lidar3d"><vert_fov_degrees>90</vert_fov_degrees><vert_nrays>2</vert_nrays>'
                       "<vertical_ray_angles>-1 1</vertical_ray_angles></sensor>")
    np.testing.assert_allclose(s.vertical_angles(), np.radians([-1, 1]))


def test_count_mismatch_is_an_error_naming_both(make_sensor, xml_file):
    with pytest.raises(WorldFileError) as e:
        make_sensor('<sensor class="lidar3d">\n  <vert_nrays>3</vert_nrays>\n'
                    "  <vertical_ray_angles>-1 0 1 2</vertical_ray_angles>\n</sensor>")
    assert (e.value.file, e.value.line) == (xml_file, 3)
    assert "4 angles" in e.value.message and "is 3 (line 2)" in e.value.message


@pytest.mark.parametrize("listed, words", [("-1 0 0", "twice"), ("-95 0", "[-90, 90]"), ("", "empty"),
                                           ("a b", "vertical_ray_angles")])
def test_bad_angle_lists(make_sensor, xml_file, listed, words):
    with pytest.raises(WorldFileError) as e:
        make_sensor(f'<sensor class="lidar3d">\n  <vertical_ray_angles>{listed}</vertical_ray_angles>\n</sensor>')
    assert (e.value.file, e.value.line) == (xml_file, 2)
    assert words in e.value.message


@pytest.mark.parametrize("tag, value, words", [
    ("vert_fov_degrees", "0", "(0, 180]"),
    ("vert_fov_degrees", "200", "(0, 180]"),
    ("vert_nrays", "0", "vert_nrays"),
    ("horz_nrays", "0.9", "horz_nrays"),
    ("min_range", "0", "min_range"),
    ("max_range", "-1", "max_range"),
    ("min_range", "100", "smaller than <max_range>"),
    ("range_std_noise", "-1", "range_std_noise"),
    ("horz_resolution_factor", "0", "horz_resolution_factor"),
    ("generate_intensity", "2", "generate_intensity"),
])
def test_bad_values_are_located(make_sensor, xml_file, tag, value, words):
    with pytest.raises(WorldFileError) as e:
        make_sensor(f'<sensor class="lidar3d">\n\n  <{tag}>{value}</{tag}>\n</sensor>')
    assert (e.value.file, e.value.line) == (xml_file, 3)
    assert words in e.value.message


def test_horz_nrays_fraction_dropped(make_sensor):
    s, _ = make_sensor('<sensor class="lidar3d"><horz_nrays>$f{(60.0/600)/55.296e-6}</horz_nrays></sensor>')
    assert s.horz_nrays == 1808


def test_summary(make_sensor):
    s, _ = make_sensor('<sensor class="lidar3d" name="v"/>')
    assert s.summary() == "v (lidar3d, 16×180 rays, 30° vertical, 10 Hz)"
