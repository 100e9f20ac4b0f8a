"""Vehicle dynamics classes; importing this package registers all of them."""

from mvsim_core.objects.vehicles import (  # noqa: F401
    ackermann,
    ackermann_drivetrain,
    differential,
    differential_3_wheels,
    differential_4_wheels,
)
from mvsim_core.objects.vehicles.base import Vehicle, VehicleDynamics, build_vehicle

__all__ = ["Vehicle", "VehicleDynamics", "build_vehicle"]
