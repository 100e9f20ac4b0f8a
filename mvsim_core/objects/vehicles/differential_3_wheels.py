"""``differential_3_wheels``: a differential pair plus a free caster (which gets no torque)."""

from mvsim_core.dynamics.controllers.base import Family
from mvsim_core.objects.vehicles.base import VehicleDynamics, WheelSide
from mvsim_core.objects.vehicles.differential import DIFFERENTIAL_CHASSIS


class Differential3Wheels(VehicleDynamics):
    """Wheels ``l_wheel`` (0, 0.5), ``r_wheel`` (0, -0.5), ``caster_wheel`` (0.5, 0) in the vehicle frame (m)."""

    xml_class = "differential_3_wheels"
    family = Family.DIFFERENTIAL
    wheel_slots = (("l_wheel", (0.0, 0.5)), ("r_wheel", (0.0, -0.5)), ("caster_wheel", (0.5, 0.0)))
    chassis_shape = DIFFERENTIAL_CHASSIS
    lr_pattern = (WheelSide.LEFT, WheelSide.RIGHT, None)
