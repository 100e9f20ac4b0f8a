"""WheelArrays: each wheel's friction kernel id, whether it has mu, and its parameters in its model's columns."""

from __future__ import annotations

import numpy as np

import mvsim_core as mv
from mvsim_core.dynamics import wheel_rows
from mvsim_core.dynamics.friction import FrictionModel

FRICTIONS = {"d": '<friction class="default"><mu>0.3</mu></friction>',
             "w": '<friction class="wardiagnemma"><R1>0.02</R1></friction>',
             "e": '<friction class="ellipse"><C_s>5</C_s></friction>'}


def _world(tmp_path):
    body = "".join(f'<vehicle name="{n}"><dynamics class="{"differential_3_wheels" if n == "w" else "differential"}"/>'
                   f'{f}<init_pose>{3 * k} 0 0</init_pose></vehicle>' for k, (n, f) in enumerate(FRICTIONS.items()))
    (tmp_path / "w.xml").write_text(f'<mvsim_world version="1.0">{body}</mvsim_world>')
    return mv.load_world(tmp_path / "w.xml")


def test_friction_columns_per_wheel(tmp_path):
    w = _world(tmp_path)
    arr = w.start().physics.wheels
    assert arr.base_params.shape == (7, FrictionModel.n_columns())
    assert not hasattr(arr, "tau")
    for k, v in enumerate(w.vehicles.values()):
        s, e = arr.start[k], arr.start[k + 1]
        cls = type(v.friction)
        assert (arr.model[s:e] == cls.kernel_id).all() and (arr.has_mu[s:e] == cls.has_mu).all()
        expected = np.zeros(FrictionModel.n_columns())
        for name, col in cls.COLUMNS.items():
            expected[col] = v.friction.params[name]
        assert (arr.base_params[s:e] == expected).all()
    assert arr.base_params[0, cls.COLUMNS["C_s"]] == 0.0  # a default-model wheel has no ellipse parameters
    assert list(arr.has_mu) == [True] * 5 + [False] * 2


def test_per_wheel_floats_are_views_of_one_table(tmp_path):
    w = _world(tmp_path)
    arr = w.start().physics.wheels
    assert arr.table.shape == (len(wheel_rows.ROWS), 7) and arr.table.dtype == np.float64
    assert arr.table.flags.c_contiguous
    for r, name in enumerate(wheel_rows.ROWS):
        row = getattr(arr, name)
        assert np.shares_memory(row, arr.table[r]) and row.shape == (7,) and row.flags.c_contiguous
    # the row indices the kernels read name the rows of those attributes
    assert arr.table[wheel_rows.RADIUS, 0] == arr.radius[0] > 0.0
    assert arr.table[wheel_rows.FZ, 0] == arr.fz[0] > 0.0
    # a vehicle's own wheel state is a slice of the table's rows
    v = next(iter(w.vehicles.values()))
    v.omega[1] = 3.5
    assert arr.table[wheel_rows.OMEGA, 1] == 3.5


def test_a_restored_snapshot_writes_into_the_table(tmp_path):
    w = _world(tmp_path)
    arr = w.start().physics.wheels
    table = arr.table
    state = w.snapshot()
    arr.omega[:] = 7.0
    arr.phi[:] = -1.0
    w.restore(state)
    assert arr.table is table and np.shares_memory(arr.omega, table)
    assert (table[wheel_rows.OMEGA] == 0.0).all() and (table[wheel_rows.PHI] == 0.0).all()
