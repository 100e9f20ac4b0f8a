"""vehicle_forces over the per-wheel table: wheel velocities, the friction kernel's forces per wheel, the summed force
and torque per vehicle, and the guard against non-finite forces."""

from __future__ import annotations

import math

import numpy as np

from mvsim_core.dynamics import wheel_rows as wr
from mvsim_core.dynamics.friction import FrictionModel
from mvsim_core.dynamics.friction.default import DefaultFriction
from mvsim_core.dynamics.friction.kernel import wheel_friction
from mvsim_core.dynamics.vehicle_kernels import vehicle_forces

G, DT = 9.81, 0.001


def _two_wheels(torque: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One vehicle on two default-friction wheels at (0, ±0.25) m: model ids, parameter columns, table."""
    model = np.full(2, DefaultFriction.kernel_id, dtype=np.int64)
    params = np.zeros((2, FrictionModel.n_columns()))
    DefaultFriction.defaults().fill_columns(params)
    t = np.zeros((len(wr.ROWS), 2))
    t[wr.Y] = (0.25, -0.25)
    t[wr.RADIUS] = 0.1
    t[wr.MASS] = 1.0
    t[wr.IYY] = 0.01
    t[wr.FZ] = 20.0
    t[wr.TORQUE] = torque
    return model, params, t


def _call(t, model, params, passive=False, yaw=0.0):
    twist = np.array([[1.0, 0.0, 0.4]])
    out = np.zeros((1, 3))
    bad = np.zeros(1, dtype=np.bool_)
    n = vehicle_forces(twist, np.array([yaw]), np.zeros((1, 2)), np.array([passive]), np.zeros(2, dtype=np.int64),
                       model, params, t, G, DT, out, bad)
    return n, out, bad


def test_wheel_velocities_and_forces_go_to_their_rows():
    model, params, t = _two_wheels(-0.5)
    ref = t.copy()
    n, out, bad = _call(t, model, params)
    assert n == 0 and not bad[0]
    # v = (vx - ω·y, vy + ω·x) at each wheel
    assert list(t[wr.VX]) == [1.0 - 0.4 * 0.25, 1.0 + 0.4 * 0.25] and list(t[wr.VY]) == [0.0, 0.0]
    # each wheel's force and spin are the friction kernel's for that wheel (motor torque with the sign flipped)
    for i in range(2):
        fx, fy = wheel_friction(i, model, params, ref, t[wr.VX, i], 0.0, 0.5, G, DT)
        assert (t[wr.FX, i], t[wr.FY, i], t[wr.OMEGA, i]) == (fx, fy, ref[wr.OMEGA, i])
    # the wheels start still under a moving vehicle: the ground brakes it and spins them up
    assert t[wr.FX, 0] < 0.0 and t[wr.OMEGA, 0] > 0.0
    # summed at the COM (origin here): force, and torque = Σ x·fy − y·fx; yaw 0, so the world frame is the vehicle's
    assert out[0, 0] == t[wr.FX, 0] + t[wr.FX, 1] and out[0, 1] == t[wr.FY, 0] + t[wr.FY, 1]
    assert out[0, 2] == (0.0 * t[wr.FY, 0] - 0.25 * t[wr.FX, 0]) + (0.0 * t[wr.FY, 1] + 0.25 * t[wr.FX, 1])


def test_the_force_turns_into_the_world_frame():
    model, params, t = _two_wheels(-0.5)
    _, out0, _ = _call(t.copy(), model, params)
    _, out, _ = _call(t, model, params, yaw=math.pi / 2)
    c, s = math.cos(math.pi / 2), math.sin(math.pi / 2)
    assert (out[0, 0], out[0, 1], out[0, 2]) == (c * out0[0, 0] - s * out0[0, 1], s * out0[0, 0] + c * out0[0, 1],
                                                 out0[0, 2])


def test_a_passive_vehicle_gets_no_force_but_its_wheels_are_computed():
    model, params, t = _two_wheels(-0.5)
    n, out, bad = _call(t, model, params, passive=True)
    assert n == 0 and (out == 0.0).all() and not bad[0]
    assert t[wr.FX, 0] < 0.0 and t[wr.VX, 1] == 1.0 + 0.4 * 0.25


def test_a_non_finite_force_is_not_applied_and_flags_the_vehicle():
    model, params, t = _two_wheels(-0.5)
    t[wr.SLOPE_X, 1] = math.nan  # (a ground fit gone wrong)
    n, out, bad = _call(t, model, params)
    assert n == 1 and bool(bad[0]) and (out == 0.0).all()
