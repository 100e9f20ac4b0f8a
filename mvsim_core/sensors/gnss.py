"""``<sensor class="gnss">``: a GNSS receiver (reference §1.7, §1.12).

The sensor position in the world is turned into latitude, longitude and height through the world's
``<georeference>`` (ENU tangent plane, or UTM when ``world_is_utm``), with Gaussian noise of
``horizontal_std_noise`` on east and north and ``vertical_std_noise`` on up; the covariance reported in ENU is
diag(σh², σh², σv²). No fix is produced when the georeference is unset (lat = lon = 0) or inside a
``gps_no_coverage`` property region.

Model, for the antenna at world point p = (x, y, z) (m; vehicle pose ⊕ sensor pose):

1. no fix when the world has no ``<georeference>`` or its latitude and longitude are both 0 (one warning in
   ``world.warnings``), or when a ``gps_no_coverage`` property region containing p (world frame) says true: the
   sample gives no observation (``last`` becomes None) and :attr:`Gnss.last_no_fix` records it (a
   :class:`GnssFix` with status :data:`GGA_NO_FIX` and NaN position), so that bridges can report the loss of the
   fix at the sensor's rate;
2. ENU offset from the reference point (m): ``e, n, u = Rz(world_to_enu_rotation) · p`` (so rotation 0 means
   +x = East, and 90° means +x = North); with ``world_is_utm``, world x, y are UTM easting and northing, and
   ``e, n = x − E_ref, y − N_ref`` (the reference latitude/longitude in UTM, in its own zone), ``u = z``;
3. noise: e, n += N(0, σh²) each, u += N(0, σv²);
4. geodetic: ENU → ECEF around the reference (latitude, longitude, height) → WGS84 latitude, longitude (deg),
   ellipsoidal height (m).

Differences from upstream: upstream tests the no-coverage regions at the ENU point (identical when the rotation is
0) and names an unnamed GNSS ``imu<n>``. The UTM mode ignores the grid convergence and scale factor between UTM and
the local ENU plane, as upstream does.

The WGS84 conversions are closed-form (no external geodesy library): geodetic ↔ ECEF, ECEF ↔ ENU, and
geodetic → UTM by Krüger's series to order n⁴ (sub-millimetre within a zone).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from mvsim_core.sensors.base import Sensor
from mvsim_core.sensors.outputs import Output, OutputKind
from mvsim_core.xml.params import Kind, Param

if TYPE_CHECKING:
    from mvsim_core.sensors.scheduler import SensorContext
    from mvsim_core.world_model import WorldModel

# ---------------------------------------------------------------------- WGS84
WGS84_A = 6378137.0
"""Semi-major axis (m)."""
WGS84_F = 1.0 / 298.257223563
"""Flattening."""
WGS84_E2 = WGS84_F * (2.0 - WGS84_F)
"""First eccentricity squared."""
WGS84_B = WGS84_A * (1.0 - WGS84_F)
"""Semi-minor axis (m)."""

GGA_FIX_DGPS = 2
"""NMEA GGA fix quality of every simulated fix (differential GPS, as upstream)."""
GGA_NO_FIX = 0
"""NMEA GGA fix quality "invalid": the samples without a fix (:attr:`Gnss.last_no_fix`)."""

NO_GEOREFERENCE_WARNING = ("GNSS sensors produce no fix: the world has no <georeference> latitude/longitude "
                           "(both are 0)")


def geodetic_to_ecef(lat_deg: float, lon_deg: float, h: float) -> np.ndarray:
    """Earth-centred, Earth-fixed (x, y, z), m, of a WGS84 latitude, longitude (deg) and ellipsoidal height (m)."""
    lat, lon = math.radians(lat_deg), math.radians(lon_deg)
    sl, cl = math.sin(lat), math.cos(lat)
    n = WGS84_A / math.sqrt(1.0 - WGS84_E2 * sl * sl)  # prime vertical radius of curvature
    return np.array([(n + h) * cl * math.cos(lon), (n + h) * cl * math.sin(lon), (n * (1.0 - WGS84_E2) + h) * sl])


def ecef_to_geodetic(ecef: Any) -> tuple[float, float, float]:
    """WGS84 (latitude deg, longitude deg, ellipsoidal height m) of an ECEF point (m).

    Bowring's starting value refined by fixed-point iteration on the latitude; converges to 1e-12 rad (≈ 6 µm) in
    two or three rounds anywhere outside the Earth's core.
    """
    x, y, z = (float(v) for v in np.asarray(ecef, dtype=float).reshape(3))
    lon = math.atan2(y, x)
    p = math.hypot(x, y)
    if p < 1e-9:  # on the polar axis
        lat = math.copysign(math.pi / 2.0, z if z != 0.0 else 1.0)
        return math.degrees(lat), math.degrees(lon), abs(z) - WGS84_B
    ep2 = WGS84_E2 / (1.0 - WGS84_E2)
    beta = math.atan2(z * WGS84_A, p * WGS84_B)
    lat = math.atan2(z + ep2 * WGS84_B * math.sin(beta) ** 3, p - WGS84_E2 * WGS84_A * math.cos(beta) ** 3)
    for _ in range(10):
        sl = math.sin(lat)
        n = WGS84_A / math.sqrt(1.0 - WGS84_E2 * sl * sl)
        new = math.atan2(z + WGS84_E2 * n * sl, p)
        done = abs(new - lat) < 1e-12
        lat = new
        if done:
            break
    sl, cl = math.sin(lat), math.cos(lat)
    n = WGS84_A / math.sqrt(1.0 - WGS84_E2 * sl * sl)
    h = p / cl - n if abs(cl) > 1e-3 else abs(z) / abs(sl) - n * (1.0 - WGS84_E2)
    return math.degrees(lat), math.degrees(lon), h


def enu_rotation(lat_deg: float, lon_deg: float) -> np.ndarray:
    """3×3 rotation whose rows are the East, North, Up unit vectors (in ECEF) at a latitude, longitude (deg).

    ``enu = R · (ecef − ecef_ref)`` and ``ecef = ecef_ref + R^T · enu``.
    """
    lat, lon = math.radians(lat_deg), math.radians(lon_deg)
    sl, cl, so, co = math.sin(lat), math.cos(lat), math.sin(lon), math.cos(lon)
    return np.array([[-so, co, 0.0], [-sl * co, -sl * so, cl], [cl * co, cl * so, sl]])


def enu_to_geodetic(enu: Any, lat0_deg: float, lon0_deg: float, h0: float) -> tuple[float, float, float]:
    """(latitude deg, longitude deg, height m) of an East-North-Up offset (m) from a WGS84 reference point."""
    ecef = geodetic_to_ecef(lat0_deg, lon0_deg, h0) + enu_rotation(lat0_deg, lon0_deg).T @ np.asarray(enu, float)
    return ecef_to_geodetic(ecef)


def geodetic_to_enu(lat_deg: float, lon_deg: float, h: float, lat0_deg: float, lon0_deg: float,
                    h0: float) -> np.ndarray:
    """East-North-Up offset (3,), m, of a WGS84 point from a reference point (the inverse of enu_to_geodetic)."""
    d = geodetic_to_ecef(lat_deg, lon_deg, h) - geodetic_to_ecef(lat0_deg, lon0_deg, h0)
    return enu_rotation(lat0_deg, lon0_deg) @ d


def utm_zone(lat_deg: float, lon_deg: float) -> int:
    """UTM zone number (1..60) of a point, with the Norway (32V) and Svalbard (31X..37X) exceptions."""
    lon = (lon_deg + 180.0) % 360.0 - 180.0
    zone = int((lon + 180.0) // 6.0) + 1
    if 56.0 <= lat_deg < 64.0 and 3.0 <= lon < 12.0:
        return 32
    if 72.0 <= lat_deg < 84.0 and lon >= 0.0:
        if lon < 9.0:
            return 31
        if lon < 21.0:
            return 33
        if lon < 33.0:
            return 35
        if lon < 42.0:
            return 37
    return min(zone, 60)


def geodetic_to_utm(lat_deg: float, lon_deg: float, zone: int | None = None) -> tuple[float, float, int, bool]:
    """UTM (easting m, northing m, zone, northern hemisphere) of a WGS84 latitude, longitude (deg).

    Transverse Mercator by Krüger's series (Karney 2011, eq. 35 with α₁..α₄): k0 = 0.9996, false easting
    500 km, false northing 0 (north) or 10 000 km (south). ``zone`` forces a zone (default: :func:`utm_zone`).
    """
    if zone is None:
        zone = utm_zone(lat_deg, lon_deg)
    lon0 = math.radians(6.0 * zone - 183.0)
    lat = math.radians(lat_deg)
    dlon = math.radians(lon_deg) - lon0
    dlon = math.atan2(math.sin(dlon), math.cos(dlon))
    n = WGS84_F / (2.0 - WGS84_F)
    e = math.sqrt(WGS84_E2)
    big_a = WGS84_A / (1.0 + n) * (1.0 + n * n / 4.0 + n ** 4 / 64.0)
    alpha = (n / 2.0 - 2.0 * n ** 2 / 3.0 + 5.0 * n ** 3 / 16.0 + 41.0 * n ** 4 / 180.0,
             13.0 * n ** 2 / 48.0 - 3.0 * n ** 3 / 5.0 + 557.0 * n ** 4 / 1440.0,
             61.0 * n ** 3 / 240.0 - 103.0 * n ** 4 / 140.0,
             49561.0 * n ** 4 / 161280.0)
    sl = math.sin(lat)
    t = math.sinh(math.atanh(sl) - e * math.atanh(e * sl))
    xi = math.atan2(t, math.cos(dlon))
    eta = math.atanh(math.sin(dlon) / math.sqrt(1.0 + t * t))
    xs, es = xi, eta
    for j, a in enumerate(alpha, start=1):
        xs += a * math.sin(2 * j * xi) * math.cosh(2 * j * eta)
        es += a * math.cos(2 * j * xi) * math.sinh(2 * j * eta)
    k0 = 0.9996
    north = lat_deg >= 0.0
    return 500000.0 + k0 * big_a * es, (0.0 if north else 10000000.0) + k0 * big_a * xs, zone, north


# ---------------------------------------------------------------------- observation
@dataclass
class GnssFix:
    """One GNSS fix.

    Attributes:
        stamp: simulated time of the fix (s).
        latitude, longitude: WGS84, degrees (north, east positive).
        altitude: WGS84 ellipsoidal height, m.
        covariance: 3×3 position covariance in ENU (m²): diag(σh², σh², σv²).
        frame: the sensor's frame name (its name).
        status: NMEA GGA fix quality: :data:`GGA_FIX_DGPS` (2) for every fix, :data:`GGA_NO_FIX` (0) for the
            no-fix records of :attr:`Gnss.last_no_fix` (whose position and covariance are NaN).
        hdop: horizontal dilution of precision reported with the fix (σh / 5, as upstream).
    """

    stamp: float
    latitude: float
    longitude: float
    altitude: float
    covariance: np.ndarray
    frame: str
    status: int = GGA_FIX_DGPS
    hdop: float = field(default=0.0)


def fix_or_no_fix(sensor: Sensor) -> Any:
    """A GNSS's latest sample: its fix (``last``), else its latest sample without one (``last_no_fix``; None
    before any)."""
    return sensor.last if sensor.last is not None else getattr(sensor, "last_no_fix", None)


class Gnss(Sensor):
    """GNSS receiver; class ``gnss``, default names ``gnss1``, ``gnss2``, ...

    Upstream names an unnamed GNSS ``imu<n>`` (it reuses the IMU's prefix by mistake); we use ``gnss``.

    Parameters (upstream default, unit): horizontal_std_noise 2.0 m, vertical_std_noise 4.0 m.
    Pose: ``pose`` (x y yaw_deg, z = 0) or ``pose_3d``; default the vehicle origin.
    """

    xml_class: ClassVar[str] = "gnss"
    name_prefix: ClassVar[str] = "gnss"  # upstream: "imu" (a bug)
    last_no_fix: GnssFix | None = None
    """The latest sample that found no fix (status :data:`GGA_NO_FIX`, NaN position); None before any. It is the
    sensor's current state when it is newer than :attr:`last` (which is then None)."""
    simulated: ClassVar[bool] = True

    def outputs(self) -> tuple[Output, ...]:
        """A fix (:attr:`OutputKind.FIX`) in the sensor frame, sent also without a fix (:func:`fix_or_no_fix`:
        the sample of :attr:`last_no_fix`, status NO_FIX, at the sensor's rate)."""
        return (Output(OutputKind.FIX, self.name, self.name, self.period, observe=fix_or_no_fix),)
    POSE_TAGS: ClassVar[tuple[str, ...]] = ("pose", "pose_3d")
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("horizontal_std_noise", Kind.FLOAT, 2.0, "m", min=0.0, doc="std. dev. of east and north noise"),
        Param("vertical_std_noise", Kind.FLOAT, 4.0, "m", min=0.0, doc="std. dev. of up noise"),
    )

    @property
    def covariance_enu(self) -> np.ndarray:
        """3×3 ENU position covariance (m²): diag(σh², σh², σv²)."""
        h = float(self.params["horizontal_std_noise"])
        v = float(self.params["vertical_std_noise"])
        return np.diag([h * h, h * h, v * v])

    @property
    def horizontal_noise(self) -> float:
        """Std. dev. of the east and north noise (m)."""
        return float(self.params["horizontal_std_noise"])

    @property
    def vertical_noise(self) -> float:
        """Std. dev. of the up noise (m)."""
        return float(self.params["vertical_std_noise"])

    def details(self) -> str:
        return f"σh {self.params['horizontal_std_noise']:g} m, σv {self.params['vertical_std_noise']:g} m"

    def save_state(self) -> dict[str, Any]:
        """As :meth:`Sensor.save_state`, with the latest sample without a fix (:attr:`last_no_fix`)."""
        out = super().save_state()
        out["last_no_fix"] = copy.deepcopy(self.last_no_fix)
        return out

    def restore_state(self, saved: dict[str, Any]) -> None:
        super().restore_state(saved)
        self.last_no_fix = copy.deepcopy(saved["last_no_fix"])

    # ------------------------------------------------------------------ simulation
    def sample(self, ctx: SensorContext, t: float) -> GnssFix | None:
        """The fix at simulated time ``t`` (s), or None where there is none (see the module docstring)."""
        world = ctx.world
        geo = world.georeference
        if geo is None or (float(geo["latitude"]) == 0.0 and float(geo["longitude"]) == 0.0):
            if NO_GEOREFERENCE_WARNING not in world.warnings:
                world.warnings.append(NO_GEOREFERENCE_WARNING)
            self._no_fix(t)
            return None
        _, p = ctx.sensor_pose(self)
        if _no_coverage(world, p):
            self._no_fix(t)
            return None
        enu = world_to_enu(p, geo)
        gen = self.stream()
        sh, sv = self.horizontal_noise, self.vertical_noise
        if sh > 0.0:
            enu[:2] += gen.normal(0.0, sh, 2)
        if sv > 0.0:
            enu[2] += gen.normal(0.0, sv)
        lat, lon, h = enu_to_geodetic(enu, float(geo["latitude"]), float(geo["longitude"]), float(geo["height"]))
        return GnssFix(stamp=float(t), latitude=lat, longitude=lon, altitude=h, covariance=self.covariance_enu,
                       frame=self.name, hdop=sh / 5.0)

    def _no_fix(self, t: float) -> None:
        """Record a sample without a fix at simulated time ``t`` (s) in :attr:`last_no_fix`; no observation."""
        nan = math.nan
        self.last_no_fix = GnssFix(stamp=float(t), latitude=nan, longitude=nan, altitude=nan,
                                   covariance=np.full((3, 3), nan), frame=self.name, status=GGA_NO_FIX, hdop=nan)


def world_to_enu(p: Any, geo: Any) -> np.ndarray:
    """ENU offset (3,), m, from the georeference point of world point ``p`` (m), for a ``<georeference>``
    parameter set (``world_to_enu_rotation_deg`` in rad; ``world_is_utm``: world x, y are UTM coordinates)."""
    x, y, z = (float(v) for v in np.asarray(p, dtype=float).reshape(3))
    if geo["world_is_utm"]:
        e_ref, n_ref, _, _ = _utm_reference(float(geo["latitude"]), float(geo["longitude"]))
        return np.array([x - e_ref, y - n_ref, z])
    th = float(geo["world_to_enu_rotation_deg"])
    c, s = math.cos(th), math.sin(th)
    return np.array([c * x - s * y, s * x + c * y, z])


_UTM_CACHE: dict[tuple[float, float], tuple[float, float, int, bool]] = {}


def _utm_reference(lat: float, lon: float) -> tuple[float, float, int, bool]:
    key = (lat, lon)
    ref = _UTM_CACHE.get(key)
    if ref is None:
        ref = _UTM_CACHE[key] = geodetic_to_utm(lat, lon)
    return ref


def _no_coverage(world: WorldModel, p: np.ndarray) -> bool:
    """Whether a ``gps_no_coverage`` region containing world point ``p`` says true (a non-bool value is warned
    about once and ignored)."""
    from mvsim_core.elements.property_region import property_at

    v = property_at(world.elements, "gps_no_coverage", float(p[0]), float(p[1]), float(p[2]))
    if v is None:
        return False
    if isinstance(v, bool):
        return v
    msg = f"property_region gps_no_coverage must hold a bool (<value_bool>), got {v!r}: ignored"
    if msg not in world.warnings:
        world.warnings.append(msg)
    return False
