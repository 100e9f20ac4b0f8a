"""Who reads a sensor: a sensor that nobody reads costs nothing.

Rendering a 1920 × 1080 camera 30 times a second costs far more than the physics of the robot that carries it; a
simulator that samples every sensor whether or not anyone looks is as slow with one ``/odom`` subscriber as with a
full stack. So each consumer of observations says which sensors it reads, and, where the world runs *on demand*, a
sensor samples only while somebody reads it.

* :attr:`World.sensors_on_demand <mvsim_core.world.World.sensors_on_demand>` — False by default, so that a script
  that reads ``sensor.last`` gets every sensor sampled at its period, as always; ``mvsim launch`` and ``mvsim_node``
  set it: there a sensor samples only while some reader wants it.
* A reader is any hashable label (``"ros"``, ``"zmq"``, ``"record"``, ``"foxglove"``, ``"viewer"``, ``"gym"``, a
  script's own): :meth:`Sensor.want(reader) <mvsim_core.sensors.base.Sensor.want>` and ``unwant(reader)``;
  ``sensor.readers`` lists them. The ROS node wants a sensor while one of its topics has a subscriber, the ZMQ
  server while one of its topics does, a Foxglove view while one of its channels does, the MCAP recorder for the
  sensors whose topics it records, the viewer for the lidars whose points it draws, a gym agent for the sensors in
  its observations.
* ``sensor.enabled = False`` stops a sensor whatever the mode (physics-only runs that still want some sensors).
* The schedule keeps its phase: a due time that passes without a sample is skipped, not postponed, so a reader that
  starts wanting a sensor gets its next sample at the sensor's next due time — within one period. ``sensor.last``
  keeps the latest sample taken (it may be old: its ``stamp`` says when).
* Noise stays deterministic either way: each sensor draws from its own generator
  (:meth:`WorldRandom.stream <mvsim_core.rng.WorldRandom.stream>`, seeded from the world's seed and the sensor's
  ``parent/name``), so sampling or skipping one sensor never shifts another's draws.

The scheduler asks each sensor's state only when some sensor's demand changed (:func:`version`).
"""

from __future__ import annotations

import itertools

_counter = itertools.count(1)
_version = 0


def version() -> int:
    """A number that changes whenever some sensor's readers or ``enabled`` change (in any world of the process)."""
    return _version


def changed() -> None:
    """Note that some sensor's demand changed."""
    global _version
    _version = next(_counter)
