"""Initial-setpoint parameters written inside ``<controller>`` (reference §1.11).

``V`` is a linear speed in m/s; ``W`` an angular speed written in **deg/s** and stored in rad/s; ``STEER_ANG`` a
steering angle written in degrees and stored in rad.
"""

from __future__ import annotations

from mvsim_core.xml.params import Kind, Param

V = Param("V", Kind.FLOAT, 0.0, "m/s", doc="initial forward speed")
W = Param("W", Kind.ANGLE, 0.0, "rad/s", doc="initial angular speed; written in deg/s")
STEER_ANG = Param("STEER_ANG", Kind.ANGLE, 0.0, "rad", doc="initial steering angle; written in degrees")

TWIST_SETPOINT_PARAMS: tuple[Param, ...] = (V, W)
