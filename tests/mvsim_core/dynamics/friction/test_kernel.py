"""The compiled dispatch: every registered model's kernel id reaches that model's own law, with its parameters read
from its columns, in the wheel frame."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mvsim_core.dynamics import wheel_rows as wa
from mvsim_core.dynamics.friction import FrictionModel
from mvsim_core.dynamics.friction.default import default_wheel_force
from mvsim_core.dynamics.friction.ellipse import ellipse_wheel_force
from mvsim_core.dynamics.friction.kernel import wheel_friction
from mvsim_core.dynamics.friction.wardiagnemma import ward_iagnemma_resistance

G, DT = 9.81, 0.002
# one wheel: radius 0.2 m, mass 2 kg, Iyy 0.04 kg·m², 80 N of chassis weight, on a slope
RADIUS, MASS, IYY, FZ, GSX, GSY = 0.2, 2.0, 0.04, 80.0, 3.0, -2.0
K_MOTOR = 1.5  # the controller's feedback on the wheel (N·m·s/rad): matters in the slipping states
# parameters away from the defaults, so that a column read by the wrong model shows
VALUES = {"mu": 0.55, "C_damping": 0.03, "C_rr": 0.02, "A_roll": 30.0, "R1": 0.02, "R2": 0.05, "C_s": 6.0,
          "C_alpha": 7.0, "slip_angle_saturation": 0.2, "slip_ratio_saturation": 0.15, "C_alpha_s": 0.4,
          "C_s_alpha": 0.3}


def _default(p, vwx, vwy, omega, tau, m, gwx, gwy, yaw):
    return default_wheel_force(vwx, vwy, omega, tau, m, G, p["mu"], p["C_damping"], p["C_rr"], RADIUS, IYY, gwx,
                               gwy, DT, 0.0, K_MOTOR)


def _wardiagnemma(p, vwx, vwy, omega, tau, m, gwx, gwy, yaw):
    extra = ward_iagnemma_resistance(vwx, m, G, p["A_roll"], p["R1"], p["R2"])
    return default_wheel_force(vwx, vwy, omega, tau, m, G, p["mu"], p["C_damping"], p["C_rr"], RADIUS, IYY, gwx,
                               gwy, DT, extra, K_MOTOR)


def _ellipse(p, vwx, vwy, omega, tau, m, gwx, gwy, yaw):
    return ellipse_wheel_force(vwx, vwy, omega, tau, m, G, yaw, p["C_damping"], p["C_rr"], RADIUS, IYY, gwx, gwy, DT,
                               p["C_s"], p["C_alpha"], p["slip_ratio_saturation"], p["slip_angle_saturation"],
                               p["C_alpha_s"], p["C_s_alpha"], K_MOTOR)


LAWS = {"default": _default, "wardiagnemma": _wardiagnemma, "ellipse": _ellipse}

# (vx, vy, yaw, omega, tau): rolling, braking, sliding sideways on a steered wheel, spinning in place
STATES = [(1.0, 0.0, 0.0, 4.0, 2.0), (2.0, 0.1, 0.0, 12.0, -5.0), (1.5, -0.8, 0.4, 6.0, 1.0),
          (0.3, 0.1, -0.3, 20.0, 8.0)]


def test_every_registered_model_has_a_reference_law_here():
    assert set(LAWS) == set(FrictionModel.registry)


def _kernel(cls, state):
    vx, vy, yaw, omega, tau = state
    params = np.zeros((1, FrictionModel.n_columns()))
    m = cls.defaults()
    for name in cls.COLUMNS:
        m.params[name] = VALUES[name]
    m.fill_columns(params)
    table = np.zeros((len(wa.ROWS), 1))  # one wheel's column of the per-wheel table
    for row, value in ((wa.YAW, yaw), (wa.RADIUS, RADIUS), (wa.MASS, MASS), (wa.IYY, IYY), (wa.OMEGA, omega),
                       (wa.FZ, FZ), (wa.SLOPE_X, GSX), (wa.SLOPE_Y, GSY), (wa.K_MOTOR, K_MOTOR)):
        table[row, 0] = value
    fx, fy = wheel_friction(0, np.array([cls.kernel_id]), params, table, vx, vy, tau, G, DT)
    return fx, fy, table[wa.OMEGA, 0]


def _reference(law, state):
    vx, vy, yaw, omega, tau = state
    c, s = math.cos(yaw), math.sin(yaw)
    f_lon, f_lat, om = law(VALUES, c * vx + s * vy, -s * vx + c * vy, omega, tau, FZ / G + MASS,
                           c * GSX + s * GSY, -s * GSX + c * GSY, yaw)
    return c * f_lon - s * f_lat, s * f_lon + c * f_lat, om


@pytest.mark.parametrize("name", sorted(LAWS))
@pytest.mark.parametrize("state", STATES)
def test_kernel_id_dispatches_to_the_models_law(name, state):
    cls = FrictionModel.from_string(name)
    got = _kernel(cls, state)
    assert got == pytest.approx(_reference(LAWS[name], state), rel=1e-12, abs=1e-12)
    # the laws differ on these states, so a wrong branch would not pass
    for other in set(LAWS) - {name}:
        assert got != pytest.approx(_reference(LAWS[other], state), rel=1e-9, abs=1e-9)
