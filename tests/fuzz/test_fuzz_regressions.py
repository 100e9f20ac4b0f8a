"""Every minimal world file the fuzzer's findings left in ``tests/fuzz/regressions/`` runs through the fuzzer's own
child runner (a forked child under time and memory limits) and meets the expectation written in its first line:

* ``<!-- expect: ok -->`` — loads, runs with every state finite, ``mvsim check`` exits 0;
* ``<!-- expect: WorldFileError: REGEX -->`` — a ``WorldFileError`` whose text (``path:line: message``) matches
  ``REGEX`` (``re.search``), and ``mvsim check`` exits 2 printing exactly that line.

A ``<!-- xfail: REASON -->`` line marks a finding that is not fixed yet (remove it with the fix)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REGRESSIONS = Path(__file__).resolve().parent / "regressions"
CASES = sorted(REGRESSIONS.glob("*.world.xml"))
_EXPECT = re.compile(r"\A\s*<!--\s*expect:\s*(?:(?P<ok>ok)|WorldFileError:\s*(?P<regex>.*?))\s*-->")
_XFAIL = re.compile(r"<!--\s*xfail:\s*(?P<reason>.*?)\s*-->")
TIMEOUT_S = 60  # generous: a case may need a kernel the warm-up did not compile (a cold numba cache takes seconds)


def expectation(path: Path) -> tuple[str | None, str | None]:
    """(regex, or None for ``ok``; xfail reason or None) written in ``path``."""
    head = path.read_text(errors="replace")[:2000]
    m = _EXPECT.match(head)
    if m is None:
        raise AssertionError(f"{path.name}: the first line must be <!-- expect: ok --> or "
                             f"<!-- expect: WorldFileError: REGEX -->")
    x = _XFAIL.search(head)
    return (None if m.group("ok") else m.group("regex")), (x.group("reason") if x else None)


@pytest.fixture(scope="module")
def results(repo_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every case run once, in one fork server (``python -m tests.fuzz --files ...``)."""
    out = tmp_path_factory.mktemp("fuzz-regressions")
    cmd = [sys.executable, "-m", "tests.fuzz", "--files", *map(str, CASES), "--out", str(out), "--jobs", "2",
           "--timeout", str(TIMEOUT_S)]
    proc = subprocess.run(cmd, cwd=repo_dir, capture_output=True, text=True, timeout=300)
    path = out / "results.json"
    assert path.exists(), f"the fuzzer wrote no results (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return json.loads(path.read_text())


def test_every_regression_file_states_its_expectation() -> None:
    assert len(CASES) >= 8
    for case in CASES:
        expectation(case)


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name.removesuffix(".world.xml"))
def test_regression(case: Path, results: dict[str, Any], request: pytest.FixtureRequest) -> None:
    regex, xfail = expectation(case)
    if xfail:
        request.applymarker(pytest.mark.xfail(reason=xfail, strict=False))
    res = results[str(case)]
    said = f"{res['outcome']} [{res['bucket']}]: {res['message']}\n{res['detail']}"
    if regex is None:
        assert res["outcome"] == "ok", said
        assert res["steps"] > 0
    else:
        assert res["outcome"] == "world_file_error", said
        assert re.search(regex, res["message"]), f"{res['message']!r} does not match {regex!r}"
