"""Reference-counted cell squares shared by grid and terrain obstacles: a square exists while some body needs it."""

from __future__ import annotations

import Box2D
import pytest

from mvsim_core.dynamics.cell_squares import restore_cell_squares, swap_cell_squares


def test_squares_live_while_some_body_needs_them():
    world = Box2D.b2World(gravity=(0, 0))
    body = world.CreateStaticBody()
    fixtures: dict = {}
    refcount: dict = {}

    def center(k: int) -> tuple[float, float]:
        return float(k), 0.0

    swap_cell_squares(body, fixtures, refcount, set(), {1, 2}, 0.5, center, 0.7, 0.1)  # body A
    swap_cell_squares(body, fixtures, refcount, set(), {2, 3}, 0.5, center, 0.7, 0.1)  # body B
    assert refcount == {1: 1, 2: 2, 3: 1} and len(body.fixtures) == 3
    f2 = fixtures[2]
    swap_cell_squares(body, fixtures, refcount, {1, 2}, {5}, 0.5, center, 0.7, 0.1)  # A moves away
    assert refcount == {2: 1, 3: 1, 5: 1} and fixtures[2] is f2 and len(body.fixtures) == 3  # B still holds 2
    sq = fixtures[5]
    assert (sq.friction, sq.restitution) == (pytest.approx(0.7), pytest.approx(0.1))
    xs = sorted(v[0] for v in sq.shape.vertices)
    assert xs == pytest.approx([4.5, 4.5, 5.5, 5.5])  # a 1 m square centred on cell 5
    swap_cell_squares(body, fixtures, refcount, {2, 3}, set(), 0.5, center, 0.7, 0.1)  # B leaves
    assert refcount == {5: 1} and list(fixtures) == [5] and len(body.fixtures) == 1


def test_squares_are_made_in_ascending_cell_order_whatever_the_set_order():
    world = Box2D.b2World(gravity=(0, 0))
    body = world.CreateStaticBody()
    fixtures: dict = {}

    def center(k: int) -> tuple[float, float]:
        return float(k), 0.0

    cells = {9, 1, 5, 33, 17}  # 33 and 17 collide in a small set table
    swap_cell_squares(body, fixtures, {}, set(), cells, 0.5, center, 0.7, 0.1)
    assert list(fixtures) == [1, 5, 9, 17, 33]
    made_first = [fixtures[c] for c in (1, 5, 9, 17, 33)]
    assert [int(f.this) for f in body.fixtures] == [int(f.this) for f in made_first]  # made in that order


def test_restore_cell_squares_keeps_what_is_there_and_takes_the_saved_order():
    world = Box2D.b2World(gravity=(0, 0))
    body = world.CreateStaticBody()
    fixtures: dict = {}

    def center(k: int) -> tuple[float, float]:
        return float(k), 0.0

    swap_cell_squares(body, fixtures, {}, set(), {1, 2, 3}, 0.5, center, 0.7, 0.1)
    kept = fixtures[2]
    restore_cell_squares(body, fixtures, [4, 2], 0.5, center, 0.7, 0.1)
    assert list(fixtures) == [4, 2] and fixtures[2] is kept and len(body.fixtures) == 2
    xs = sorted(v[0] for v in fixtures[4].shape.vertices)
    assert xs == pytest.approx([3.5, 3.5, 4.5, 4.5])
