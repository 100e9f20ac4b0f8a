"""Typed parameter tables: conversions, units, defaults, precedence and errors."""

from __future__ import annotations

import math

import pytest

from mvsim_core.errors import WorldFileError
from mvsim_core.xml.context import ParseContext
from mvsim_core.xml.params import Kind, Param, convert, read_params
from mvsim_core.xml.parser import parse_text


@pytest.mark.parametrize(("kind", "text", "value"), [
    (Kind.BOOL, " True ", True), (Kind.BOOL, "0", False), (Kind.INT, "25", 25), (Kind.INT, "25.0", 25),
    (Kind.FLOAT, "1e-3", 0.001), (Kind.ANGLE, "90", math.pi / 2), (Kind.COLOR, "#ff8000", (255, 128, 0, 255)),
    (Kind.COLOR, "#0000ff10", (0, 0, 255, 16)), (Kind.POSE2D, "1 2 180", (1.0, 2.0, math.pi)),
    (Kind.POSE3D, "1 2 3 90 0 -90", (1.0, 2.0, 3.0, math.pi / 2, 0.0, -math.pi / 2)),
    (Kind.VEC2, "1, 2", (1.0, 2.0)), (Kind.VEC3, "1 2", (1.0, 2.0, 0.0)), (Kind.FLOATS, "-15 -5\n5 15",
                                                                         (-15.0, -5.0, 5.0, 15.0)),
    (Kind.STRING, "  a b ", "a b"),
])
def test_convert(kind, text, value):
    assert convert(kind, text) == pytest.approx(value) if kind not in (Kind.BOOL, Kind.STRING, Kind.COLOR) \
        else convert(kind, text) == value


@pytest.mark.parametrize(("kind", "text"), [(Kind.BOOL, "yes"), (Kind.INT, "2.5"), (Kind.FLOAT, "1,5"),
                                            (Kind.COLOR, "red"), (Kind.COLOR, "#12345"), (Kind.POSE2D, "1 2"),
                                            (Kind.POSE3D, "1 2 3"), (Kind.VEC2, "1 2 3")])
def test_convert_rejects(kind, text):
    with pytest.raises(ValueError):
        convert(kind, text)


TABLE = (
    Param("mass", Kind.FLOAT, 30.0, "kg", positive=True),
    Param("yaw_deg", Kind.ANGLE, 0.0, "rad", aliases=("yaw",)),
    Param("count", Kind.INT, 3, min=1),
)


def nodes(text):
    return parse_text(text, "t.xml")


def test_instance_wins_then_class_then_default():
    inst, cls = nodes("<i>\n<mass>2</mass>\n</i>\n<c>\n<mass>5</mass>\n<yaw>45</yaw>\n</c>")
    p = read_params(TABLE, [inst, cls], ParseContext())
    assert p.mass == 2.0 and p.yaw_deg == pytest.approx(math.pi / 4) and p.count == 3
    assert p.where["mass"].line == 2 and p.where["yaw_deg"].line == 6 and "count" not in p.where


def test_attribute_table_and_substitution():
    (n,) = nodes('<w mass="$f{2*X}" count="${N}"/>')
    ctx = ParseContext(variables={"X": "1.25", "N": "4"})
    p = read_params(TABLE, [n], ctx, attrs=True)
    assert (p.mass, p.count) == (2.5, 4)


@pytest.mark.parametrize(("text", "line", "msg"), [
    ("<i>\n<mass>0</mass></i>", 2, "<mass> must be greater than 0 kg (got 0)"),
    ("<i>\n\n<count>0</count></i>", 3, "<count> must be at least 1 (got 0)"),
    ("<i><count>many</count></i>", 1, "bad integer 'many' for <count>; expected an integer such as 10"),
    ('<i mass="heavy"/>', 1, 'bad number \'heavy\' for mass="..." of <i>'),
])
def test_errors(text, line, msg):
    (n,) = nodes(text)
    with pytest.raises(WorldFileError) as ei:
        read_params(TABLE, [n], ParseContext(), attrs="mass=" in text)
    assert (ei.value.file, ei.value.line) == ("t.xml", line)
    assert msg in ei.value.message


@pytest.mark.parametrize("text", ["nan", "inf", "-Infinity", "1e999", "1 nan 0", "2e9"])
@pytest.mark.parametrize("kind", [Kind.FLOAT, Kind.ANGLE, Kind.INT, Kind.POSE2D, Kind.FLOATS])
def test_every_number_is_finite_and_bounded(kind, text):
    if kind is not Kind.POSE2D and " " in text:
        return
    with pytest.raises(ValueError):
        convert(kind, text if kind is not Kind.POSE2D or " " in text else f"0 0 {text}")


def test_non_finite_error_names_the_tag_and_line():
    (n,) = nodes("<i>\n<mass>inf</mass>\n</i>")
    with pytest.raises(WorldFileError, match=r"t.xml:2: bad number 'inf' for <mass> \(not a finite number\)"):
        read_params(TABLE, [n], ParseContext())
    (n,) = nodes("<i>\n<count>1e12</count>\n</i>")
    with pytest.raises(WorldFileError, match=r"t.xml:2: bad integer '1e12' for <count> \(magnitude above 1e\+09\)"):
        read_params(TABLE, [n], ParseContext())


def test_max_bound():
    (n,) = nodes("<i><ratio>1.5</ratio></i>")
    with pytest.raises(WorldFileError, match=r"<ratio> must be at most 1 \(got 1.5\)"):
        read_params((Param("ratio", Kind.FLOAT, 0.5, max=1.0),), [n], ParseContext())


def test_read_params_indexes_children_once():
    """A table of n parameters over a node of n children costs O(n), not O(n^2) (each look-up scanned them)."""
    import time

    def run(n: int) -> float:
        node = parse_text("<e>" + "".join(f"<p{i}>{i}</p{i}>" for i in range(n)) + "</e>")[0]
        table = [Param(f"p{i}", Kind.INT, 0) for i in range(n)]
        ctx = ParseContext()
        best = float("inf")
        for _ in range(3):
            t0 = time.process_time()
            values = read_params(table, [None, node], ctx)
            best = min(best, time.process_time() - t0)
        assert values[f"p{n - 1}"] == n - 1 and values.where["p0"] is node.children[0]
        return best

    assert run(8000) / run(800) < 30.0  # linear: about 10; quadratic: about 100
