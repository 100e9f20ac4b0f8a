"""A throwaway sensor class for the output-model acceptance tests (issue 33): a ring of ultrasonic ranges that
declares an existing output kind (:attr:`OutputKind.SCAN`) and nothing else, so that every adapter (ZMQ, MCAP,
Foxglove, ROS) must publish it from its declaration alone.

The sonar measures the distance to one wall: the vertical plane x = ``wall_x`` of the world frame (m), seen from the
sensor's world position along each beam. Beam k points at ``angle_min + k·2π/nranges`` (rad, counter-clockwise about
the sensor's z axis, from −π); a beam that does not reach the wall within ``max_range`` reads ``max_range`` and is
invalid, as a 2D lidar's miss.

:data:`WORLD` puts r1 at x = 0.5 m with the sonar 0.5 m ahead of its origin and the wall at x = 3.0 m: the sensor is
2.0 m from the wall, so with 8 beams the ranges are :data:`EXPECTED` (2/cos 45° on the two diagonal beams that face
the wall, 2.0 straight ahead, misses elsewhere).

The class is defined here once and kept out of :attr:`Sensor.registry` except inside :func:`registered`, so that
other tests (which list the known classes) never see it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from mvsim_core.sensors.base import Sensor, count_param
from mvsim_core.sensors.outputs import Output, OutputKind
from mvsim_core.xml.params import Kind, Param

XML_CLASS = "test_sonar_ring"
NAME = "sonar1"
NRANGES = 8
MAX_RANGE = 5.0  # m
MIN_RANGE = 0.05  # m
PERIOD = 0.1  # s
ZMQ_TOPIC = "/r1/sonar1"  # the sensor's <publish_topic>

WORLD = f"""<mvsim_world version="1.0">
  <simul_timestep>0.005</simul_timestep>
  <vehicle name="r1">
    <dynamics class="differential">
      <l_wheel pos="0 0.25" mass="2" width="0.05" diameter="0.3"/>
      <r_wheel pos="0 -0.25" mass="2" width="0.05" diameter="0.3"/>
    </dynamics>
    <init_pose>0.5 0 0</init_pose>
    <sensor class="{XML_CLASS}" name="{NAME}">
      <pose_3d>0.5 0 0.3 0 0 0</pose_3d>
      <sensor_period>{PERIOD}</sensor_period>
      <nranges>{NRANGES}</nranges>
      <max_range>{MAX_RANGE}</max_range>
      <min_range>{MIN_RANGE}</min_range>
      <wall_x>3.0</wall_x>
      <publish><publish_topic>{ZMQ_TOPIC}</publish_topic></publish>
    </sensor>
  </vehicle>
</mvsim_world>
"""
"""One lone vehicle (so ROS and MCAP names have no prefix) carrying the sonar 2.0 m from the wall."""

_D = 2.0  # m, sensor to wall
EXPECTED_VALID = np.array([False, False, False, True, True, True, False, False])
"""Which beams (−180°, −135°, ..., 135°) reach the wall: −45°, 0°, 45°."""
EXPECTED = np.where(EXPECTED_VALID, [0, 0, 0, _D * math.sqrt(2.0), _D, _D * math.sqrt(2.0), 0, 0], MAX_RANGE)
"""The ranges (m) from the geometry: max_range where a beam misses."""
ANGLE_MIN = -math.pi  # rad
ANGLE_INCREMENT = 2.0 * math.pi / NRANGES  # rad
ANGLE_MAX = ANGLE_MIN + (NRANGES - 1) * ANGLE_INCREMENT  # rad


@dataclass
class SonarScan:
    """One sample of the ring: exactly the SCAN fields of :data:`mvsim_core.sensors.outputs.KINDS`, and ``stamp``.

    Attributes:
        stamp: simulated time (s). ranges: (n,) float32, m. valid: (n,) bool.
        angle_min, angle_max, angle_increment: rad, about the sensor's z axis. min_range, max_range: m.
    """

    stamp: float
    ranges: np.ndarray
    valid: np.ndarray
    angle_min: float
    angle_max: float
    angle_increment: float
    min_range: float
    max_range: float


class SonarRing(Sensor):
    """A ring of ultrasonic ranges towards the wall x = ``wall_x``; class ``test_sonar_ring`` (see the module)."""

    xml_class: ClassVar[str] = XML_CLASS
    name_prefix: ClassVar[str] = "sonar"
    simulated: ClassVar[bool] = True
    COUNTS: ClassVar[tuple[str, ...]] = ("nranges",)
    PARAMS: ClassVar[tuple[Param, ...]] = (
        count_param("nranges", 8, "number of beams around the ring"),
        Param("max_range", Kind.FLOAT, 4.0, "m", positive=True, doc="reach of a beam"),
        Param("min_range", Kind.FLOAT, 0.02, "m", min=0.0, doc="closer echoes are invalid"),
        Param("wall_x", Kind.FLOAT, 0.0, "m", doc="x of the wall plane, world frame"),
    )

    def outputs(self) -> tuple[Output, ...]:
        """A planar scan in the sensor frame (an existing kind: no adapter may need more than this)."""
        return (self.output(OutputKind.SCAN),)

    def sample(self, ctx: Any, t: float) -> SonarScan:
        """The ranges to the wall from the sensor's world pose at simulated time ``t`` (s)."""
        rot, pos = ctx.sensor_pose(self)
        yaw = math.atan2(float(rot[1, 0]), float(rot[0, 0]))
        n = int(self.params["nranges"])
        inc = 2.0 * math.pi / n
        angles = -math.pi + inc * np.arange(n)
        cos = np.cos(yaw + angles)
        gap = float(self.params["wall_x"]) - float(pos[0])
        with np.errstate(divide="ignore"):
            dist = np.where(cos > 1e-9, gap / np.where(cos > 1e-9, cos, 1.0), np.inf)
        reach = float(self.params["max_range"])
        hit = (dist >= 0.0) & (dist <= reach)
        lo = float(self.params["min_range"])
        ranges = np.where(hit, dist, reach).astype(np.float32)
        return SonarScan(stamp=float(t), ranges=ranges, valid=hit & (ranges >= lo), angle_min=float(angles[0]),
                         angle_max=float(angles[-1]), angle_increment=inc, min_range=lo, max_range=reach)


Sensor.registry.pop(XML_CLASS, None)  # registered only inside registered()


@contextmanager
def registered() -> Iterator[type[SonarRing]]:
    """:class:`SonarRing` in :attr:`Sensor.registry` (so ``<sensor class="test_sonar_ring">`` picks it) while in
    the block; out again afterwards."""
    Sensor.registry[XML_CLASS] = SonarRing
    try:
        yield SonarRing
    finally:
        Sensor.registry.pop(XML_CLASS, None)


def write_world(directory: Path) -> Path:
    """:data:`WORLD` written to ``directory/sonar.world.xml``; its path."""
    path = directory / "sonar.world.xml"
    path.write_text(WORLD)
    return path
