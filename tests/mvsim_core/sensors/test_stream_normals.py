"""A fleet's noise draws in one compiled call give numpy's numbers from each sensor's own generator, and leave every
generator where numpy leaves it."""

from __future__ import annotations

import numpy as np
import pytest

from mvsim_core.rng import WorldRandom
from mvsim_core.sensors import stream_normals
from mvsim_core.sensors.base import own_normals


class _Sensor:
    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def stream(self) -> np.random.Generator:
        return self.rng


def _streams(n: int) -> list[np.random.Generator]:
    wr = WorldRandom(7)
    return [wr.stream(f"r{i}/laser") for i in range(n)]


@pytest.mark.parametrize("with_sigma", [False, True])
def test_a_fleet_draws_numpys_numbers_from_each_sensors_stream(with_sigma):
    n = stream_normals.BATCH + 44
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 120, n)
    edges = np.concatenate([[0], np.cumsum(counts)])
    spans = [(int(edges[i]), int(edges[i + 1])) for i in range(n)]
    sigma = rng.choice([0.0, 0.01, 0.3], n) if with_sigma else None
    fleet = [_Sensor(g) for g in _streams(n)]
    got = own_normals(fleet, spans, int(edges[-1]), sigma)
    want = np.zeros(int(edges[-1]))
    for k, g in enumerate(_streams(n)):  # (the one-call-per-sensor way, on fresh copies of the same streams)
        if sigma is None or sigma[k] > 0.0:
            g.standard_normal(out=want[spans[k][0]:spans[k][1]])
        assert fleet[k].rng.standard_normal(3).tobytes() == g.standard_normal(3).tobytes()  # (left where numpy is)
    assert got.tobytes() == want.tobytes()
    assert abs(got[got != 0.0].std() - 1.0) < 0.05
    # the same sensors again: their typed list is reused, and the draws go on
    again = own_normals(fleet, spans, int(edges[-1]), sigma)
    assert len(stream_normals._LISTS) >= 1 and again.tobytes() != got.tobytes()


def test_spans_and_sensors_must_match():
    fleet = [_Sensor(g) for g in _streams(stream_normals.BATCH)]
    with pytest.raises(ValueError, match=f"own_normals: {stream_normals.BATCH} sensors but 3 spans"):
        own_normals(fleet, [(0, 1), (1, 2), (2, 3)], 3)
