"""``<sensor class="gnss">``: a GNSS receiver (reference §1.12).

The sensor position in the world is turned into latitude, longitude and height through the world's
``<georeference>`` (ENU tangent plane, or UTM when ``world_is_utm``), with Gaussian noise of
``horizontal_std_noise`` on east and north and ``vertical_std_noise`` on up; the covariance reported in ENU is
diag(σh², σh², σv²). No fix is produced when the georeference is unset (lat = lon = 0) or inside a
``gps_no_coverage`` property region.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from mvsim_core.sensors.base import Sensor
from mvsim_core.xml.params import Kind, Param


class Gnss(Sensor):
    """GNSS receiver; class ``gnss``, default names ``gnss1``, ``gnss2``, ...

    Upstream names an unnamed GNSS ``imu<n>`` (it reuses the IMU's prefix by mistake); we use ``gnss``.

    Parameters (upstream default, unit): horizontal_std_noise 2.0 m, vertical_std_noise 4.0 m.
    Pose: ``pose`` (x y yaw_deg, z = 0) or ``pose_3d``; default the vehicle origin.
    """

    xml_class: ClassVar[str] = "gnss"
    name_prefix: ClassVar[str] = "gnss"  # upstream: "imu" (a bug)
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

    def details(self) -> str:
        return f"σh {self.params['horizontal_std_noise']:g} m, σv {self.params['vertical_std_noise']:g} m"
