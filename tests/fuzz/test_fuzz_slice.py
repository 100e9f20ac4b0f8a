"""The fuzzer's slice for the test suite: 300 mutants of the shipped and upstream worlds (seed 1), each run in a forked
child, must all end as "loaded and ran with finite state" or as a ``WorldFileError`` with file:line that
``mvsim check`` reports in one line (issue 14, Deliver 5). ``make fuzz N=10000`` runs the long campaign."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .outcome import FAILURES

MUTANTS = 300
SEED = 1


@pytest.mark.slow
def test_fuzz_slice_has_no_failures(repo_dir: Path, tmp_path: Path) -> None:
    jobs = min(2, os.cpu_count() or 1)
    cmd = [sys.executable, "-m", "tests.fuzz", "--n", str(MUTANTS), "--seed", str(SEED), "--jobs", str(jobs),
           "--timeout", "30", "--sim-time", "0.2", "--out", str(tmp_path), "--quiet"]
    proc = subprocess.run(cmd, cwd=repo_dir, capture_output=True, text=True, timeout=900)
    summary_path = tmp_path / "summary.json"
    assert summary_path.exists(), f"no summary (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr[-3000:]}"
    summary = json.loads(summary_path.read_text())
    assert summary["mutants"] == MUTANTS, proc.stdout
    failures = {c: n for c, n in summary["classes"].items() if c in FAILURES and n}
    assert failures == {}, proc.stdout
    assert summary["classes"]["ok"] >= MUTANTS // 5 and summary["classes"]["world_file_error"] >= MUTANTS // 5
    assert proc.returncode == 0, proc.stderr[-3000:]
