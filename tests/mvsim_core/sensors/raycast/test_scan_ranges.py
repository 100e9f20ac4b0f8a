"""finish_ranges: the compiled last pass of a 2D scan equals the numpy expression it replaced, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from mvsim_core.sensors.raycast.scan_ranges import finish_ranges


def numpy_reference(dist, reach, normals, sigma):
    valid = np.isfinite(dist)
    ranges = np.where(valid, dist, reach)
    if normals is not None:
        ranges += np.where(valid, normals * sigma, 0.0)
    return np.minimum(np.maximum(ranges, 0.0), reach).astype(np.float32), valid


@pytest.mark.parametrize("noisy", [True, False])
def test_matches_the_numpy_expression_bit_for_bit(noisy):
    g = np.random.default_rng(3)
    n = 20000
    reach = np.repeat([30.0, 5.0, 0.5], [8000, 8000, 4000])
    dist = g.uniform(-0.01, 1.2, n) * reach  # some just below 0 or beyond reach, as noise can make them
    dist[g.random(n) < 0.2] = np.inf
    normals = g.standard_normal(n) if noisy else None
    sigma = np.where(np.arange(n) % 3 == 0, 0.0, 0.05) if noisy else None
    want_r, want_v = numpy_reference(dist, reach, normals, sigma)
    r, v = np.empty(n, dtype=np.float32), np.empty(n, dtype=np.bool_)
    empty = np.zeros(0)
    finish_ranges(dist, reach, normals if noisy else empty, sigma if noisy else empty, r, v)
    assert (v == want_v).all()
    assert r.tobytes() == want_r.tobytes()
    assert (r[~v] == reach[~v].astype(np.float32)).all() and r.min() >= 0.0 and (r <= reach).all()
