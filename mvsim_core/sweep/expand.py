"""The runs of a sweep: every combination of the swept parameters' values, for every seed, each with a stable id.

A run's id is 16 hex digits of the SHA-256 of its seed and parameter values (by results column), so the same run has
the same id in every sweep that has it, whatever the order of the spec's keys: a re-run finds the runs already done
by their ids (:mod:`mvsim_core.sweep.results`).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass

from mvsim_core.sweep.spec import SweepSpec, Value


@dataclass(frozen=True)
class Run:
    """One run of a sweep.

    Attributes:
        run_id: stable id (:func:`run_id`).
        index: its place in the sweep (0-based; seeds vary fastest).
        seed: the world's seed.
        settings: one value per swept parameter, in the order of ``SweepSpec.parameters``.
    """

    run_id: str
    index: int
    seed: int
    settings: tuple[Value, ...]

    def columns(self, spec: SweepSpec) -> dict[str, Value]:
        """Parameter column -> value (``var.mu``, ``include[lidar2d.sensor.xml].noise``)."""
        return {p.column: v for p, v in zip(spec.parameters, self.settings, strict=True)}

    def variables(self, spec: SweepSpec) -> dict[str, Value]:
        """The world variables this run sets (``load_world(variables=...)``)."""
        return {p.name: v for p, v in zip(spec.parameters, self.settings, strict=True) if p.kind == "variable"}

    def include_params(self, spec: SweepSpec) -> dict[str, dict[str, Value]]:
        """The include parameters this run sets, file pattern -> {parameter -> value}."""
        out: dict[str, dict[str, Value]] = {}
        for p, v in zip(spec.parameters, self.settings, strict=True):
            if p.kind == "include":
                out.setdefault(p.pattern, {})[p.name] = v
        return out


def run_id(seed: int, columns: dict[str, Value]) -> str:
    """16 hex digits identifying a run by its seed and parameter values (typed: 1 and "1" differ)."""
    canon = json.dumps({"seed": seed, "parameters": {k: [type(v).__name__, v] for k, v in columns.items()}},
                       sort_keys=True)
    return hashlib.sha256(canon.encode()).hexdigest()[:16]


def expand(spec: SweepSpec) -> Iterator[Run]:
    """The sweep's runs: the cartesian product of the parameters' values (first parameter slowest), each for every
    seed (fastest)."""
    columns = [p.column for p in spec.parameters]
    combos = itertools.product(*(p.values for p in spec.parameters))
    for index, (settings, seed) in enumerate(itertools.product(combos, spec.seeds)):
        yield Run(run_id(seed, dict(zip(columns, settings, strict=True))), index, seed, tuple(settings))
