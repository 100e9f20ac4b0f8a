"""The MVSIM_THREADS setting (mvsim_core/threads.py) and how threaded kernels are served."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mvsim_core import threads
from mvsim_core.errors import MvsimError

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _restore():
    yield
    threads.set_threads(None)


@pytest.mark.parametrize("text, n", [("1", 1), ("2", 2), (" 16 ", 16)])
def test_parse_accepts_whole_numbers(text, n):
    assert threads.parse_threads(text) == n


@pytest.mark.parametrize("text", ["0", "-1", "two", "1.5", "2e3", "", "١"])
def test_parse_refuses_anything_else_and_says_what_to_write(text):
    with pytest.raises(MvsimError) as e:
        threads.parse_threads(text)
    assert str(e.value).startswith(f"MVSIM_THREADS={text!r}: expected a whole number of threads >= 1 (e.g. "
                                   "MVSIM_THREADS=2), or leave it unset for one per core (")


def test_default_is_one_per_core_and_the_variable_overrides(monkeypatch):
    monkeypatch.delenv("MVSIM_THREADS", raising=False)
    threads.set_threads(None)
    assert threads.threads() == len(os.sched_getaffinity(0)) == threads.available_cores()
    monkeypatch.setenv("MVSIM_THREADS", "3")
    assert threads.threads() == len(os.sched_getaffinity(0))  # read once
    threads.set_threads(None)
    assert threads.threads() == 3
    monkeypatch.setenv("MVSIM_THREADS", "zero")
    threads.set_threads(None)
    with pytest.raises(MvsimError, match="MVSIM_THREADS='zero'"):
        threads.threads()


def test_set_threads_and_the_threshold():
    threads.set_threads(1)
    assert threads.threads() == 1 and not threads.use_threads(10**6, 10)
    threads.set_threads(2)
    assert threads.use_threads(10, 10) and not threads.use_threads(9, 10)
    for bad in (0, -2, 1.5, True, "2"):
        with pytest.raises(MvsimError, match=r"set_threads\(.*\): expected a whole number of threads >= 1"):
            threads.set_threads(bad)  # type: ignore[arg-type]


def test_threaded_sets_numbas_count_for_the_calling_thread():
    import numba

    threads.set_threads(1)
    with threads.threaded() as n:
        assert n == 1 == numba.get_num_threads()
    threads.set_threads(64)  # more than numba allows: its maximum
    with threads.threaded() as n:
        assert n == numba.config.NUMBA_NUM_THREADS == numba.get_num_threads()


SERVED = r"""
import sys, numpy as np
from mvsim_core import jit
from mvsim_core.sensors.raycast import rays3d
from mvsim_core.dynamics import vehicle_kernels as vk
out = {"current": jit.aot_active() and not jit.aot_stale_modules(),
       "before": type(rays3d.trace_sensors_parallel).__name__, "built": type(vk.vehicle_forces).__name__,
       "numba": "numba" in sys.modules}
print(out)
"""


def test_a_threaded_kernel_is_compiled_alone_while_the_rest_stays_built():
    """With a current build, a parallel kernel is a lazy JIT object (not a stub that would turn the whole process
    over to the JIT) and importing the kernels imports no numba."""
    env = {**os.environ, "MVSIM_JIT": "aot", "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-c", SERVED], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = ast.literal_eval(r.stdout.strip().splitlines()[-1])
    if not out["current"]:
        pytest.skip("the ahead-of-time build is not current (make setup builds it)")
    assert out == {"current": True, "before": "_LazyJit", "built": "builtin_function_or_method", "numba": False}


def test_a_bad_setting_stops_mvsim_launch_at_the_start_with_exit_2():
    env = {**os.environ, "MVSIM_THREADS": "zero", "MVSIM_OFFLINE": "1"}
    r = subprocess.run([sys.executable, "-m", "mvsim_core.cli", "launch", "worlds/demo.world.xml", "--headless",
                        "--no-server", "--realtime-factor", "0", "--duration", "0.1"], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().startswith("MVSIM_THREADS='zero': expected a whole number of threads >= 1 (e.g. "
                                       "MVSIM_THREADS=2), or leave it unset for one per core (")


FORK_AFTER_THREADS = r"""
import os, sys
import numpy as np
from mvsim_core import threads
from mvsim_core.sensors.raycast.segments import MovingSegments, cast_sets
threads.set_threads(2)
m = MovingSegments()
for k in range(50):
    m.add_object(np.array([[-0.4, -0.3], [0.6, -0.3], [0.6, 0.3], [-0.4, 0.3]]), 0.0, 1.0, owner=k)
m.finish()
m.place(np.column_stack([np.arange(50.0), np.zeros(50), np.zeros(50)]), np.zeros(50), np.zeros(0))
n = 20000
ang = np.linspace(-3.1, 3.1, n)
args = dict(ox=np.full(n, -2.0), oy=np.full(n, 0.1), dx=np.cos(ang), dy=np.sin(ang), height=np.zeros(n),
            use_z=np.zeros(n, bool), visible=np.ones(n, bool), exclude=np.full(n, -1))
def cast():
    out = np.full(n, 30.0)
    cast_sets(None, m, out=out, **args)
    return out
parent = cast()
pid = os.fork()
if pid == 0:
    os._exit(0 if cast().tobytes() == parent.tobytes() else 3)
_, status = os.waitpid(pid, 0)
import numba
print(os.waitstatus_to_exitcode(status), numba.threading_layer(), int((parent < 30.0).sum()))
"""


def test_a_forked_child_runs_threaded_kernels_after_its_parent_did():
    """GNU OpenMP would terminate the child ("fork() called from a process already using GNU OpenMP"): the kernels
    run on numba's workqueue layer, which forks safely."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("NUMBA_THREADING_LAYER", None)
    r = subprocess.run([sys.executable, "-c", FORK_AFTER_THREADS], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    code, layer, hits = r.stdout.split()
    assert (code, layer) == ("0", "workqueue") and int(hits) > 100
