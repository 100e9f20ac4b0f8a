"""benchmarks/bench_box2d.py: its bodies are the simulator's small_robot bodies, its cases make the scenes they
name, and without pyb2d3 the v3 backend says how to get it (exit 2, no traceback). Timings are not tested."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


bench = _load("bench_box2d")


def _fixtures(body) -> list[tuple]:
    """(vertices rounded to µm, density, friction, restitution, category, mask) of each fixture, in body order."""
    out = []
    for f in body.fixtures:
        verts = tuple((round(x, 6), round(y, 6)) for x, y in f.shape.vertices)
        out.append((verts, round(f.density, 6), round(f.friction, 6), round(f.restitution, 6),
                    f.filterData.categoryBits, f.filterData.maskBits))
    return sorted(out)


def test_bench_bodies_are_small_robots_as_the_simulator_builds_them(shared_dir):
    import mvsim_core as mv

    fleet = _load("bench_fleet")
    with tempfile.TemporaryDirectory() as tmp:
        world = mv.load_world(fleet.fleet_world(Path(tmp), 2, "loop", rays=None, spacing=8.0, plane=None))
        world.start()
        ours = world.physics.bodies.vehicle_bodies["r0_0"]
        scene = bench.V2Scene(bench.BY_NAME["move-3"], 2)
        theirs = scene.bodies[0]
        assert _fixtures(theirs) == _fixtures(ours)
        assert len(_fixtures(theirs)) == 3
        assert theirs.mass == pytest.approx(23.0, abs=1e-5) and ours.mass == pytest.approx(23.0, abs=1e-5)
        assert theirs.inertia == pytest.approx(ours.inertia, rel=1e-6)
        assert tuple(theirs.localCenter) == pytest.approx(tuple(ours.localCenter), abs=1e-7)


def _stepped(name: str, n: int, steps: int):
    scene = bench.V2Scene(bench.BY_NAME[name], n)
    for _ in range(steps):
        scene.step()
    return scene


def test_bodies_at_rest_fall_asleep_only_when_allowed():
    assert _stepped("rest-sleep", 50, 60).awake() == 0
    assert _stepped("rest-awake", 50, 60).awake() == 50


def test_close_robots_have_contacts_that_the_filter_removes():
    # two rows of 100 robots, 1.25 m apart: in each column the upper robot's left wheel faces the lower one's right
    # wheel 5 cm away, and each of them the other robot's chassis 15 cm away (their fattened boxes overlap)
    assert _stepped("close-3", 200, 1).contacts() == 300
    close = _stepped("close-3", 200, 20)
    assert not any(c.touching for c in close.world.contacts)
    assert _stepped("close-3-nopairs", 200, 20).contacts() == 0
    assert _stepped("move-3", 200, 20).contacts() == 0  # 8 m apart: no pair at all
    moved = close.x0() - close.bodies[0].localCenter[0]  # the centre of mass started at x = localCenter
    assert moved == pytest.approx(0.5 * 20 * bench.DT, abs=1e-5)  # nothing touched it


def test_remade_wheels_keep_the_fixtures_and_the_mass():
    scene = _stepped("move-3-remake", 3, 5)
    body = scene.bodies[0]
    assert len(body.fixtures) == 3 and body.mass == pytest.approx(23.0, abs=1e-5)


def test_child_times_a_case_and_checks_the_motion():
    spec = {"backend": "v2", "case": bench.asdict(bench.BY_NAME["move-1"]), "bodies": 20, "threads": 0,
            "warmup": 5, "seconds": 0.01}
    r = bench.child(spec)
    assert r["steps"] >= 10 and r["steps"] % 10 == 0
    assert r["awake"] == 20 and r["contacts"] == 0 and r["us_step"] > 0


@pytest.mark.skipif(importlib.util.find_spec("pyb2d3") is not None, reason="pyb2d3 is installed here")
def test_v3_without_pyb2d3_says_how_to_install_it():
    p = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_box2d.py"), "--backend", "v3"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert p.stderr == "pyb2d3 is not installed: pip install pyb2d3\n"
    assert p.stdout == ""


def test_spinning_bodies_turn_about_their_centre_of_mass_while_it_moves_on():
    scene = _stepped("spin-3", 3, 40)
    body = scene.bodies[0]
    assert body.angle == pytest.approx(0.25 * 40 * bench.DT, abs=1e-6)
    assert scene.x0() - body.localCenter[0] == pytest.approx(0.5 * 40 * bench.DT, abs=1e-5)
