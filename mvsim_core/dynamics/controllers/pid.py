"""The PID parameters shared by the PID-based controllers (reference §1.11, ``PID_Controller``).

Control law (to be run per wheel, or on vx, by the controllers), error e = setpoint − measured, step dt:

    P = KP·e;  I += KI·e·dt;  D = KD·Δe/dt (no D on the first call) or, with N > 0, the filtered
    d += dt·N·(KD·e − d);  u = P + I + D (+ feedforward_gain·setpoint when enabled);
    u clamped to ±max_torque; back-calculation anti-windup with gain KI/KP when enabled.
    Optional reference filter on the setpoint: 1st or 2nd order exponential, a = exp(−dt/τ).

The controllers output −u as wheel torque (negative torque drives forward).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.node import XmlNode
from mvsim_core.xml.params import Kind, Param, ParamValues

LEGACY_IGNORED = frozenset({"I_MAX"})
"""Tags written in shipped vehicle files (``pickup``, ``agricobiot2``, ``turtlebot3_burger``) that no upstream
controller reads; accepted silently."""

REFERENCE_FILTER_ORDERS = (1, 2)


def gain_params(*, kp: float, max_torque: float) -> tuple[Param, ...]:
    """KP, KI, KD and max_torque with the given defaults for KP and max_torque."""
    return (
        Param("KP", Kind.FLOAT, kp, "N·m·s/m", min=0.0, doc="proportional gain (torque per m/s of speed error)"),
        Param("KI", Kind.FLOAT, 0.0, "N·m/m", min=0.0, doc="integral gain"),
        Param("KD", Kind.FLOAT, 0.0, "N·m·s²/m", min=0.0, doc="derivative gain"),
        Param("max_torque", Kind.FLOAT, max_torque, "N·m", positive=True, doc="output clamp ±max_torque"),
    )


def pid_params(*, kp: float, max_torque: float, thresholds: bool = False) -> tuple[Param, ...]:
    """The full PID table of the twist PID controllers.

    Args:
        kp: default KP (10 for the differential ``twist_pid``, 100 for the Ackermann ones).
        max_torque: default output limit in N·m (100; 400 for the drivetrain ``twist_front_steer_pid``).
        thresholds: add ``zero_threshold`` and ``stop_threshold`` (``twist_front_steer_pid``).
    """
    table = (
        *gain_params(kp=kp, max_torque=max_torque),
        Param("N", Kind.FLOAT, 0.0, "1/s", min=0.0, doc="derivative filter bandwidth (0 = unfiltered derivative)"),
        Param("enable_antiwindup", Kind.BOOL, False, doc="back-calculation anti-windup (gain KI/KP)"),
        Param("enable_feedforward", Kind.BOOL, False, doc="add feedforward_gain·setpoint to the output"),
        Param("feedforward_gain", Kind.FLOAT, 1.0, "N·m·s/m", doc="feedforward gain"),
        Param("enable_reference_filter", Kind.BOOL, False, doc="low-pass the setpoint"),
        Param("reference_filter_tau", Kind.FLOAT, 0.1, "s", positive=True, doc="reference filter time constant"),
        Param("reference_filter_order", Kind.INT, 1, doc="reference filter order: 1 or 2"),
    )
    if thresholds:
        table += (
            Param("zero_threshold", Kind.FLOAT, 0.001, "m/s", min=0.0,
                  doc="setpoint speeds below this count as zero"),
            Param("stop_threshold", Kind.FLOAT, 0.05, "m/s", min=0.0,
                  doc="with a zero setpoint, speeds below this count as stopped (torque 0, PID reset)"),
        )
    return table


@dataclass(frozen=True)
class PidConfig:
    """Settings of one PID loop (units as in :func:`pid_params`)."""

    kp: float
    ki: float = 0.0
    kd: float = 0.0
    n: float = 0.0
    max_out: float = 100.0
    antiwindup: bool = False
    feedforward: bool = False
    feedforward_gain: float = 1.0
    reference_filter: bool = False
    reference_filter_tau: float = 0.1
    reference_filter_order: int = 1

    def __deepcopy__(self, memo: dict[int, object]) -> PidConfig:
        """Itself: frozen, numbers only (a controller's snapshot copies it; a fleet's 10,000 copies took 1 s)."""
        return self

    @classmethod
    def from_params(cls, p: ParamValues) -> PidConfig:
        """From a table read with :func:`gain_params` or :func:`pid_params` (missing entries keep defaults)."""
        return cls(kp=float(p["KP"]), ki=float(p["KI"]), kd=float(p["KD"]), n=float(p.get("N", 0.0)),
                   max_out=float(p["max_torque"]), antiwindup=bool(p.get("enable_antiwindup", False)),
                   feedforward=bool(p.get("enable_feedforward", False)),
                   feedforward_gain=float(p.get("feedforward_gain", 1.0)),
                   reference_filter=bool(p.get("enable_reference_filter", False)),
                   reference_filter_tau=float(p.get("reference_filter_tau", 0.1)),
                   reference_filter_order=int(p.get("reference_filter_order", 1)))


def check_pid(p: ParamValues, ctx: ParseContext, node: XmlNode | None) -> None:
    """Checks the Param ranges cannot express: the reference filter order is 1 or 2."""
    order = p.get("reference_filter_order", 1)
    if order not in REFERENCE_FILTER_ORDERS:
        where = p.where.get("reference_filter_order", node)
        raise ctx.error(where, f"<reference_filter_order> must be 1 or 2 (got {order})")


class Pid:
    """One PID loop at run time (the law in the module docstring).

    ``step(error, dt, setpoint)`` returns the output u (clamped to ±max_out); the controllers apply −u as wheel
    torque. The reference filter, when enabled, acts on the setpoint through :meth:`filter_setpoint`.

    Attributes:
        slope: ∂u/∂error of the last step (N·m per m/s): KP + KI·dt + the derivative term's share, 0 when the
            output was clamped. The controllers turn it into each driven wheel's ``k_motor``
            (:mod:`mvsim_core.dynamics.friction.slip`).
    """

    __slots__ = ("cfg", "integral", "prev_error", "d_state", "first", "ref1", "ref2", "slope")

    def __init__(self, cfg: PidConfig) -> None:
        self.cfg = cfg
        self.reset()

    def reset(self) -> None:
        """Forget the integral, the derivative history and the filtered reference."""
        self.integral = 0.0
        self.prev_error = 0.0
        self.d_state = 0.0
        self.first = True
        self.ref1: float | None = None
        self.ref2: float | None = None
        self.slope = 0.0

    def filter_setpoint(self, sp: float, dt: float) -> float:
        """The setpoint after the optional 1st/2nd-order exponential reference filter (a = exp(−dt/τ))."""
        cfg = self.cfg
        if not cfg.reference_filter:
            return sp
        a = math.exp(-dt / cfg.reference_filter_tau)
        self.ref1 = sp if self.ref1 is None else a * self.ref1 + (1.0 - a) * sp
        if cfg.reference_filter_order == 1:
            return self.ref1
        self.ref2 = self.ref1 if self.ref2 is None else a * self.ref2 + (1.0 - a) * self.ref1
        return self.ref2

    def step(self, error: float, dt: float, setpoint: float = 0.0) -> float:
        """One control step: P + I + D (+ feed-forward), clamped; back-calculation anti-windup when enabled."""
        cfg = self.cfg
        p = cfg.kp * error
        slope = cfg.kp + cfg.ki * dt
        if cfg.n > 0.0:
            self.d_state += dt * cfg.n * (cfg.kd * error - self.d_state)
            d = self.d_state
            slope += dt * cfg.n * cfg.kd
        elif self.first or dt <= 0.0:
            d = 0.0
        else:
            d = cfg.kd * (error - self.prev_error) / dt
            slope += cfg.kd / dt
        self.first = False
        self.prev_error = error
        self.integral += cfg.ki * error * dt
        u = p + self.integral + d
        if cfg.feedforward:
            u += cfg.feedforward_gain * setpoint
        if cfg.max_out > 0.0:
            clamped = min(max(u, -cfg.max_out), cfg.max_out)
            if cfg.antiwindup and clamped != u and cfg.kp > 0.0:
                self.integral += (cfg.ki / cfg.kp) * (clamped - u) * dt
            if clamped != u:
                slope = 0.0
            u = clamped
        self.slope = slope
        return u
