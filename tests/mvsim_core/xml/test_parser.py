"""The lenient XML reader: upstream's quirks accepted, real errors located."""

from __future__ import annotations

import pytest

from mvsim_core.errors import WorldFileError
from mvsim_core.xml.parser import parse_file, parse_text


def test_colon_tags_attributes_text_and_lines():
    roots = parse_text('<a>\n  <vehicle:class name="x" k=\'v\'>\n    <m>1.5</m>\n  </vehicle:class>\n</a>\n', "f.xml")
    assert len(roots) == 1
    a = roots[0]
    vc = a.child("vehicle:class")
    assert vc is not None and vc.attrs == {"name": "x", "k": "v"} and vc.line == 2
    m = vc.child("m")
    assert m.value == "1.5" and m.line == 3 and m.file == "f.xml"


def test_mismatched_closing_tag_is_accepted_with_warning():
    warnings = []
    roots = parse_text("<a>\n<x>0</z>\n<y>1</y>\n</a>", "f.xml", warn=lambda f, ln, m: warnings.append((f, ln, m)))
    a = roots[0]
    assert [c.tag for c in a.children] == ["x", "y"]
    assert a.child("x").value == "0"
    assert warnings and warnings[0][1] == 2 and "</z> closes <x>" in warnings[0][2]


def test_raw_less_than_inside_attribute():
    roots = parse_text('<if condition="$f{if(iY<=3 or iY>=6, 1, 0)}"><b/></if>')
    assert roots[0].attrs["condition"] == "$f{if(iY<=3 or iY>=6, 1, 0)}"
    assert roots[0].children[0].tag == "b"


def test_several_roots_comments_cdata_entities():
    text = '<?xml version="1.0"?>\n<!-- c -->\n<a x="&lt;&amp;&#65;"/>\n<b><![CDATA[<raw>]]> &gt;</b>'
    roots = parse_text(text)
    assert [r.tag for r in roots] == ["a", "b"]
    assert roots[0].attrs["x"] == "<&A"
    assert roots[1].text == "<raw> >"
    assert roots[1].line == 4


def test_attribute_line_numbers():
    roots = parse_text('<include\n  file="x.xml"\n  a="1"/>')
    assert roots[0].attr_lines == {"file": 2, "a": 3}


@pytest.mark.parametrize(("text", "line", "fragment"), [
    ("<a>\n<b>\n</b>\n", 1, "tag <a> is never closed"),
    ("<a>\n</a>\n</b>", 3, "closing tag </b> without a matching opening tag"),
    ("<a>\n<!-- x\n</a>", 2, "comment '<!--' is never closed"),
    ("<a>\n<b c=\"1></b></a>", 2, "never closed"),
    ("hello <a/>", 1, "text outside of any element"),
    ('<?xml version="1.0"?>\n<!DOCTYPE mvsim [\n<!ENTITY x SYSTEM "file:///etc/passwd">\n]>\n<mvsim_world/>', 2,
     "DTDs (<!DOCTYPE ...>) are not supported"),
    ("<!doctype html><a/>", 1, "DTDs (<!DOCTYPE ...>) are not supported"),
    ("<a>\n< b/></a>", 2, "'<' not followed by a tag name"),
    ("<a x=1/>", 1, "malformed attribute"),
])
def test_errors_have_line_and_message(text, line, fragment):
    with pytest.raises(WorldFileError) as ei:
        parse_text(text, "w.xml")
    assert ei.value.file == "w.xml"
    assert ei.value.line == line
    assert fragment in ei.value.message


def test_binary_file_refused(tmp_path):
    f = tmp_path / "bin.xml"
    f.write_bytes(b"<a>\n\x00\x01\x02")
    with pytest.raises(WorldFileError) as ei:
        parse_file(f)
    assert ei.value.line == 2 and "binary data" in ei.value.message


def test_every_shared_file_parses(worlds_dir):
    files = sorted(worlds_dir.rglob("*.xml"))
    assert len(files) >= 30
    for f in files:
        roots = parse_file(f)
        assert roots, f


def test_character_references_xml_does_not_allow_stay_as_written():
    """&#xD800; became a lone surrogate that `mvsim check` could not print (UnicodeEncodeError); &#0; a NUL."""
    roots = parse_text('<a n="&#xD800;|&#0;|&#x110000;|&#99999999999999999999;|&#9;&#x1F600;&#xE000;">&#xDFFF;</a>')
    assert roots[0].attrs["n"] == "&#xD800;|&#0;|&#x110000;|&#99999999999999999999;|\t\U0001F600\ue000"
    assert roots[0].text == "&#xDFFF;"


def test_deep_nesting_is_refused_at_the_limit_without_recursion():
    text = "<a>\n" + "<b>" * 1199 + "</b>" * 1199 + "\n</a>"
    assert len(parse_text(text, max_depth=1200)) == 1
    with pytest.raises(WorldFileError) as ei:
        parse_text(text, "f.xml", max_depth=1199)
    assert str(ei.value) == ("f.xml:2: <b> is nested 1200 elements deep: more than the limit of 1199 levels; set the "
                             "environment variable MVSIM_MAX_NESTING_DEPTH to raise it")
    deep = parse_text("<b>" * 50_000 + "</b>" * 50_000, max_depth=50_000)  # the reader itself has no recursion
    assert deep[0].children[0].tag == "b"


def _cpu_seconds(fn, repeats: int = 3) -> float:
    """Best CPU time of ``repeats`` calls (the least disturbed by other processes)."""
    import time

    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def test_many_attributes_parse_in_linear_time():
    """One tag of 100 000 attributes costs about what ten tags of 10 000 do (it was quadratic: 11x, 22 s)."""
    one = "<a " + "\n".join(f'k{i}="{i}"' for i in range(100_000)) + "/>"
    ten = "".join("<a " + "\n".join(f'k{i}="{i}"' for i in range(10_000)) + "/>" for _ in range(10))
    roots = parse_text(one)
    assert len(roots[0].attrs) == 100_000 and roots[0].attr_lines["k99999"] == 100_000
    assert roots[0].attr_lines["k0"] == 1 and roots[0].attr_lines["k1"] == 2
    ratio = _cpu_seconds(lambda: parse_text(one)) / _cpu_seconds(lambda: parse_text(ten))
    assert ratio < 3.0, ratio


def test_text_of_many_children_joins_in_linear_time():
    many = "<a>" + "t<b/>" * 100_000 + "</a>"
    few = "".join("<a>" + "t<b/>" * 10_000 + "</a>" for _ in range(10))
    assert parse_text(many)[0].text == "t" * 100_000
    assert _cpu_seconds(lambda: parse_text(many)) / _cpu_seconds(lambda: parse_text(few)) < 3.0
