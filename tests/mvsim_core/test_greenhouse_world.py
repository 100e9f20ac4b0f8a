"""The shipped greenhouse world (``worlds/greenhouse.world.xml``), after upstream's greenhouse demo: with the asset
mirror its plants and poles are upstream's models, in their material colours, standing on the floor; a robot drives
down a row without touching them."""

from __future__ import annotations

import numpy as np
import pytest

import mvsim_core as mv


def test_the_greenhouse_loads_its_models_and_a_robot_drives_down_a_row(repo_dir):
    w = mv.load_world(repo_dir / "worlds" / "greenhouse.world.xml")
    assert w.missing_assets == {}
    plants = [b for b in w.blocks.values() if b.class_name == "tomato_plant"]
    poles = [b for b in w.blocks.values() if b.class_name == "pole"]
    assert len(plants) == 96 and len(poles) == 32
    tomato = plants[0].visuals[0].mesh()
    assert tomato.face_colors is not None and len(tomato.faces) == 3243
    for p in poles[:3]:  # the pole model is centred on its middle: lifted onto the floor by its offset
        assert p.zmin == pytest.approx(0.0, abs=1e-3) and p.zmax == pytest.approx(2.5, abs=1e-3)
        assert np.ptp(np.asarray(p.footprint), axis=0) == pytest.approx([0.04, 0.04], abs=1e-3)
    r1 = w.start().vehicles["r1"]
    while w.time < 12.0:
        r1.set_twist(0.8, 0.0, 0.0)
        w.step()
    assert r1.pose[0] > 2.5 and abs(r1.pose[1] + 1.6) < 0.02 and not r1.had_collision
