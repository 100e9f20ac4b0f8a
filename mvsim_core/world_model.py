"""The narrow, typed view of a world that the layers below it read: :class:`WorldModel`.

Sensors, dynamics, objects, elements and io are handed a :class:`~mvsim_core.world.World`, but must not depend on it
(it sits above them: ``.importlinter``'s layers contract). They annotate it with this Protocol instead, which declares
exactly what they read; the World satisfies it structurally, and mypy checks that wherever a World is passed down.

The members are read-only properties here (a plain attribute of the World satisfies one): a lower layer reads the
world, and mutates only what the World lets it mutate in place (``warnings.append``). Everything here is imported only
for type checking, so this module sits in the bottom layer and every layer may import it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mvsim_core.elements.base import WorldElement
    from mvsim_core.objects.actor import Actor
    from mvsim_core.objects.block import Block
    from mvsim_core.objects.joint import Joint
    from mvsim_core.objects.marker import Marker
    from mvsim_core.objects.vehicles.base import Vehicle
    from mvsim_core.rng import WorldRandom
    from mvsim_core.sensors.base import Sensor
    from mvsim_core.xml.params import ParamValues


class WorldModel(Protocol):
    """What a sensor, a physics stage, an object or a writer may read of the world it is part of.

    Frames and units: poses of the objects are in the world frame (m, rad); times in simulated seconds.
    """

    @property
    def params(self) -> ParamValues:
        """The root parameters (``simul_timestep``, ``gravity``, ``ground_truth_rate``, ...;
        :mod:`mvsim_core.world_options`)."""

    @property
    def lights(self) -> ParamValues:
        """The ``<lights>`` option block (defaults when absent)."""

    @property
    def georeference(self) -> ParamValues | None:
        """The ``<georeference>`` option block (latitude/longitude of the world origin), None when absent."""

    @property
    def rng(self) -> WorldRandom:
        """The world's seeded random generator."""

    @property
    def elements(self) -> list[WorldElement]:
        """The world elements (grids, planes, elevation maps, ...), in file order."""

    @property
    def blocks(self) -> dict[str, Block]:
        """Name -> block, in file order (walls included)."""

    @property
    def vehicles(self) -> dict[str, Vehicle]:
        """Name -> vehicle, in file order."""

    @property
    def actors(self) -> dict[str, Actor]:
        """Name -> actor, in file order."""

    @property
    def sensors(self) -> dict[str, Sensor]:
        """The standalone (world-level) sensors by name."""

    @property
    def joints(self) -> list[Joint]:
        """The joints between bodies, as declared."""

    @property
    def markers(self) -> list[Marker]:
        """The visual markers, as declared."""

    @property
    def warnings(self) -> list[str]:
        """Warnings so far (``file:line: message``); a lower layer may append its own."""

    @property
    def time(self) -> float:
        """Simulated seconds since the start."""

    @property
    def timestep(self) -> float:
        """Seconds per physics step."""

    @property
    def sensors_on_demand(self) -> bool:
        """Whether a sensor samples only while somebody wants it (:mod:`mvsim_core.sensors.demand`)."""

    def add_step_listener(self, listener: Callable[[WorldModel], None]) -> None:
        """Call ``listener(world)`` after every step."""
