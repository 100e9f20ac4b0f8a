"""The output model as sensor authors import it: everything of :mod:`mvsim_core.outputs` (the one registry of what
sensors and vehicles put out, at the bottom of the layers), under the sensors package.

A sensor class declares its outputs in :meth:`Sensor.outputs <mvsim_core.sensors.base.Sensor.outputs>` with
:class:`Output` rows of the kinds in :data:`SENSOR_KINDS`; see :mod:`mvsim_core.outputs` for the fields and units of
each kind.
"""

from __future__ import annotations

from mvsim_core.outputs import (
    KINDS,
    SENSOR_KINDS,
    VEHICLE_KINDS,
    WORLD_FRAME,
    KindInfo,
    Output,
    OutputKind,
    PlanarOdometry,
    VehicleRoles,
    latest,
    output_of,
    outputs_of,
    vehicle_roles,
)

__all__ = ["KINDS", "SENSOR_KINDS", "VEHICLE_KINDS", "WORLD_FRAME", "KindInfo", "Output", "OutputKind",
           "PlanarOdometry", "VehicleRoles", "latest", "output_of", "outputs_of", "vehicle_roles"]
