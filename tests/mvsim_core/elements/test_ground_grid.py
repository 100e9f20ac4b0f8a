"""<element class="ground_grid">."""

from __future__ import annotations

import pytest

from mvsim_core.errors import WorldFileError


def test_defaults(build):
    g, ctx = build('<element class="ground_grid"></element>')
    p = g.params
    assert p.floating is True and p.floating_focus == ""
    assert p.color == (0xE0, 0xE0, 0xE0, 0xFF)
    assert p.line_width == 1.0
    assert (p.x_min, p.x_max, p.y_min, p.y_max) == (-25.0, 25.0, -25.0, 25.0)
    assert p.interval == 5.0
    assert g.summary() == "ground_grid [-25, 25] x [-25, 25] m every 5 m (floating)"
    assert ctx.warnings == []


def test_floating_focus_implies_floating(build):
    g, _ = build('<element class="ground_grid"><floating>false</floating><floating_focus>r1</floating_focus>'
                 '</element>')
    assert g.params.floating is True
    assert "floating on r1" in g.summary()


def test_values_read(build):
    g, _ = build('<element class="ground_grid"><x_min>-5</x_min><x_max>7</x_max><interval>0.5</interval>'
                 '<color>#102030</color><floating>0</floating></element>')
    assert g.params.x_min == -5.0 and g.params.x_max == 7.0 and g.params.interval == 0.5
    assert g.params.color == (0x10, 0x20, 0x30, 0xFF)
    assert g.params.floating is False


def test_bad_limits(build):
    with pytest.raises(WorldFileError) as ei:
        build('<element class="ground_grid">\n <x_min>3</x_min>\n <x_max>1</x_max>\n</element>')
    assert ei.value.line == 3 and "<x_max> (1) must not be smaller than <x_min> (3)" in ei.value.message


def test_interval_must_be_positive(build):
    with pytest.raises(WorldFileError) as ei:
        build('<element class="ground_grid">\n <interval>0</interval>\n</element>')
    assert ei.value.line == 2 and "<interval> must be greater than 0" in ei.value.message


def test_too_many_lines(build):
    with pytest.raises(WorldFileError) as ei:
        build('<element class="ground_grid">\n <interval>1e-3</interval>\n</element>')
    assert ei.value.line == 2 and ei.value.message == (
        "ground_grid draws 1e+05 lines (50 x 50 m every 0.001 m), more than 10000; use a larger <interval>")
