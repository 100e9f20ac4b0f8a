"""The `mvsim` command, run as a separate process like a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def mvsim(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "MVSIM_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "mvsim_core.cli", *args], capture_output=True, text=True,
                          cwd=cwd or REPO, env=env, timeout=120)


def test_check_demo_world():
    r = mvsim("check", "worlds/demo.world.xml")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "timestep: 5 ms" in out
    assert "elements: occupancy_grid x1, horizontal_plane x1" in out
    assert "blocks: 4" in out
    assert "vehicles: 2 (1 sensors)" in out
    assert "bot1 [class warehouse_bot]: dynamics differential, controller twist_pid, friction default" in out
    assert "car1 [class compact_car]: dynamics ackermann, controller twist_front_steer_pid" in out
    assert "missing assets: none" in out
    assert r.stderr == ""


def test_check_every_shared_world(worlds_dir):
    """With the mirror (the suite's MVSIM_ASSET_MIRROR) every upstream world has all its assets (issue 17)."""
    for f in sorted(worlds_dir.rglob("*.world.xml")):
        r = mvsim("check", str(f))
        assert r.returncode == 0, (f, r.stderr)
        assert r.stdout.startswith(f"world: {f}")
        assert "missing assets: none" in r.stdout, (f, r.stdout)


def test_check_counts_missing_assets_and_takes_a_mirror(shared_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("MVSIM_ASSET_MIRROR", raising=False)
    monkeypatch.setenv("MVSIM_CACHE_DIR", str(tmp_path / "cache"))
    world = str(shared_dir / "worlds" / "mvsim_tutorial" / "demo_turtlebot_world.world.xml")
    r = mvsim("check", world)
    assert r.returncode == 0 and "missing assets: 2" in r.stdout  # burger_base.dae and lds.dae
    r = mvsim("check", world, "--asset-mirror", str(shared_dir / "assets" / "mvsim-models"))
    assert r.returncode == 0 and "missing assets: none" in r.stdout, r.stdout


def test_check_bad_world_prints_file_line_no_traceback(tmp_path):
    (tmp_path / "w.xml").write_text('<mvsim_world version="1.0">\n  <gravity>lots</gravity>\n</mvsim_world>\n')
    r = mvsim("check", str(tmp_path / "w.xml"))
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr == f"{tmp_path / 'w.xml'}:2: bad number 'lots' for <gravity>; expected a number such as 1.5\n"


def test_check_missing_file(tmp_path):
    r = mvsim("check", str(tmp_path / "nope.xml"))
    assert r.returncode == 2
    assert r.stderr == f"{tmp_path / 'nope.xml'}: file not found; check the path\n"


def test_check_seed_and_allow_shell(tmp_path):
    text = ('<mvsim_world version="1.0">\n<gravity>$(echo 7.5)</gravity>\n'
            '<block name="b"><init_pose>$f{rand()*100} 0 0</init_pose></block>\n</mvsim_world>\n')
    (tmp_path / "w.xml").write_text(text)
    r = mvsim("check", str(tmp_path / "w.xml"))
    assert r.returncode == 2 and "refused to run shell command $(echo 7.5)" in r.stderr
    a = mvsim("check", "--allow-shell", "--seed", "3", str(tmp_path / "w.xml"))
    b = mvsim("check", "--allow-shell", "--seed", "3", str(tmp_path / "w.xml"))
    c = mvsim("check", "--allow-shell", "--seed", "4", str(tmp_path / "w.xml"))
    assert a.returncode == 0 and a.stdout == b.stdout and a.stdout != c.stdout


def test_check_warnings_go_to_stderr(tmp_path):
    (tmp_path / "w.xml").write_text('<mvsim_world version="1.0">\n<teleporter/>\n</mvsim_world>\n')
    r = mvsim("check", str(tmp_path / "w.xml"))
    assert r.returncode == 0
    assert r.stderr == f"warning: {tmp_path / 'w.xml'}:2: unknown tag <teleporter> is ignored\n"


def test_launch_headless_runs_for_duration():
    r = mvsim("launch", "worlds/demo.world.xml", "--headless", "--realtime-factor", "0", "--duration", "2")
    assert r.returncode == 0, r.stderr
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("sim time     2.000 s | real-time factor")
    assert last.endswith("vehicles 2")


def test_a_blow_up_is_said_once_and_the_run_goes_on_unless_strict():
    """tests/mvsim_core/comms/data/stream.world.xml: vehicle 'wreck' blows up by itself at step 72."""
    world = "tests/mvsim_core/comms/data/stream.world.xml"
    r = mvsim("launch", world, "--headless", "--no-server", "--realtime-factor", "0", "--duration", "1")
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("WARNING: vehicle 'wreck' blew up at t=0.3600 s (step 72): wheel 3 "
                                                   "spin became NaN/inf (x, y, yaw, vx, vy, ω = [")
    assert lines[0].endswith("), at rest, its controller reset with a zero command")
    assert r.stdout.strip().splitlines()[-1].startswith("sim time     1.000 s")
    r = mvsim("launch", world, "--headless", "--no-server", "--realtime-factor", "0", "--duration", "1", "--strict")
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("vehicle 'wreck': wheel 3 spin became NaN/inf at step 72 (t = "
                                                   "0.3600 s): x, y, yaw, vx, vy, ω = [")


@pytest.mark.parametrize("args", [["launch", "x.xml", "--realtime-factor", "-1"], ["frobnicate"]])
def test_bad_arguments_exit_2(args):
    r = mvsim(*args)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr


def test_check_quotes_a_long_junk_value_on_one_line(tmp_path):
    junk = "1 \r\x0c\x1f" * 5000 + "2"
    world = tmp_path / "w.world.xml"
    world.write_text(f'<mvsim_world version="1.0">\n<simul_timestep>{junk}</simul_timestep>\n</mvsim_world>\n')
    r = mvsim("check", str(world))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1
    assert r.stderr == (f"{world}:2: bad number '" + "1 \\r\\x0c\\x1f" * 40
                        + "…' (25001 characters) for <simul_timestep>; expected a number such as 1.5\n")


def test_check_internal_error_is_one_line_without_traceback(tmp_path, capsys):
    """A bug in the loader (here: an element class, defined for this test, whose loading raises a ValueError) is one
    line naming it and where it happened, exit 1 -- never a traceback."""
    from mvsim_core.cli import main
    from mvsim_core.elements.base import WorldElement

    class Exploding(WorldElement):
        xml_class = "test_exploding_element"

        def _load(self, ctx):
            raise ValueError("cannot convert float NaN to integer")

    try:
        (tmp_path / "w.xml").write_text('<mvsim_world version="1.0">\n<element class="test_exploding_element"/>\n'
                                        '</mvsim_world>\n')
        assert main(["check", str(tmp_path / "w.xml")]) == 1
    finally:
        del WorldElement.registry[Exploding.xml_class]
    import mvsim_core.elements.base as base

    line = next(i for i, text in enumerate(Path(base.__file__).read_text().splitlines(), 1)
                if "element._load(ctx)" in text)  # the innermost frame of the simulator: the call into the element
    err = capsys.readouterr().err
    assert err == (f"mvsim: internal error while loading {tmp_path / 'w.xml'}: ValueError: cannot convert float NaN to "
                   f"integer (at mvsim_core/elements/base.py:{line}); this is a bug of the simulator, please report it "
                   f"with the world file\n")
