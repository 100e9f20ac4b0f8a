"""Blow-up handling in the physics: which vehicles and blocks blew up in a step, and putting them back.

After Box2D's step, :meth:`Physics.post_step <mvsim_core.dynamics.physics.Physics.post_step>` finds a vehicle whose
state became NaN/inf or faster than :data:`RUNAWAY_SPEED`, or whose friction force or wheel spin is not finite
(flagged by the compiled post-update), and a dynamic block whose Box2D pose became NaN/inf. Each is reset to its last
finite pose, at rest (:func:`vehicle_blowups`, :func:`block_blowup`) and reported as a
:class:`~mvsim_core.dynamics.faults.Blowup`, which the World records as a fault (:mod:`mvsim_core.dynamics.faults`);
a strict world (``World.strict``) raises :class:`SimulationError` instead.

Frames and units: world frame; x, y (m), yaw (rad), vx, vy (m/s), ω (rad/s).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from mvsim_core.dynamics.faults import Blowup
from mvsim_core.errors import MvsimError

if TYPE_CHECKING:
    from mvsim_core.dynamics.physics import Physics

RUNAWAY_SPEED = 1000.0  # m/s or rad/s: beyond this a body is considered to have blown up


class SimulationError(MvsimError):
    """The simulation produced NaN/inf or runaway velocities (raised only by a strict world; otherwise the object is
    reset and the fault recorded, see :mod:`mvsim_core.dynamics.faults`)."""


def vehicle_blowups(physics: Physics) -> list[Blowup]:
    """The vehicles flagged in ``physics.faulty``, each put back at its last finite pose (``odo_prev``, which
    ``post_update`` left alone for them), at rest: body velocity, wheel spins, torques and forces zero.

    Raises:
        SimulationError: in a strict world (the first of them).
    """
    out = []
    w = physics.wheels
    for k in np.flatnonzero(physics.faulty).tolist():
        name, veh = physics.names[k], physics.vehicles[k]
        st = physics.state[k]
        a, b = int(w.start[k]), int(w.start[k + 1])
        spins = np.flatnonzero(~np.isfinite(w.omega[a:b]))
        if not np.isfinite(st).all():
            what = "NaN/inf in its state"
        elif np.abs(st[3:]).max() > RUNAWAY_SPEED:
            what = f"a runaway velocity (beyond {RUNAWAY_SPEED:g} m/s or rad/s)"
        elif len(spins):
            what = f"wheel {int(spins[0]) + 1} spin became NaN/inf"
        else:
            what = "its friction force or torque became NaN/inf (not applied)"
        if getattr(physics.world, "strict", False):
            _raise_blowup(physics, k, what)
        x, y, yaw = (float(v) for v in physics.odo_prev[k])
        if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(yaw)):
            x, y, _, yaw, _, _ = veh.sim.pose
        physics.bodies.restart(name, x, y, yaw)
        state = tuple(float(v) for v in st)
        physics.state[k] = (x, y, yaw, 0.0, 0.0, 0.0)
        physics.odo_prev[k] = (x, y, yaw)
        physics.twist[k] = 0.0
        physics.forces[k] = 0.0
        for arr in (w.omega, w.torque, w.k_motor, w.fx, w.fy, w.vx, w.vy):
            arr[a:b] = 0.0
        w.phi[a:b] = np.where(np.isfinite(w.phi[a:b]), w.phi[a:b], 0.0)
        _, _, z0, _, pitch0, roll0 = veh.sim.pose
        for arr, v0 in ((physics.z, z0), (physics.pitch, pitch0), (physics.roll, roll0)):
            if not math.isfinite(arr[k]):
                arr[k] = v0
        if physics.pid_batch is not None:
            physics.pid_batch.reset_member(k)
        out.append(Blowup(name, "vehicle", what, state, (x, y, yaw)))
    physics.faulty[:] = False
    return out

def block_blowup(physics: Physics, name: str, body: Any) -> Blowup:
    """A dynamic block whose Box2D pose became NaN/inf, put back at its last finite pose, at rest.

    Raises:
        SimulationError: in a strict world.
    """
    blk = physics.world.blocks[name]
    p, v = body.position, body.linearVelocity
    state = (float(p[0]), float(p[1]), float(body.angle), float(v[0]), float(v[1]), float(body.angularVelocity))
    what = "NaN/inf in its state"
    if getattr(physics.world, "strict", False):
        t = physics.world.time + physics.world.timestep
        raise SimulationError(f"block '{name}' has {what} at step {physics.steps + 1} (t = {t:.4f} s): x, y, yaw, "
                              f"vx, vy, ω = {list(state)}; check its mass, its shape and what pushes it")
    x, y, _, yaw, _, _ = blk.pose  # the last finite one (state_pose, else the declared pose)
    physics.bodies.restart(name, x, y, yaw)
    return Blowup(name, "block", what, state, (x, y, yaw))

def _raise_blowup(physics: Physics, k: int, what: str) -> None:
    t = physics.world.time + physics.world.timestep
    st = physics.state[k]
    raise SimulationError(f"vehicle '{physics.names[k]}': {what} at step {physics.steps + 1} (t = {t:.4f} s): x, y, "
                          f"yaw, vx, vy, ω = {[float(a) for a in st]}; check its masses, wheel inertias, "
                          f"controller gains, friction parameters and the timestep")
