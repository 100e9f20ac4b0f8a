"""``mvsim sweep`` as a user runs it: a bad spec is one ``file:line:`` line and exit 2, before Ray is imported; the
commands that do not sweep never import Ray."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mvsim_core.sweep.results import ResultStore

REPO = Path(__file__).resolve().parents[3]
WORLD = REPO / "worlds" / "sweeps" / "friction.world.xml"
# main() run in a fresh interpreter; the last stdout line says whether ray was imported
RUN = ("import sys; from mvsim_core.cli import main; code = main(sys.argv[1:]); "
       "print('ray imported:', 'ray' in sys.modules); sys.exit(code)")


def mvsim(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = {**os.environ, "MVSIM_OFFLINE": "1", "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])}
    return subprocess.run([sys.executable, "-c", RUN, *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=120)


def test_bad_spec_is_one_line_and_exit_2_without_ray(tmp_path):
    spec = tmp_path / "bad.yaml"
    spec.write_text(f"world: {WORLD}\nduration: 2\nseeds: [0, 1]\nmetrics:\n  - collisions\n  - colisions\n")
    r = mvsim("sweep", str(spec))
    assert r.returncode == 2
    assert r.stderr == (f"{spec}:6: unknown metric 'colisions'; did you mean 'collisions'? built-in metrics: "
                        f"final_pose_error, time_to_goal, collisions, min_obstacle_distance, or a custom one as "
                        f"module:function\n")
    assert r.stdout.strip() == "ray imported: False"


def test_spec_checked_against_the_world_before_ray(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(f"world: {WORLD}\nduration: 2\nseeds: [0]\nvariables:\n  mu: [0.1]\n  friction: [0.2]\n")
    r = mvsim("sweep", str(spec))
    assert r.returncode == 2
    assert r.stderr.startswith(f"{spec}:6: variable override 'friction' is not used by the world")
    assert len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr
    assert r.stdout.strip() == "ray imported: False"


def test_a_broken_world_is_its_own_file_and_line(tmp_path):
    world = tmp_path / "w.world.xml"
    world.write_text('<mvsim_world version="1.0">\n<vehicle name="v">\n  <dynamics class="hovercraft"/>\n'
                     '</vehicle>\n</mvsim_world>\n')
    spec = tmp_path / "s.yaml"
    spec.write_text("world: w.world.xml\nduration: 2\nseeds: [0]\n")
    r = mvsim("sweep", str(spec))
    assert r.returncode == 2
    assert r.stderr.startswith(f"{world}:3: unknown dynamics class 'hovercraft'")


def test_options_are_checked(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(f"world: {WORLD}\nduration: 2\nseeds: [0]\n")
    r = mvsim("sweep", str(spec), "--out", "r.csv")
    assert (r.returncode, r.stderr) == (2, "--out r.csv: the results file is Parquet; give it the suffix .parquet\n")
    r = mvsim("sweep", str(spec), "--workers", "0")
    assert (r.returncode, r.stderr) == (2, "--workers must be at least 1 (got 0)\n")
    r = mvsim("sweep", str(tmp_path / "missing.yaml"))
    assert (r.returncode, r.stderr) == (2, f"{tmp_path / 'missing.yaml'}: sweep spec not found; check the path\n")


def test_results_of_another_spec_are_refused(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(f"world: {WORLD}\nduration: 2\nseeds: [0]\n")
    store = ResultStore(tmp_path / "s.parquet", "0123456789abcdef", "0.1.0")
    store.add({"run_id": "x", "status": "ok", "seed": 0})
    store.close()
    r = mvsim("sweep", str(spec), cwd=tmp_path)  # default --out: s.parquet here
    assert r.returncode == 2
    assert r.stderr.startswith("s.parquet holds the results of another sweep spec (spec hash 0123456789abcdef; ")
    assert len(r.stderr.splitlines()) == 1


def test_check_never_imports_ray():
    r = mvsim("check", str(WORLD))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "ray imported: False"
