"""finish_ranges: the compiled last pass of a 2D scan equals the numpy expression it replaced, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from mvsim_core.sensors.raycast.scan_ranges import finish_ranges


def numpy_reference(dist, reach, normals, sigma, near):
    valid = dist < reach
    ranges = np.where(valid, dist, reach)
    if normals is not None:
        ranges += np.where(valid, normals * sigma, 0.0)
    ranges = np.minimum(np.maximum(ranges, 0.0), reach).astype(np.float32)
    if near is not None:
        valid &= ranges >= near
    return ranges, valid


@pytest.mark.parametrize("near", [True, False])
@pytest.mark.parametrize("noisy", [True, False])
def test_matches_the_numpy_expression_bit_for_bit(noisy, near):
    g = np.random.default_rng(3)
    n = 20000
    reach = np.repeat([30.0, 5.0, 0.5], [8000, 8000, 4000])
    dist = g.uniform(-0.01, 1.2, n) * reach  # some just below 0 or beyond reach, as noise can make them
    miss = (g.random(n) < 0.2) | (dist >= reach)
    dist[miss] = reach[miss]  # what the cast leaves where nothing was hit
    normals = g.standard_normal(n) if noisy else None
    sigma = np.where(np.arange(n) % 3 == 0, 0.0, 0.05) if noisy else None
    min_range = np.repeat(np.array([0.3, 0.0, 0.02], dtype=np.float32), [8000, 8000, 4000]) if near else None
    want_r, want_v = numpy_reference(dist, reach, normals, sigma, min_range)
    r, v = np.empty(n, dtype=np.float32), np.empty(n, dtype=np.bool_)
    empty = np.zeros(0)
    finish_ranges(dist, reach, normals if noisy else empty, sigma if noisy else empty,
                  min_range if near else np.zeros(0, dtype=np.float32), r, v)
    assert (v == want_v).all()
    assert r.tobytes() == want_r.tobytes()
    assert (r[miss] == reach[miss].astype(np.float32)).all() and r.min() >= 0.0 and (r <= reach).all()
    assert (~v[miss]).all() and v.sum() > n // 2
    if near:
        assert ((r < min_range) & ~miss).any() and not v[(r < min_range)].any()  # too close: read, not valid
