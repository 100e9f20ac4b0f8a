"""World elements (``<element class="...">``) and ``<walls>``.

Importing this package registers every element class in :attr:`WorldElement.registry`.
"""

from mvsim_core.elements import (  # noqa: F401  (imported to register the classes)
    elevation_map,
    ground_grid,
    horizontal_plane,
    occupancy_grid,
    pointcloud,
    property_region,
    skybox,
    vertical_plane,
)
from mvsim_core.elements.base import WorldElement, element_from_xml
from mvsim_core.elements.property_region import property_at
from mvsim_core.elements.walls import WallSegment, parse_walls

__all__ = ["WorldElement", "element_from_xml", "property_at", "WallSegment", "parse_walls"]
