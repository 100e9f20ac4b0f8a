"""``differential``: two driven wheels on one axle (left, right). Controller family ``differential``."""

from mvsim_core.dynamics.controllers.base import Family
from mvsim_core.objects.vehicles.base import VehicleDynamics

DIFFERENTIAL_CHASSIS = ((-0.4, -0.5), (-0.4, 0.5), (0.4, 0.5), (0.6, 0.3), (0.6, -0.3), (0.4, -0.5))


class Differential(VehicleDynamics):
    """Wheels ``l_wheel`` (0, 0.5) and ``r_wheel`` (0, -0.5) in the vehicle frame (m)."""

    xml_class = "differential"
    family = Family.DIFFERENTIAL
    wheel_slots = (("l_wheel", (0.0, 0.5)), ("r_wheel", (0.0, -0.5)))
    chassis_shape = DIFFERENTIAL_CHASSIS
