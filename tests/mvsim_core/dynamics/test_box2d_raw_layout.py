"""The raw Box2D fast paths are in use on this machine's (pinned) Box2D: the layout probes of
mvsim_core.dynamics.box2d_raw, .box2d_state and .collision_flags must hold, and a world's bodies must take the raw
path by default. These fail instead of letting the silent fallback to the pybox2d API pass unnoticed."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pytest

import mvsim_core as mv
from mvsim_core.dynamics import box2d_state
from mvsim_core.dynamics.bodies import Bodies
from mvsim_core.dynamics.box2d_raw import raw_layout_ok
from mvsim_core.dynamics.collision_flags import raw_contacts_ok

SETUP_PY = Path(__file__).resolve().parents[3] / "setup.py"


def test_setup_pins_the_installed_box2d_exactly() -> None:
    pins = re.findall(r'"box2d([=<>!~]=?)([^"]+)"', SETUP_PY.read_text())
    assert pins == [("==", importlib.metadata.version("box2d"))]
    assert pins == [("==", "2.3.10")]


def test_the_body_layout_check_holds() -> None:
    assert raw_layout_ok() is True


def test_the_contact_layout_check_holds() -> None:
    assert raw_contacts_ok() is True


def test_the_snapshot_layout_check_holds() -> None:
    assert box2d_state.layout_ok() is True


def test_a_world_takes_the_raw_path_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MVSIM_BOX2D_RAW", raising=False)
    f = tmp_path / "w.xml"
    f.write_text('<mvsim_world version="1.0">\n<block name="b"><mass>10</mass>'
                 '<shape><pt>-0.2 -0.2</pt><pt>0.2 -0.2</pt><pt>0.2 0.2</pt><pt>-0.2 0.2</pt></shape>'
                 '<init_pose>1 2 0</init_pose></block>\n</mvsim_world>\n')
    b = Bodies(mv.load_world(f))  # keep it: Box2D objects die with their b2World
    assert b.raw is True
    assert b._contact_addrs is not None and b._contact_addrs.shape == (1,)  # contact flags by the compiled walk
    assert Bodies(mv.load_world(f), raw_access=False).raw is False  # the switch still turns it off
