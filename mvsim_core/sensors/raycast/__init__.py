"""Ray casting for the range sensors: compiled kernels over occupancy grids and 2D segments, and the scene that
gathers a world's solids so that one call casts every ray of every lidar due at a step.

* :mod:`.grid` — occupancy grids, distance-field marching refined to the exact cell boundary;
* :mod:`.segments` — outlines of blocks, walls, vertical planes and vehicles (static ones bucketed once, moving ones
  placed each call);
* :mod:`.scene` — :class:`RaycastScene`, built from a world and its physics.
"""

from mvsim_core.sensors.raycast.grid import GridCaster, cast_grid, distance_code
from mvsim_core.sensors.raycast.scene import RaycastScene
from mvsim_core.sensors.raycast.segments import MovingSegments, StaticSegments, cast_sets, polygon_edges

__all__ = ["GridCaster", "MovingSegments", "RaycastScene", "StaticSegments", "cast_grid", "cast_sets", "distance_code",
           "polygon_edges"]
