"""FreeSpace: discs clear of occupancy-grid cells and of block footprints (distances measured on the room of the
goal-reaching worlds and on a rotated block)."""

from __future__ import annotations

import math

import pytest

import mvsim_core as mv
from mvsim_core.gym.free_space import FreeSpace
from mvsim_core.gym.goal_reaching_env import WORLDS


@pytest.fixture(scope="module")
def room() -> FreeSpace:
    return FreeSpace(mv.load_world(WORLDS / "goal_room.world.xml"))


@pytest.mark.parametrize(("x", "y", "free_up_to"), [
    (-1.2, 1.55, 0.25),   # 0.25 m above box 1 (its top edge at y = 1.3)
    (2.7, 0.0, 0.30),     # 0.3 m from the east wall (x = 3)
    (1.3, 1.0, 0.20),     # 0.2 m above box 2 (y 0.4 .. 0.8)
    (2.6, 2.6, 0.40),     # the north-east corner: 0.4 m from both walls
])
def test_grid_cells_bound_the_free_disc(room, x, y, free_up_to):
    assert room.is_free(x, y, free_up_to - 0.01)
    assert not room.is_free(x, y, free_up_to + 0.01)


def test_inside_a_box_nothing_is_free(room):
    assert not room.is_free(-1.2, 1.0, 0.001)
    assert room.is_free(0.0, 0.0, 0.5)
    assert room.is_free(10.0, 10.0, 1.0)  # beyond the grid: nothing known, nothing in the way


def test_block_footprints_at_their_poses(tmp_path):
    p = tmp_path / "w.world.xml"
    p.write_text('<mvsim_world version="1.0"><block name="b"><static>true</static><init_pose>1 2 45</init_pose>'
                 '<shape><pt>-1 -0.5</pt><pt>1 -0.5</pt><pt>1 0.5</pt><pt>-1 0.5</pt></shape></block>'
                 '<block name="ghost"><visual_only>true</visual_only><init_pose>5 5 0</init_pose>'
                 '<shape><pt>-1 -1</pt><pt>1 -1</pt><pt>1 1</pt><pt>-1 1</pt></shape></block></mvsim_world>')
    free = FreeSpace(mv.load_world(p))
    assert len(free.polygons) == 1  # the visual-only block is no obstacle
    assert not free.is_free(1.0 + 0.7 * math.cos(math.pi / 4), 2.0 + 0.7 * math.sin(math.pi / 4), 0.01)  # inside
    # 0.3 m off the long side: along the block's local +y, rotated by 45°
    nx, ny = -math.sin(math.pi / 4), math.cos(math.pi / 4)
    x, y = 1.0 + 0.8 * nx, 2.0 + 0.8 * ny
    assert free.is_free(x, y, 0.29) and not free.is_free(x, y, 0.31)
    assert free.is_free(5.0, 5.0, 0.5)
