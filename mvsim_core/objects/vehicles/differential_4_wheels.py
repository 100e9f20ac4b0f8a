"""``differential_4_wheels``: skid-steer; the left pair gets the left torque, the right pair the right torque."""

from mvsim_core.dynamics.controllers.base import Family
from mvsim_core.objects.vehicles.base import VehicleDynamics, WheelSide
from mvsim_core.objects.vehicles.differential import DIFFERENTIAL_CHASSIS


class Differential4Wheels(VehicleDynamics):
    """Wheels ``lr_wheel`` (0, 0.5), ``rr_wheel`` (0, -0.5), ``lf_wheel`` (0.5, 0.5), ``rf_wheel`` (0.5, -0.5)."""

    xml_class = "differential_4_wheels"
    family = Family.DIFFERENTIAL
    wheel_slots = (("lr_wheel", (0.0, 0.5)), ("rr_wheel", (0.0, -0.5)),
                   ("lf_wheel", (0.5, 0.5)), ("rf_wheel", (0.5, -0.5)))
    chassis_shape = DIFFERENTIAL_CHASSIS
    lr_pattern = (WheelSide.LEFT, WheelSide.RIGHT, WheelSide.LEFT, WheelSide.RIGHT)
