"""Values that parse but that the models cannot run with are refused at load (issue 14, item 1): each case is a
WorldFileError at the file and line that wrote the value, with the exact message, and ``mvsim check`` prints that one
line and exits 2."""

from __future__ import annotations

from pathlib import Path

import pytest

import mvsim_core as mv
from mvsim_core.cli import main as cli_main

BOT = """<vehicle name="r1">
 <dynamics class="differential"/>
 <init_pose>0 0 0</init_pose>
{body}</vehicle>
"""


def world(body: str) -> str:
    return '<mvsim_world version="1.0">\n' + body + "</mvsim_world>\n"


# (id, world text, line, message)
CASES = [
    ("timestep below the minimum", world("<simul_timestep>1e-5</simul_timestep>\n"), 2,
     "<simul_timestep> must be 0 (automatic) or at least 0.0001 s (got 1e-05)"),
    ("sensor period below the minimum", world(BOT.format(
        body='<sensor class="imu" name="imu1">\n  <sensor_period>1e-9</sensor_period>\n</sensor>\n')), 6,
     "<sensor_period> must be at least 0.0001 s (got 1e-9)"),
]


@pytest.mark.parametrize(("kind", "text", "line", "message"), CASES, ids=[c[0] for c in CASES])
def test_refused_at_load(tmp_path: Path, capsys, kind: str, text: str, line: int, message: str) -> None:
    path = tmp_path / "w.world.xml"
    path.write_text(text)
    with pytest.raises(mv.WorldFileError) as ei:
        mv.load_world(path)
    assert (ei.value.file, ei.value.line, ei.value.message) == (str(path), line, message)
    assert cli_main(["check", str(path)]) == 2
    assert capsys.readouterr().err == f"{path}:{line}: {message}\n"


def test_timestep_at_the_minimum_runs(tmp_path: Path) -> None:
    path = tmp_path / "w.world.xml"
    path.write_text(world("<simul_timestep>1e-4</simul_timestep>\n" + BOT.format(body="")))
    w = mv.load_world(path)
    w.run(0.01)
    assert w.timestep == 1e-4 and w.time == pytest.approx(0.01)
