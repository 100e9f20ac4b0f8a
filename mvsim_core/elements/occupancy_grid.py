"""``<element class="occupancy_grid">``: a 2D occupancy map that vehicles and blocks collide with.

``<file>`` picks the reader by extension: ``.yaml``/``.yml`` is a ROS map_server map, ``.gridmap`` (optionally
``.gz``) an MRPT serialized ``COccupancyGridMap2D``, anything else an image (placed with ``resolution`` and
``centerpixel_x/y``, see :mod:`mvsim_core.io.image_map`). The two map formats carry their own resolution and origin;
``resolution``/``centerpixel_*`` are then ignored (with a warning). The collision use of the grid (lidar-like scan
around each object, cells as static squares) belongs to the physics.
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import ClassVar

import numpy as np

from mvsim_core.elements.base import WorldElement, child_node
from mvsim_core.errors import AssetError
from mvsim_core.geometry.extent import Extent
from mvsim_core.io.file_check import file_problem, shown_path
from mvsim_core.io.grid_map import GridMap
from mvsim_core.memory_budget import budget_message, over_budget
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.limits import Charge
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Kind, Param

_IMAGE_ONLY = ("resolution", "centerpixel_x", "centerpixel_y")

OCCUPIED = 0.5
"""Cells whose occupancy probability is above this are obstacles: for the physics, the 2D and 3D lidars and the
cameras alike."""

CELL_HEIGHT = 2.0
"""m: the 3D sensors (3D lidars, ``raytrace_3d`` 2D lidars, cameras) see each occupied cell as a box from z = 0 to
this height (the default ``wallHeight`` of upstream's ``<walls>``). The 2D physics and 2D lidars give them no top.
(Upstream draws a grid as a textured plane on the ground, so its rendered sensors do not meet the cells; a fixed
height keeps them solid for every sensor without making the sky hit them.)"""
MIN_RESOLUTION = 1e-3
"""Smallest cell size of an image map (m)."""
CELL_BYTES = 4
"""Bytes per cell of a decoded grid (float32 occupancy), charged to the load budget once per shared grid."""
MASK_CELL_BYTES = 1
"""Bytes per cell of the collision mask each occupancy grid element's physics builds (one bool per cell)."""

_SHARED: weakref.WeakValueDictionary[tuple[object, ...], GridMap] = weakref.WeakValueDictionary()
"""Decoded grids by :meth:`OccupancyGrid._key`, while some element holds them."""


def map_format(path: str | Path) -> str:
    """``"ros_yaml"``, ``"mrpt_gridmap"`` or ``"image"`` from a file name (a trailing ``.gz`` is ignored)."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name.endswith((".yaml", ".yml")):
        return "ros_yaml"
    if name.endswith(".gridmap"):
        return "mrpt_gridmap"
    return "image"


class OccupancyGrid(WorldElement):
    """An occupancy grid map.

    Attributes:
        path: the map file.
        format: ``"image"``, ``"ros_yaml"`` or ``"mrpt_gridmap"``.
        grid: the loaded map (world frame, metres; occupancy = probability of being occupied).
    """

    xml_class: ClassVar[str] = "occupancy_grid"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("file", Kind.STRING, "", doc="image, ROS .yaml map or MRPT .gridmap[.gz]"),
        Param("resolution", Kind.FLOAT, 0.10, "m", positive=True, min=MIN_RESOLUTION, doc="cell size (images only)"),
        Param("centerpixel_x", Kind.FLOAT, -1.0, "px", doc="image column at world x = 0 (images only)"),
        Param("centerpixel_y", Kind.FLOAT, -1.0, "px", doc="image row from the bottom at world y = 0 (images only)"),
        Param("show_collisions", Kind.BOOL, True, doc="draw the cells used for collisions"),
        Param("restitution", Kind.FLOAT, 0.01, min=0.0),
        Param("lateral_friction", Kind.FLOAT, 0.5, min=0.0),
    )

    path: Path
    format: str
    grid: GridMap

    def _load(self, ctx: ParseContext) -> None:
        file_node = self.node.child("file")
        if file_node is None:
            raise ctx.error(self.node, "occupancy_grid needs a <file> (an image, a ROS .yaml map or an MRPT "
                                       ".gridmap[.gz] file)")
        if not self.params.file:
            raise ctx.error(file_node, "<file> of occupancy_grid is empty")
        self.path = ctx.resolve_path(self.params.file, file_node)
        problem = file_problem(self.path)
        if problem is not None:
            raise ctx.error(file_node, f"map file {problem}: {shown_path(self.path)}")
        self.format = map_format(self.path)
        try:
            self.grid = self._shared_grid(ctx, file_node)
        except AssetError as e:
            raise ctx.error(file_node, str(e)) from None
        except ValueError as e:
            raise ctx.error(file_node, str(e)) from None
        cells = self.grid.nx * self.grid.ny
        ctx.budget.charge("occupancy grid collision mask", [Charge("occupancy grid collision mask",
                                                                   cells * MASK_CELL_BYTES, file_node.file,
                                                                   file_node.line, objects=0)],
                          file_node.file, file_node.line)
        if self.format != "image":
            for name in _IMAGE_ONLY:
                if name in self.params.where:
                    ctx.warn(child_node(self, name), f"<{name}> is ignored for a {self.path.suffix} map: the map "
                                                     f"file sets its own resolution and origin")

    def _key(self) -> tuple[object, ...]:
        """What identifies the decoded grid: the file (resolved path, size, modification time) and the parameters
        that change the decoding (an image's resolution and centre pixel)."""
        st = self.path.stat()
        p = self.params
        extra = (p.resolution, p.centerpixel_x, p.centerpixel_y) if self.format == "image" else ()
        return (str(self.path.resolve()), st.st_size, st.st_mtime_ns, self.format, *extra)

    def _cells(self) -> int | None:
        """Cells of the map from its file's header, before decoding (None: only known once decoded)."""
        if self.format == "mrpt_gridmap":
            from mvsim_core.io.mrpt_gridmap import mrpt_gridmap_size

            nx, ny = mrpt_gridmap_size(self.path)
            return nx * ny
        if self.format == "image":
            from mvsim_core.io.image_map import image_size

            size = image_size(self.path)
            return None if size is None else size[0] * size[1]
        return None

    def _decode(self) -> GridMap:
        if self.format == "ros_yaml":
            from mvsim_core.io.ros_map_yaml import load_ros_map_yaml

            return load_ros_map_yaml(self.path)
        if self.format == "mrpt_gridmap":
            from mvsim_core.io.mrpt_gridmap import load_mrpt_gridmap

            return load_mrpt_gridmap(self.path)
        from mvsim_core.io.image_map import load_image_grid

        p = self.params
        return load_image_grid(self.path, p.resolution, p.centerpixel_x, p.centerpixel_y)

    def _shared_grid(self, ctx: ParseContext, file_node: XmlNode) -> GridMap:
        """The decoded grid, shared read-only by every element (of every world alive) that loads the same unchanged
        file with the same parameters, and charged to the load budget once per load, from the file's header
        before it is decoded (:data:`CELL_BYTES` per cell)."""
        key = self._key()
        here = (file_node.file, file_node.line)
        cached = _SHARED.get(key)
        if cached is not None:
            cells: int | None = cached.nx * cached.ny
        else:
            cells = self._cells()
            if cells is not None and over_budget(cells, CELL_BYTES):
                raise ValueError(budget_message(f"an occupancy grid of {cells} cells", cells, CELL_BYTES,
                                                "use a smaller or coarser map"))
        what = f"occupancy grid {self.path.name}"

        def charge(n: int) -> None:
            ctx.budget.charge_once(key, what, [Charge("occupancy grid", n * CELL_BYTES, *here, objects=0)], *here)

        if cells is not None:
            charge(cells)
        grid = cached or _SHARED.get(key)
        if grid is None:
            grid = self._decode()
            grid.occupancy.setflags(write=False)
            _SHARED[key] = grid
        if cells is None:
            charge(grid.nx * grid.ny)
        return grid

    def extent(self) -> Extent | None:
        """The box of the occupied cells, from the floor to :data:`CELL_HEIGHT` (the 3D sensors' boxes; for the 2D
        physics and 2D lidars they have no top); None when no cell is occupied."""
        g = self.grid
        iy, ix = np.nonzero(g.occupancy > OCCUPIED)
        if len(ix) == 0:
            return None
        r = g.resolution
        return Extent(g.x_min + r * float(ix.min()), g.x_min + r * float(ix.max() + 1), g.y_min + r * float(iy.min()),
                      g.y_min + r * float(iy.max() + 1), 0.0, CELL_HEIGHT)

    def summary(self) -> str:
        g = self.grid
        res = f"{g.resolution:.2f}" if abs(round(g.resolution, 2) - g.resolution) < 1e-12 else f"{g.resolution:g}"
        return (f"occupancy_grid {self.path.name} {g.nx}x{g.ny} cells @ {res} m, "
                f"x [{g.x_min:g}, {g.x_max:g}] y [{g.y_min:g}, {g.y_max:g}]")
