"""The sensor scheduler's compiled pieces (mvsim_core.sensors.scheduler)."""

from __future__ import annotations

import numpy as np

from mvsim_core.geometry.rotations import rotations
from mvsim_core.sensors.scheduler import host_poses


def test_host_poses_are_the_numpy_rotations_bit_for_bit():
    """The vehicles' poses gathered by row and their rotations: the floats of the numpy path they replace."""
    rng = np.random.default_rng(8)
    v = 40
    state = rng.uniform(-50.0, 50.0, (v, 6))
    state[:, 2] = rng.uniform(-4.0, 4.0, v)
    z, pitch, roll = rng.uniform(-1, 1, v), rng.uniform(-0.6, 0.6, v), rng.uniform(-0.6, 0.6, v)
    pitch[:10] = roll[:10] = 0.0  # level ground, the usual case
    rows = rng.integers(0, v, 25)
    host, rot = np.zeros((25, 6)), np.empty((25, 3, 3))
    host_poses(state, z, pitch, roll, rows, host, rot)
    want = np.column_stack([state[rows, 0], state[rows, 1], z[rows], state[rows, 2], pitch[rows], roll[rows]])
    assert host.tobytes() == want.tobytes()
    assert rot.tobytes() == rotations(want[:, 3], want[:, 4], want[:, 5]).tobytes()


def test_host_poses_of_standalone_sensors_are_the_world_frame():
    """Row −1 (a sensor placed in the world, on no vehicle): a zero pose and the identity, as numpy gives them."""
    state, z = np.ones((2, 6)), np.ones(2)
    rows = np.array([-1, 1, -1], dtype=np.int64)
    host, rot = np.full((3, 6), np.nan), np.empty((3, 3, 3))
    host_poses(state, z, z, z, rows, host, rot)
    assert host[[0, 2]].tobytes() == np.zeros((2, 6)).tobytes()
    assert rot[[0, 2]].tobytes() == rotations(np.zeros(2), np.zeros(2), np.zeros(2)).tobytes()
    assert host[1].tolist() == [1.0] * 6
