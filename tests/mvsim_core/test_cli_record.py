"""`mvsim launch --record` and `mvsim record` as a user runs them: interrupted by SIGINT and killed by SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcap.reader import NonSeekingReader
from rosbags.highlevel import AnyReader

REPO = Path(__file__).resolve().parents[2]


def _launch(out: Path) -> subprocess.Popen:
    env = {**os.environ, "MVSIM_OFFLINE": "1"}
    return subprocess.Popen([sys.executable, "-m", "mvsim_core.cli", "launch", "worlds/demo.world.xml", "--headless",
                             "--no-server", "--realtime-factor", "0", "--record", str(out)],
                            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _odom_stamps(path: Path) -> list[int]:
    """/bot1/odom log times of the complete chunks (the file may end anywhere)."""
    out = []
    with open(path, "rb") as f:
        try:
            for _, channel, m in NonSeekingReader(f).iter_messages(log_time_order=False):
                if channel.topic == "/bot1/odom":
                    out.append(m.log_time)
        except Exception:  # noqa: BLE001 (a file cut by the kill ends mid-record)
            pass
    return out


def _wait_for(path: Path, seconds: float, proc: subprocess.Popen) -> None:
    """Until the file holds `seconds` of simulated time in complete chunks (no fixed sleep)."""
    end = time.monotonic() + 120
    while time.monotonic() < end and proc.poll() is None:
        if path.exists() and (s := _odom_stamps(path)) and s[-1] >= seconds * 1e9:
            return
        time.sleep(0.2)
    pytest.fail(f"no {seconds} s of recording in {path}")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_signal_after_10_s_finalises_the_file(tmp_path, signum):
    out = tmp_path / "int.mcap"
    p = _launch(out)
    _wait_for(out, 10.0, p)
    p.send_signal(signum)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert "recorded" in err
    with AnyReader([out]) as r:  # the summary is there: the indexed reader opens it
        counts = {c.topic: c.msgcount for c in r.connections}
        assert r.end_time - r.start_time >= 10e9
    assert counts["/bot1/odom"] >= 501


def test_sigkill_after_10_s_leaves_the_first_9_s(tmp_path):
    """Killed once the file holds 10 s in complete chunks: the non-seeking reader gets every 20 ms odometry message
    from 0 to at least 9 s (the issue's figure; chunks are flushed every simulated second)."""
    out = tmp_path / "kill.mcap"
    p = _launch(out)
    _wait_for(out, 10.0, p)
    p.kill()
    p.wait(timeout=30)
    stamps = _odom_stamps(out)
    assert stamps[0] == 0 and stamps[-1] >= 9_000_000_000
    assert len(stamps) == stamps[-1] // 20_000_000 + 1  # every 20 ms, none missing


def test_record_bad_rate_is_one_line_exit_2(tmp_path):
    r = subprocess.run([sys.executable, "-m", "mvsim_core.cli", "record", "worlds/demo.world.xml",
                        str(tmp_path / "x.mcap"), "--duration", "1", "--record-rate", "/odom=fast"],
                       cwd=REPO, capture_output=True, text=True, timeout=120, env={**os.environ, "MVSIM_OFFLINE": "1"})
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("--record-rate '/odom=fast'")
