"""Copies of one map file share their decoded grid, and the ray-casting scene prepares it once."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

import mvsim_core as mv
from mvsim_core.sensors.raycast.scene import RaycastScene


def test_three_copies_of_a_map_give_one_caster(tmp_path: Path) -> None:
    img = np.full((40, 40), 255, dtype=np.uint8)
    img[:, 30] = 0  # a wall of occupied cells
    Image.fromarray(img).save(tmp_path / "map.png")
    other = img.copy()
    other[:, 5] = 0
    Image.fromarray(other).save(tmp_path / "other.png")
    grid = '<element class="occupancy_grid"><file>{}</file><resolution>0.1</resolution></element>\n'
    w = tmp_path / "w.world.xml"
    w.write_text('<mvsim_world version="1.0">\n' + grid.format("map.png") * 3 + grid.format("other.png")
                 + "</mvsim_world>\n")
    world = mv.load_world(w)
    grids = [e.grid for e in world.elements]
    assert grids[0] is grids[1] is grids[2] and grids[3] is not grids[0]
    scene = RaycastScene(world)
    assert len(scene.grids) == 2
    assert [c.nx for c in scene.grids] == [40, 40]
