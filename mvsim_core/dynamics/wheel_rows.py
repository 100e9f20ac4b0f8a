"""The rows of the per-wheel float table (:attr:`mvsim_core.dynamics.wheels.WheelArrays.table`): one row per
quantity, one column per wheel, so that a kernel takes every wheel's floats as one (len(ROWS), W) float64 argument and
reads ``table[OMEGA, i]``.

Row ``r`` holds the quantity ``ROWS[r]``, which is also the name of the
:class:`~mvsim_core.dynamics.wheels.WheelArrays` attribute viewing it. Units and frames (vehicle frame: x forward,
y left): ``x``, ``y`` wheel position (m); ``yaw`` wheel yaw, steering included (rad); ``radius`` (m); ``mass`` (kg);
``iyy`` spin inertia (kg·m²); ``omega`` spin (rad/s, positive rolls forward); ``phi`` spin angle (rad); ``torque``
controller torque (N·m, negative drives forward); ``k_motor`` the controller's feedback on the wheel's spin
(N·m·s/rad); ``fz`` chassis weight carried (N); ``slope_x``, ``slope_y`` gravity force along the slope (N);
``fx``, ``fy`` last friction force on the vehicle (N); ``vx``, ``vy`` last velocity of the wheel centre (m/s).

A module of its own (no imports) so that both the wheel arrays and the friction kernel, which sit in sibling
modules, can name the rows.
"""

from __future__ import annotations

ROWS: tuple[str, ...] = ("x", "y", "yaw", "radius", "mass", "iyy", "omega", "phi", "torque", "k_motor", "fz",
                         "slope_x", "slope_y", "fx", "fy", "vx", "vy")
"""The quantities of the table's rows, in order."""

# row indices into the table (compiled kernels read them as compile-time constants)
X, Y, YAW, RADIUS, MASS, IYY, OMEGA, PHI, TORQUE, K_MOTOR, FZ, SLOPE_X, SLOPE_Y, FX, FY, VX, VY = range(len(ROWS))
