"""What a run's own code sees besides the world: a :class:`RunContext`, given to a policy controller each control
period and to each custom metric at the end, as ``function(world, ctx)``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mvsim_core.sweep.spec import Goal, Value

if TYPE_CHECKING:
    from mvsim_core.objects.vehicles.base import Vehicle


@dataclass
class RunContext:
    """One run, as its policy and custom metrics see it.

    Attributes:
        run_id: the run's id. seed: the world's seed.
        parameters: parameter column -> value (``var.mu``, ``include[FILE].PARAM``).
        variables: world variable -> value; include_params: file pattern -> {parameter -> value}.
        vehicle: the vehicle driven and measured (None when the world has none).
        goal: the spec's goal, or None.
        duration: simulated seconds of the run.
        params: the policy's ``params`` from the spec, this run's own copy (empty for other controllers).
        state: a dict of this run only, for a policy or metric to keep what it needs between calls.
    """

    run_id: str
    seed: int
    parameters: Mapping[str, Value]
    variables: Mapping[str, Value]
    include_params: Mapping[str, Mapping[str, Value]]
    vehicle: Vehicle | None
    goal: Goal | None
    duration: float
    params: Mapping[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
