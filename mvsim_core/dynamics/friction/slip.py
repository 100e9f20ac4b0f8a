"""The wheel-spin update of a wheel whose friction saturates (it slips), shared by every friction model.

Every model first asks for the longitudinal force that makes the wheel roll at the end of the step, with the
vehicle's speed held (reference §2.3): F_req = (T − I·α*)/R, α* = (v_x/R − ω)/dt. While |F_req| stays within the
model's friction limit the wheel rolls and the model keeps upstream's explicit update, ω += dt·(T − R·F)/I.

Beyond the limit the wheel slips, and that explicit update is what freezes upstream's vehicles on ice: a slipping
wheel is no longer held by the vehicle's mass, only by its own inertia I (0.005 kg·m² on the Jackal), so a speed
controller that reads the wheel's own spin drives it with a loop gain dt·K·R/I per step (2.0 for the Jackal's
twist_pid: K = 20 N·m·s/m, R = 0.1 m, dt = 5 ms). The wheel overshoots, the torque flips sign every step and the
wheel ends up spinning backwards while the vehicle stands still (``jackal_pid_ice`` in the C++ 1.2.0 recordings).

Here a slipping wheel follows the exact solution of its spin equation over the step,

    I·dω/dt = T − R·F − k·(ω − ω₀),   k = k_motor + C_damping,

with T the torque at the start of the step (motor torque minus axle damping and rolling resistance at ω₀), F the
friction force (held over the step) and k how much the torque on the axle drops per rad/s the wheel speeds up during
the step: the axle's viscous damping, plus the speed controller's own reaction when its feedback is that wheel's
spin (``k_motor``, N·m·s/rad, set by the controller each step; a real motor controller closes its speed loop far
faster than 200 Hz). twist_pid gives each wheel it drives (KP + KI·dt + KD/dt)·R, 0 while its output is clamped. The
Ackermann controllers leave it at 0: they read their speed from the odometry of the rear wheels, and on μ = 0.15
their loops stay stable without it (tests/mvsim_core/dynamics/friction/test_slip.py). The equation's solution
ω(dt) = ω₀ + (T − R·F)·φ, φ = (1 − e^(−k·dt/I))/k (dt/I when k = 0), never overshoots the speed the torque settles
at, so the loop cannot go unstable whatever the gains.

The friction force is then chosen as implicit (backward Euler) Coulomb friction does: the force that makes the wheel
roll at the end of the step, F = (T − (v_x/R − ω₀)/φ)/R, clamped to ±limit. When the clamp bites the wheel slips
the whole step and F = ±limit pushes the vehicle the way the tread slides over the ground, so a driven wheel spins
the way its torque turns it and the vehicle accelerates at most at limit/mass per wheel (μ·g on flat ground). When
it does not, the wheel reaches rolling within the step and rolls.

The two updates meet at the limit with the same end spin (rolling) but not the same force. Just past the limit,
the implicit force counts the controller's reaction within the step, so it is smaller than upstream's rolling force
by (1/φ − I/dt)·(v_x/R − ω₀)/R, and can be below the limit. Upstream's update never counts that reaction, and this
one counts it only once the wheel slips. In the saturating cases tested (jackal_pid_B's start, the ice runs) the
vehicle accelerates at a steady μ·g all the same.
"""

from __future__ import annotations

import math


def slipping_wheel(omega: float, vwx: float, t_eff: float, k: float, iyy: float, radius: float, dt: float,
                   limit: float) -> tuple[float, float]:
    """Longitudinal force and new spin of a wheel whose friction saturates (see the module docstring).

    Args:
        omega: spin at the start of the step (rad/s, positive rolls forward).
        vwx: longitudinal speed of the contact point (m/s, wheel frame), held over the step.
        t_eff: torque on the axle at the start of the step (N·m): motor torque minus damping and rolling
            resistance.
        k: drop of that torque per rad/s of spin gained during the step (N·m·s/rad, ≥ 0): controller feedback on
            this wheel plus axle damping.
        iyy: wheel inertia about its axle (kg·m²). radius (m). dt: step (s).
        limit: the friction limit (N, ≥ 0).

    Returns:
        (F_lon, new omega): force on the vehicle along the wheel (N) and the spin after the step (rad/s).
    """
    x = k * dt / iyy
    phi = -math.expm1(-x) / k if x > 1e-12 else dt / iyy
    f = (t_eff - (vwx / radius - omega) / phi) / radius
    f = min(max(f, -limit), limit)
    return f, omega + (t_eff - radius * f) * phi
