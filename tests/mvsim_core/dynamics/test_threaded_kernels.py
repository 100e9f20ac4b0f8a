"""The threaded friction kernel and post-step update (vehicle_forces_threaded, post_update_threaded) give byte for
byte what the one-thread kernels give, on a random fleet of every friction model, and a fleet world steps
bit-identically with MVSIM_THREADS=1 and =2."""

from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mvsim_core import threads
from mvsim_core.dynamics import wheel_rows as wr
from mvsim_core.dynamics.friction import DefaultFriction, EllipseFriction, FrictionModel, WardIagnemmaFriction
from mvsim_core.dynamics.physics import THREADED_VEHICLES
from mvsim_core.dynamics.vehicle_kernels import (
    post_update,
    post_update_threaded,
    vehicle_forces,
    vehicle_forces_threaded,
)

REPO = Path(__file__).resolve().parents[3]
SHARED = Path(os.environ.get("MVSIM_SHARED_DIR", REPO.parent / "shared"))
MODELS = (DefaultFriction, WardIagnemmaFriction, EllipseFriction)


@pytest.fixture(autouse=True)
def _restore():
    yield
    threads.set_threads(None)


def _fleet(seed: int, vehicles: int) -> tuple:
    """Random kernel inputs: ``vehicles`` vehicles of 1 to 6 wheels, each wheel of a random friction model."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 7, vehicles)
    start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    n = int(start[-1])
    veh = np.repeat(np.arange(vehicles), counts).astype(np.int64)
    kinds = rng.integers(0, len(MODELS), n)
    model = np.array([MODELS[k].kernel_id for k in kinds], dtype=np.int64)
    params = np.zeros((n, FrictionModel.n_columns()))
    for k, cls in enumerate(MODELS):
        one = np.zeros((1, FrictionModel.n_columns()))
        cls.defaults().fill_columns(one)
        params[kinds == k] = one
    t = np.zeros((len(wr.ROWS), n))
    t[wr.X] = rng.uniform(-0.5, 0.5, n)
    t[wr.Y] = rng.uniform(-0.4, 0.4, n)
    t[wr.YAW] = rng.uniform(-0.5, 0.5, n) * (rng.random(n) < 0.3)
    t[wr.RADIUS] = rng.uniform(0.05, 0.3, n)
    t[wr.MASS] = rng.uniform(0.5, 5.0, n)
    t[wr.IYY] = rng.uniform(0.001, 0.1, n)
    t[wr.FZ] = rng.uniform(5.0, 200.0, n)
    t[wr.TORQUE] = rng.uniform(-3.0, 3.0, n)
    t[wr.OMEGA] = rng.uniform(-10.0, 10.0, n)
    t[wr.SLOPE_X] = rng.normal(0.0, 1.0, n) * (rng.random(n) < 0.2)
    t[wr.SLOPE_Y] = rng.normal(0.0, 1.0, n) * (rng.random(n) < 0.2)
    t[wr.SLOPE_X, n // 2] = math.nan  # (one vehicle's ground fit gone wrong: its force must not be applied)
    twist = rng.normal(0.0, 1.0, (vehicles, 3))
    yaw = rng.uniform(-math.pi, math.pi, vehicles)
    com = rng.normal(0.0, 0.05, (vehicles, 2))
    passive = rng.random(vehicles) < 0.1
    return twist, yaw, com, passive, veh, start, model, params, t


@pytest.mark.parametrize("seed", [0, 1])
def test_the_threaded_friction_kernel_is_bit_identical(seed):
    twist, yaw, com, passive, veh, start, model, params, t = _fleet(seed, 700)
    v = twist.shape[0]
    t1, out1, bad1 = t.copy(), np.full((v, 3), 7.0), np.zeros(v, dtype=np.bool_)
    n1 = vehicle_forces(twist, yaw, com, passive, veh, model, params, t1, 9.81, 0.005, out1, bad1)
    threads.set_threads(2)
    with threads.threaded() as used:
        t2, out2, bad2 = t.copy(), np.full((v, 3), 7.0), np.zeros(v, dtype=np.bool_)
        n2 = vehicle_forces_threaded(twist, yaw, com, passive, start, model, params, t2, 9.81, 0.005, out2, bad2)
    assert used == min(2, __import__("numba").config.NUMBA_NUM_THREADS)
    assert n1 == n2 == 1 and bad1[veh[len(veh) // 2]] and (bad1 == bad2).all()
    assert out1.tobytes() == out2.tobytes() and t1.tobytes() == t2.tobytes()
    assert np.isfinite(out1).all() and (out1[passive] == 0.0).all() and np.abs(out1).max() > 1.0


def test_the_threaded_post_step_update_is_bit_identical():
    rng = np.random.default_rng(4)
    twist0, yaw, com, passive, veh, start, model, params, t = _fleet(2, 800)
    v, n = twist0.shape[0], veh.shape[0]
    state = np.column_stack([rng.uniform(-50, 50, (v, 2)), rng.uniform(-4, 4, v), rng.normal(0, 1, (v, 3))])
    state[5, 4] = 1e9  # (runs away)
    state[6, 0] = math.inf
    omega = rng.normal(0.0, 20.0, n)
    omega[start[7]] = math.nan  # (a wheel of vehicle 7 spins at NaN)
    phi = rng.uniform(-1e4 - 10, 1e4 + 10, n)  # (some beyond the wrap)
    prev = state[:, :3] + rng.normal(0, 0.01, (v, 3))
    odo = rng.normal(0, 5, (v, 3))
    mult = 1.0 + rng.normal(0, 0.02, (v, 3))
    bad0 = rng.random(v) < 0.01
    outs = []
    for threaded in (False, True):
        a = [state.copy(), np.zeros((v, 3)), prev.copy(), odo.copy(), mult, omega, phi.copy()]
        bad = bad0.copy()
        if threaded:
            threads.set_threads(2)
            with threads.threaded():
                nb = post_update_threaded(*a, start, 0.005, 50.0, bad)
        else:
            nb = post_update(*a, veh, 0.005, 50.0, bad)
        outs.append((nb, bad, a))
    (n1, bad1, a1), (n2, bad2, a2) = outs
    assert n1 == n2 == int(bad1.sum()) >= 3 and bad1[[5, 6, 7]].all() and (bad1 == bad2).all()
    assert all(x.tobytes() == y.tobytes() for x, y in zip(a1, a2, strict=True))
    assert (np.abs(a1[6]) <= 1e4 + 10).all() and not np.array_equal(a1[6], phi)


STEP_FLEET = """
import hashlib, sys
sys.path.insert(0, {repo!r})
import mvsim_core as mv
w = mv.load_world({world!r})
w.start()
for i, v in enumerate(w.vehicles.values()):
    v.set_twist(0.2 + 0.001 * i, 0.0, 0.3 - 0.0007 * i)
w.run(0.5)
p = w.physics
h = hashlib.sha256()
for a in (p.state, p.twist, p.odometry, p.odo_prev, p.forces, p.wheels.table, p.wheels.phi):
    h.update(a.tobytes())
import mvsim_core.dynamics.physics as ph
print(len(w.vehicles), h.hexdigest(), len(getattr(ph.vehicle_forces_threaded, "signatures", ())),
      len(getattr(ph.post_update_threaded, "signatures", ())))
"""


def test_a_fleet_steps_bit_identically_on_one_and_two_threads(tmp_path):
    robots = THREADED_VEHICLES + 88
    body = "".join(f'<vehicle name="r{i}" class="small_robot"><init_pose>{1.2 * (i % 25):g} {1.2 * (i // 25):g} '
                   f'{(i % 7) * 0.5:g}</init_pose></vehicle>\n' for i in range(robots))
    world = tmp_path / "fleet.world.xml"
    world.write_text(f'<mvsim_world version="1.0"><simul_timestep>0.005</simul_timestep>'
                     f'<include file="{SHARED / "worlds" / "definitions" / "small_robot.vehicle.xml"}"/>\n'
                     f'{body}</mvsim_world>\n')
    code = STEP_FLEET.format(repo=str(REPO), world=str(world))
    lines = []
    for n in ("1", "2"):
        env = dict(os.environ, MVSIM_THREADS=n, MVSIM_OFFLINE="1")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
        assert p.returncode == 0, p.stderr
        lines.append(p.stdout.split())
    # the same numbers; only the second process compiled (and so ran) the threaded kernel
    assert lines[0][0] == str(robots) and lines[0][:2] == lines[1][:2]
    assert (lines[0][2:], lines[1][2:]) == (["0", "0"], ["1", "1"])
    assert len(lines[0][1]) == len(hashlib.sha256().hexdigest())
