"""``<sensor class="laser">``: parameters, defaults, ray angles, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mvsim_core.errors import WorldFileError
from mvsim_core.sensors import Lidar2D
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import ParamValues
from mvsim_core.xml.parser import parse_text


def test_defaults(make_sensor):
    s, ctx = make_sensor('<sensor class="laser"/>')
    assert isinstance(s, Lidar2D)
    assert s.nrays == 181 and isinstance(s.nrays, int)
    assert s.fov == pytest.approx(math.pi)
    assert s.max_range == 80.0 and s.min_range == 0.01
    assert s.range_std_noise == 0.01
    assert s.angle_std_noise == pytest.approx(math.radians(0.01))
    assert s.period == 0.1
    p = s.params
    assert (p.bodies_visible, p.raytrace_3d, p.ignore_parent_body) == (True, False, False)
    assert (p.viz_visiblePlane, p.viz_visibleLines, p.viz_visiblePoints, p.viz_pointSize) == (False, True, False, 3.0)
    assert p.viz_pointsColor == (255, 0, 0, 128)
    assert p.viz_planeColor == (0, 0, 255, 16)
    assert ctx.warnings == []


def test_values(make_sensor):
    s, ctx = make_sensor('<sensor class="laser"><fov_degrees>270</fov_degrees><nrays>541</nrays>'
                         "<max_range>20</max_range><range_std_noise>0</range_std_noise>"
                         "<angle_std_noise_deg>0.5</angle_std_noise_deg><bodies_visible>false</bodies_visible>"
                         "<raytrace_3d>1</raytrace_3d><ignore_parent_body>true</ignore_parent_body>"
                         "<viz_pointsColor>#00ff00</viz_pointsColor></sensor>")
    assert (s.nrays, s.fov, s.max_range, s.range_std_noise) == (541, pytest.approx(math.radians(270)), 20.0, 0.0)
    assert s.angle_std_noise == pytest.approx(math.radians(0.5))
    assert (s.params.bodies_visible, s.params.raytrace_3d, s.params.ignore_parent_body) == (False, True, True)
    assert s.params.viz_pointsColor == (0, 255, 0, 255)
    assert ctx.warnings == []


def test_angles_ccw_from_minus_half_fov(make_sensor):
    s, _ = make_sensor('<sensor class="laser"/>')
    a = s.angles()
    assert a.dtype == np.float64 and a.shape == (181,)
    assert a[0] == pytest.approx(-math.pi / 2) and a[-1] == pytest.approx(math.pi / 2)
    assert a[90] == pytest.approx(0.0, abs=1e-15)
    np.testing.assert_allclose(np.diff(a), math.pi / 180, rtol=1e-12)


def test_single_ray_points_ahead(make_sensor):
    s, _ = make_sensor('<sensor class="laser"><nrays>1</nrays></sensor>')
    assert s.angles().tolist() == [0.0]


def test_full_circle(make_sensor):
    s, _ = make_sensor('<sensor class="laser"><fov_degrees>360</fov_degrees><nrays>5</nrays></sensor>')
    np.testing.assert_allclose(s.angles(), [-math.pi, -math.pi / 2, 0, math.pi / 2, math.pi])


@pytest.mark.parametrize("written, n", [("800", 800), ("800.7", 800), ("$f{(1/10)/125e-6}", 800), ("1e3", 1000)])
def test_nrays_fraction_dropped_like_c_scanf(make_sensor, written, n):
    s, _ = make_sensor(f'<sensor class="laser"><nrays>{written}</nrays></sensor>')
    assert s.nrays == n


@pytest.mark.parametrize("tag, value, words", [
    ("nrays", "0", "nrays"),
    ("nrays", "-3", "nrays"),
    ("nrays", "0.5", "nrays"),
    ("nrays", "many", "nrays"),
    ("nrays", "inf", "nrays"),
    ("fov_degrees", "0", "(0, 360]"),
    ("fov_degrees", "-90", "(0, 360]"),
    ("fov_degrees", "361", "(0, 360]"),
    ("max_range", "0", "max_range"),
    ("max_range", "-5", "max_range"),
    ("min_range", "-0.1", "min_range"),
    ("min_range", "80", "must be smaller than <max_range> (80 m)"),
    ("range_std_noise", "-0.01", "range_std_noise"),
    ("angle_std_noise_deg", "-1", "angle_std_noise_deg"),
    ("raytrace_3d", "yes", "raytrace_3d"),
    ("viz_pointsColor", "red", "viz_pointsColor"),
])
def test_bad_values_are_located(make_sensor, xml_file, tag, value, words):
    with pytest.raises(WorldFileError) as e:
        make_sensor(f'<sensor class="laser">\n  <sensor_period>0.1</sensor_period>\n  <{tag}>{value}</{tag}>\n'
                    f"</sensor>")
    assert (e.value.file, e.value.line) == (xml_file, 3)
    assert words in e.value.message
    assert str(e.value).startswith(f"{xml_file}:3: ")


def _lidar(nrays: int, fov: float) -> Lidar2D:
    params = ParamValues()
    params.update({"sensor_period": 0.1, "nrays": nrays, "fov_degrees": fov})
    node = parse_text('<sensor class="laser"/>', file="<t>")[0]
    return Lidar2D(name="l", parent="", params=params, node=node, pose=(0, 0, 0, 0, 0, 0))


@given(st.integers(2, 4000), st.floats(1e-3, 2 * math.pi))
def test_angles_are_symmetric_and_equally_spaced(n, fov):
    a = _lidar(n, fov).angles()
    assert len(a) == n
    assert a[0] == pytest.approx(-fov / 2) and a[-1] == pytest.approx(fov / 2)
    np.testing.assert_allclose(a + a[::-1], 0.0, atol=1e-12)
    np.testing.assert_allclose(np.diff(a), fov / (n - 1), rtol=1e-9)


def test_validation_runs_for_direct_construction_too():
    # from_xml validates; a hand-built object is the caller's responsibility, but the check itself is reusable.
    s = _lidar(10, 7.0)
    with pytest.raises(WorldFileError, match="360"):
        s._validate(ParseContext(env={}))
