"""The shipped example world of things that move (``worlds/moving.world.xml``): its lift carries bot1 up to the
loft, its ramp takes bot1 onto the mezzanine, its people walk and its cart slides."""

from __future__ import annotations

import math

import pytest

import mvsim_core as mv


@pytest.fixture
def world(repo_dir):
    return mv.load_world(repo_dir / "worlds" / "moving.world.xml", seed=1).start()


def drive(w: mv.World, until: float, vx: float) -> None:
    bot = w.vehicles["bot1"]
    while w.time < until - 1e-9:
        bot.set_twist(vx, 0.0, 0.0)
        w.step()


def test_the_lift_carries_bot1_to_the_loft(world):
    world.set_pose("bot1", -6.25, 5.0, math.pi)  # on the lift, facing the loft (x <= -7)
    drive(world, 13.0, 0.0)
    assert world.vehicles["bot1"].pose[2] == pytest.approx(0.75, abs=0.01)  # half way up at 13 s
    drive(world, 16.5, 0.0)
    drive(world, 21.0, 0.5)
    x, y, z = world.vehicles["bot1"].pose[:3]
    assert x < -7.5 and 3.0 < y < 7.0 and z == pytest.approx(1.5, abs=1e-6)  # on the loft


def test_the_ramp_takes_bot1_onto_the_mezzanine_and_things_move(world):
    start = {n: a.pose[:2] for n, a in world.actors.items()}
    cart = world.blocks["cart"].pose[:2]
    world.set_pose("bot1", 1.0, 5.0, 0.0)
    drive(world, 4.0, 0.5)
    bot = world.vehicles["bot1"]
    assert 2.5 < bot.pose[0] < 3.5 and -bot.pose[4] == pytest.approx(math.atan(0.3 / 2), abs=0.02)  # on the slope
    drive(world, 8.0, 0.5)
    assert bot.pose[0] > 4.4 and bot.pose[2] == pytest.approx(0.3, abs=1e-6)
    for name, (x0, y0) in start.items():
        x, y = world.actors[name].pose[:2]
        assert math.hypot(x - x0, y - y0) > 3.0, name  # 8 s at 0.8-1.1 m/s
    assert world.blocks["cart"].pose[0] == pytest.approx(cart[0] + 10.0 * 8.0 / 8.0, abs=1e-9)
