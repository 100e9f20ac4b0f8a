"""GNSS fixes from running worlds (reference §1.7, §1.9 ``gps_no_coverage``, §1.12 ``gnss``).

Positions are checked against an independent WGS84 computation written here (geodetic → ECEF by the textbook
formula, ECEF → geodetic by Heikkinen's closed form, no iteration), and against pyproj when it is installed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import mvsim_core as mv
from mvsim_core.sensors.gnss import (
    GGA_NO_FIX,
    NO_GEOREFERENCE_WARNING,
    GnssFix,
    ecef_to_geodetic,
    enu_to_geodetic,
    geodetic_to_ecef,
    geodetic_to_enu,
    geodetic_to_utm,
    utm_zone,
)

LAT0, LON0, H0 = 36.0, -2.0, 100.0
CM_LAT = 0.01 / 111_000.0  # degrees of latitude in 1 cm (longitude: divide by cos(lat) too)

# ---------------------------------------------------------------------- independent reference
A, F = 6378137.0, 1.0 / 298.257223563
B = A * (1.0 - F)
E2 = 1.0 - (B / A) ** 2


def ref_ecef(lat: float, lon: float, h: float) -> np.ndarray:
    la, lo = math.radians(lat), math.radians(lon)
    n = A / math.sqrt(1.0 - E2 * math.sin(la) ** 2)
    return np.array([(n + h) * math.cos(la) * math.cos(lo), (n + h) * math.cos(la) * math.sin(lo),
                     (n * (B / A) ** 2 + h) * math.sin(la)])


def ref_geodetic(ecef: np.ndarray) -> tuple[float, float, float]:
    """Heikkinen (1982), exact closed form."""
    x, y, z = ecef
    ep2 = (A * A - B * B) / (B * B)
    p = math.hypot(x, y)
    f_ = 54.0 * B * B * z * z
    g = p * p + (1.0 - E2) * z * z - E2 * (A * A - B * B)
    c = E2 * E2 * f_ * p * p / g ** 3
    s = (1.0 + c + math.sqrt(c * c + 2.0 * c)) ** (1.0 / 3.0)
    k = s + 1.0 + 1.0 / s
    pp = f_ / (3.0 * k * k * g * g)
    q = math.sqrt(1.0 + 2.0 * E2 * E2 * pp)
    r0 = (-pp * E2 * p / (1.0 + q)
          + math.sqrt(0.5 * A * A * (1.0 + 1.0 / q) - pp * (1.0 - E2) * z * z / (q * (1.0 + q)) - 0.5 * pp * p * p))
    u = math.hypot(p - E2 * r0, z)
    v = math.sqrt((p - E2 * r0) ** 2 + (1.0 - E2) * z * z)
    z0 = B * B * z / (A * v)
    return (math.degrees(math.atan((z + ep2 * z0) / p)), math.degrees(math.atan2(y, x)), u * (1.0 - B * B / (A * v)))


def ref_enu_to_geodetic(e: float, n: float, u: float) -> tuple[float, float, float]:
    la, lo = math.radians(LAT0), math.radians(LON0)
    east = np.array([-math.sin(lo), math.cos(lo), 0.0])
    north = np.array([-math.sin(la) * math.cos(lo), -math.sin(la) * math.sin(lo), math.cos(la)])
    up = np.array([math.cos(la) * math.cos(lo), math.cos(la) * math.sin(lo), math.sin(la)])
    return ref_geodetic(ref_ecef(LAT0, LON0, H0) + e * east + n * north + u * up)


def assert_within_1cm(fix: GnssFix, expected: tuple[float, float, float]) -> None:
    lat, lon, h = expected
    assert abs(fix.latitude - lat) < CM_LAT
    assert abs(fix.longitude - lon) < CM_LAT / math.cos(math.radians(lat))
    assert abs(fix.altitude - h) < 0.01


# ---------------------------------------------------------------------- worlds
def gnss_xml(name: str = "gps1", pose: str = "", sh: float = 0.0, sv: float = 0.0, period: float = 0.1) -> str:
    return (f'<sensor class="gnss" name="{name}"><sensor_period>{period}</sensor_period>{pose}'
            f"<horizontal_std_noise>{sh}</horizontal_std_noise><vertical_std_noise>{sv}</vertical_std_noise></sensor>")


def georef(rotation_deg: float = 0.0, lat: float = LAT0, lon: float = LON0, h: float = H0, utm: bool = False) -> str:
    return (f"<georeference><latitude>{lat}</latitude><longitude>{lon}</longitude><height>{h}</height>"
            f"<world_to_enu_rotation_deg>{rotation_deg}</world_to_enu_rotation_deg>"
            f"<world_is_utm>{'true' if utm else 'false'}</world_is_utm></georeference>")


def vehicle(name: str, x: float, y: float, sensors: str, yaw_deg: float = 0.0) -> str:
    return f"""<vehicle name="{name}">
  <dynamics class="differential"><controller class="twist_ideal"/></dynamics>
  <init_pose>{x} {y} {yaw_deg}</init_pose>
  {sensors}
</vehicle>"""


def make_world(tmp_path, body: str, *, head: str = "", seed: int = 0) -> mv.World:
    (tmp_path / "w.xml").write_text(f'<mvsim_world version="1.0">\n<simul_timestep>0.005</simul_timestep>\n{head}\n'
                                    f"{body}\n</mvsim_world>\n")
    return mv.load_world(tmp_path / "w.xml", seed=seed)


def fix_of(world: mv.World, vehicle_name: str = "v", sensor: str = "gps1") -> GnssFix | None:
    return world.vehicles[vehicle_name].sensors[sensor].last


# ---------------------------------------------------------------------- positions
def test_known_enu_offset(tmp_path):
    w = make_world(tmp_path, vehicle("v", 100.0, 50.0, gnss_xml()), head=georef())
    w.run(0.1)
    fix = fix_of(w)
    assert isinstance(fix, GnssFix)
    assert fix.stamp == pytest.approx(0.1) and fix.frame == "gps1" and fix.status == 2
    assert_within_1cm(fix, ref_enu_to_geodetic(100.0, 50.0, 0.0))
    # sanity: 50 m north ≈ 4.5e-4° of latitude, 100 m east ≈ 1.1e-3° of longitude at 36°
    assert fix.latitude - LAT0 == pytest.approx(50.0 / 110_960.0, rel=0.01)
    assert fix.longitude - LON0 == pytest.approx(100.0 / 90_190.0, rel=0.01)


def test_known_enu_offset_against_pyproj(tmp_path):
    pyproj = pytest.importorskip("pyproj")
    w = make_world(tmp_path, vehicle("v", 100.0, 50.0, gnss_xml(pose="<pose_3d>0 0 2 0 0 0</pose_3d>")),
                   head=georef())
    w.run(0.1)
    to_ecef = pyproj.Transformer.from_crs("EPSG:4979", "EPSG:4978", always_xy=True)
    to_geo = pyproj.Transformer.from_crs("EPSG:4978", "EPSG:4979", always_xy=True)
    ecef0 = np.array(to_ecef.transform(LON0, LAT0, H0))
    la, lo = math.radians(LAT0), math.radians(LON0)
    rot = np.array([[-math.sin(lo), math.cos(lo), 0.0],
                    [-math.sin(la) * math.cos(lo), -math.sin(la) * math.sin(lo), math.cos(la)],
                    [math.cos(la) * math.cos(lo), math.cos(la) * math.sin(lo), math.sin(la)]])
    lon, lat, h = to_geo.transform(*(ecef0 + rot.T @ np.array([100.0, 50.0, 2.0])))
    assert_within_1cm(fix_of(w), (lat, lon, h))


def test_rotation_90_swaps_axes(tmp_path):
    """world_to_enu_rotation 90°: world +x is North, world +y is West."""
    w = make_world(tmp_path, vehicle("v", 100.0, 50.0, gnss_xml()), head=georef(90.0))
    w.run(0.1)
    assert_within_1cm(fix_of(w), ref_enu_to_geodetic(-50.0, 100.0, 0.0))


def test_sensor_lever_arm_and_height(tmp_path):
    """The antenna is at vehicle pose ⊕ sensor pose: 1 m ahead of a vehicle facing north (yaw 90°), 1.5 m up."""
    w = make_world(tmp_path, vehicle("v", 10.0, 20.0, gnss_xml(pose="<pose_3d>1 0 1.5 0 0 0</pose_3d>"), 90.0),
                   head=georef())
    w.run(0.1)
    assert_within_1cm(fix_of(w), ref_enu_to_geodetic(10.0, 21.0, 1.5))


def test_world_is_utm(tmp_path):
    """World coordinates are UTM: a vehicle at the reference's UTM + (100, 50) is 100 m east, 50 m north of it."""
    e0, n0, zone, north = geodetic_to_utm(LAT0, LON0)
    assert (zone, north) == (30, True)
    w = make_world(tmp_path, vehicle("v", e0 + 100.0, n0 + 50.0, gnss_xml()), head=georef(utm=True))
    w.run(0.1)
    # Box2D keeps positions in float32: at UTM magnitudes (~4e6 m) that rounds them by a few cm
    x, y = w.vehicles["v"].pose[:2]
    assert (x - e0, y - n0) == pytest.approx((100.0, 50.0), abs=0.5)
    assert_within_1cm(fix_of(w), ref_enu_to_geodetic(x - e0, y - n0, 0.0))


@pytest.mark.parametrize("lat", [90.0, 84.5, -80.5])
def test_world_is_utm_outside_the_utm_latitudes_is_refused_at_load(tmp_path, lat):
    """UTM stops at 84° N and 80° S (the projection of a pole divides by zero: a math domain error at the first GNSS
    sample, issue 14): the georeference is refused at its <latitude>."""
    with pytest.raises(mv.WorldFileError) as e:
        make_world(tmp_path, vehicle("v", 0.0, 0.0, gnss_xml()), head=georef(lat=lat, utm=True))
    assert (e.value.line, e.value.message) == (3, f"world_is_utm needs a <latitude> within [-80, 84] degrees, where "
                                                  f"UTM is defined (got {lat:g}); use world coordinates in the local "
                                                  f"ENU plane instead (world_is_utm false)")
    w = make_world(tmp_path, vehicle("v", 0.0, 0.0, gnss_xml()), head=georef(lat=lat))  # the ENU plane works there
    w.run(0.1)
    assert fix_of(w).latitude == pytest.approx(lat, abs=1e-6)


# (lat, lon) -> UTM easting, northing, zone as given by PROJ (pyproj 3.7, EPSG:326xx / 327xx)
UTM_CASES = [
    ((36.0, -2.0), (590129.049410, 3984410.788076, 30)),
]


@pytest.mark.parametrize(("ll", "expected"), UTM_CASES)
def test_utm_known_values(ll, expected):
    e, n, zone, _ = geodetic_to_utm(*ll)
    assert zone == expected[2]
    assert (e, n) == pytest.approx(expected[:2], abs=1e-3)


@pytest.mark.parametrize("ll", [(36.0, -2.0), (-33.9, 18.4), (60.5, 5.3), (0.5, -179.5), (-70.0, 140.0),
                                (78.0, 15.0), (45.0, 3.01)])
def test_utm_against_pyproj(ll):
    pyproj = pytest.importorskip("pyproj")
    lat, lon = ll
    e, n, zone, north = geodetic_to_utm(lat, lon)
    epsg = (32600 if north else 32700) + zone
    pe, pn = pyproj.Transformer.from_crs("EPSG:4326", f"EPSG:{epsg}", always_xy=True).transform(lon, lat)
    assert (e, n) == pytest.approx((pe, pn), abs=1e-3)


def test_utm_zone_exceptions():
    assert utm_zone(36.0, -2.0) == 30
    assert utm_zone(60.0, 5.0) == 32  # Norway
    assert utm_zone(78.0, 15.0) == 33  # Svalbard
    assert utm_zone(10.0, 180.0) == 1


@pytest.mark.parametrize("llh", [(36.0, -2.0, 100.0), (-45.5, 170.2, -30.0), (89.9, 10.0, 5.0), (0.0, 0.0, 0.0),
                                 (-60.0, -120.0, 8000.0)])
def test_geodetic_round_trips(llh):
    ecef = geodetic_to_ecef(*llh)
    np.testing.assert_allclose(ecef, ref_ecef(*llh), atol=1e-6)
    lat, lon, h = ecef_to_geodetic(ecef)
    assert (lat, lon) == pytest.approx(llh[:2], abs=1e-10)
    assert h == pytest.approx(llh[2], abs=1e-6)
    ours, ref = ecef_to_geodetic(ecef), ref_geodetic(ecef)
    assert ours[:2] == pytest.approx(ref[:2], abs=1e-9)
    assert ours[2] == pytest.approx(ref[2], abs=1e-6)
    enu = np.array([123.0, -456.0, 7.0])
    lat2, lon2, h2 = enu_to_geodetic(enu, *llh)
    np.testing.assert_allclose(geodetic_to_enu(lat2, lon2, h2, *llh), enu, atol=1e-6)


# ---------------------------------------------------------------------- no fix
def test_no_coverage_region(tmp_path):
    region = """<element class="property_region">
  <x_min>-5</x_min><x_max>5</x_max><y_min>-5</y_min><y_max>5</y_max><z_min>-1</z_min><z_max>10</z_max>
  <property_name>gps_no_coverage</property_name><value_bool>true</value_bool>
</element>"""
    body = region + vehicle("inside", 0.0, 0.0, gnss_xml()) + vehicle("outside", 20.0, 0.0, gnss_xml("gps2"))
    w = make_world(tmp_path, body, head=georef())
    w.run(0.3)
    assert fix_of(w, "inside") is None
    assert isinstance(fix_of(w, "outside", "gps2"), GnssFix)
    # each sample without a fix is recorded (for bridges that report the loss at the sensor's rate)
    lost = w.vehicles["inside"].sensors["gps1"].last_no_fix
    assert isinstance(lost, GnssFix) and lost.status == GGA_NO_FIX and lost.stamp == pytest.approx(0.3)
    assert math.isnan(lost.latitude) and math.isnan(lost.longitude) and math.isnan(lost.altitude)
    assert w.vehicles["outside"].sensors["gps2"].last_no_fix is None
    # driving out of the region brings the fix back
    w.vehicles["inside"].set_twist(10.0, 0.0, 0.0)
    w.run(1.0)
    fix = fix_of(w, "inside")
    assert isinstance(fix, GnssFix) and fix.stamp == pytest.approx(1.3) and fix.status == 2
    assert w.vehicles["inside"].sensors["gps1"].last_no_fix.stamp < fix.stamp


def test_region_saying_false_keeps_the_fix(tmp_path):
    region = """<element class="property_region">
  <x_min>-5</x_min><x_max>5</x_max><y_min>-5</y_min><y_max>5</y_max><z_min>-1</z_min><z_max>10</z_max>
  <property_name>gps_no_coverage</property_name><value_bool>false</value_bool>
</element>"""
    w = make_world(tmp_path, region + vehicle("v", 0.0, 0.0, gnss_xml()), head=georef())
    w.run(0.1)
    assert isinstance(fix_of(w), GnssFix)


def test_antenna_above_the_region_has_a_fix(tmp_path):
    """The region is a 3D box: an antenna above z_max has coverage."""
    region = """<element class="property_region">
  <x_min>-5</x_min><x_max>5</x_max><y_min>-5</y_min><y_max>5</y_max><z_min>-1</z_min><z_max>1</z_max>
  <property_name>gps_no_coverage</property_name><value_bool>true</value_bool>
</element>"""
    sensors = gnss_xml("low", pose="<pose_3d>0 0 0.5 0 0 0</pose_3d>") + gnss_xml("high",
                                                                                 pose="<pose_3d>0 0 2 0 0 0</pose_3d>")
    w = make_world(tmp_path, region + vehicle("v", 0.0, 0.0, sensors), head=georef())
    w.run(0.1)
    assert fix_of(w, sensor="low") is None
    assert isinstance(fix_of(w, sensor="high"), GnssFix)


@pytest.mark.parametrize("head", ["", georef(lat=0.0, lon=0.0)], ids=["no-georeference", "lat-lon-zero"])
def test_no_fix_without_georeference(tmp_path, head):
    w = make_world(tmp_path, vehicle("v", 1.0, 2.0, gnss_xml(period=0.05)), head=head)
    w.run(0.5)
    assert fix_of(w) is None
    assert w.warnings.count(NO_GEOREFERENCE_WARNING) == 1
    assert w.vehicles["v"].sensors["gps1"].last_no_fix.stamp == pytest.approx(0.5)


# ---------------------------------------------------------------------- noise and covariance
def test_covariance_is_exact(tmp_path):
    w = make_world(tmp_path, vehicle("v", 0.0, 0.0, gnss_xml(sh=1.5, sv=3.0)), head=georef())
    w.run(0.1)
    fix = fix_of(w)
    np.testing.assert_array_equal(fix.covariance, np.diag([2.25, 2.25, 9.0]))
    assert fix.covariance.shape == (3, 3)
    assert fix.hdop == pytest.approx(0.3)


def test_noise_statistics(tmp_path):
    sh, sv, n = 2.0, 4.0, 10_000
    w = make_world(tmp_path, vehicle("v", 30.0, -40.0, gnss_xml(sh=sh, sv=sv)), head=georef(), seed=1)
    w.run(0.1)
    sensor = w.vehicles["v"].sensors["gps1"]
    ctx = w.start().sensor_scheduler.ctx
    enu = np.array([geodetic_to_enu(f.latitude, f.longitude, f.altitude, LAT0, LON0, H0)
                    for f in (sensor.sample(ctx, 0.1 + 0.1 * i) for i in range(n))])
    err = enu - np.array([30.0, -40.0, 0.0])
    std = err.std(axis=0, ddof=1)
    assert np.all(np.abs(std / np.array([sh, sh, sv]) - 1.0) < 0.10), std
    assert np.all(np.abs(err.mean(axis=0)) < 4.0 * np.array([sh, sh, sv]) / math.sqrt(n))
    assert abs(np.corrcoef(err[:, 0], err[:, 1])[0, 1]) < 0.05


def test_same_seed_same_fixes(tmp_path):
    def fixes(seed: int) -> np.ndarray:
        w = make_world(tmp_path, vehicle("v", 5.0, 5.0, gnss_xml(sh=2.0, sv=4.0)), head=georef(), seed=seed)
        out = []
        for _ in range(10):
            w.run(0.1)
            f = fix_of(w)
            out.append((f.stamp, f.latitude, f.longitude, f.altitude))
        return np.array(out)

    a, b, c = fixes(2), fixes(2), fixes(3)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
