"""The run-time PID law."""

from __future__ import annotations

import math

import pytest

from mvsim_core.dynamics.controllers.pid import Pid, PidConfig


def test_p_i_d_terms():
    pid = Pid(PidConfig(kp=2.0, ki=0.5, kd=0.1, max_out=0.0))
    assert pid.step(1.0, 0.1) == pytest.approx(2.0 + 0.05)          # no D on the first call
    assert pid.step(0.5, 0.1) == pytest.approx(1.0 + 0.075 + 0.1 * (0.5 - 1.0) / 0.1)


def test_clamp_and_antiwindup():
    plain = Pid(PidConfig(kp=1.0, ki=10.0, max_out=2.0))
    aw = Pid(PidConfig(kp=1.0, ki=10.0, max_out=2.0, antiwindup=True))
    for _ in range(50):
        assert plain.step(1.0, 0.01) <= 2.0
        aw.step(1.0, 0.01)
    assert plain.integral == pytest.approx(5.0)
    assert aw.integral < plain.integral


def test_filtered_derivative_and_feedforward():
    pid = Pid(PidConfig(kp=0.0, kd=1.0, n=10.0, feedforward=True, feedforward_gain=2.0, max_out=0.0))
    # d += dt*N*(KD*e - d): 0 + 0.1*10*(1 - 0) = 1
    assert pid.step(1.0, 0.1, setpoint=0.5) == pytest.approx(1.0 + 1.0)


def test_reference_filter_first_order():
    pid = Pid(PidConfig(kp=1.0, reference_filter=True, reference_filter_tau=0.1))
    assert pid.filter_setpoint(1.0, 0.01) == 1.0      # starts at the first setpoint
    a = math.exp(-0.1)
    assert pid.filter_setpoint(0.0, 0.01) == pytest.approx(a)
    pid.reset()
    assert pid.filter_setpoint(2.0, 0.01) == 2.0
