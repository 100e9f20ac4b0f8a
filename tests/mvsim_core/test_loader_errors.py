"""Bad world files: every kind gives WorldFileError(file, line, message) at the right place, and nothing runs."""

from __future__ import annotations

from pathlib import Path

import pytest

import mvsim_core as mv

VEH_CLASS = """<vehicle:class name="bot">
  <dynamics class="differential">
    <controller class="twist_pid"><KP>10</KP></controller>
  </dynamics>
</vehicle:class>
"""


def world(body: str, header: str = '<mvsim_world version="1.0">\n') -> str:
    return header + body + "</mvsim_world>\n"


# (kind, files {name: text}, expected file name, expected line, message fragment)
CASES = [
    ("wrong root", {"w.xml": "<world>\n</world>\n"}, "w.xml", 1, "root element is <world>"),
    ("unclosed tag", {"w.xml": world("<gui>\n<win_w>3</win_w>\n")}, "w.xml", 2,
     "tag <gui> is never closed; add </gui> (the </mvsim_world> at line 4 closed it instead)"),
    ("not xml", {"w.xml": "this is not a world\n"}, "w.xml", 1, "text outside of any element"),
    ("bad version", {"w.xml": '<mvsim_world version="one">\n</mvsim_world>'}, "w.xml", 1, 'bad version="one"'),
    ("unknown dynamics class", {"w.xml": world(
        '<vehicle name="v">\n  <dynamics class="hovercraft"/>\n  <init_pose>0 0 0</init_pose>\n</vehicle>\n')},
     "w.xml", 3, "unknown dynamics class 'hovercraft'"),
    ("unknown controller class", {"w.xml": world(
        '<vehicle name="v">\n <dynamics class="differential">\n  <controller class="magic"/>\n </dynamics>\n'
        ' <init_pose>0 0 0</init_pose>\n</vehicle>\n')}, "w.xml", 4, "magic"),
    ("unknown friction class", {"w.xml": world(
        '<vehicle name="v">\n <dynamics class="differential"/>\n <friction class="sticky"/>\n'
        ' <init_pose>0 0 0</init_pose>\n</vehicle>\n')}, "w.xml", 4, "sticky"),
    ("unknown sensor class", {"w.xml": world(
        '<vehicle name="v">\n <dynamics class="differential"/>\n <init_pose>0 0 0</init_pose>\n'
        ' <sensor class="sonar"/>\n</vehicle>\n')}, "w.xml", 5, "sonar"),
    ("unknown element class", {"w.xml": world('<element class="lava_lake">\n</element>\n')},
     "w.xml", 2, "lava_lake"),
    ("vehicle of undefined class", {"w.xml": world(
        '<vehicle name="v" class="nope">\n <init_pose>0 0 0</init_pose>\n</vehicle>\n')},
     "w.xml", 2, "uses undefined class 'nope'"),
    ("duplicate vehicle names", {"w.xml": world(
        VEH_CLASS + '<vehicle name="r1" class="bot"><init_pose>0 0 0</init_pose></vehicle>\n'
        '<vehicle name="r1" class="bot"><init_pose>2 0 0</init_pose></vehicle>\n')},
     "w.xml", 8, "duplicate name 'r1'"),
    ("duplicate block and vehicle names", {"w.xml": world(
        VEH_CLASS + '<vehicle name="x" class="bot"><init_pose>0 0 0</init_pose></vehicle>\n'
        '<block name="x"><init_pose>2 0 0</init_pose></block>\n')}, "w.xml", 8, "duplicate name 'x'"),
    ("duplicate class names", {"w.xml": world(VEH_CLASS + VEH_CLASS)}, "w.xml", 7, "duplicate vehicle class 'bot'"),
    ("bad number", {"w.xml": world("<gravity>nine</gravity>\n")}, "w.xml", 2,
     "bad number 'nine' for <gravity>; expected a number such as 1.5"),
    ("bad bool", {"w.xml": world("<gui>\n <ortho>maybe</ortho>\n</gui>\n")}, "w.xml", 3,
     "bad bool 'maybe' for <ortho>; expected true, false, 1 or 0"),
    ("bad pose", {"w.xml": world('<block name="b">\n <init_pose>1 2</init_pose>\n</block>\n')}, "w.xml", 3,
     "bad pose '1 2' for <init_pose> (expected 3 numbers, got 2)"),
    ("bad colour", {"w.xml": world('<block name="b">\n <color>#12345</color>\n <init_pose>0 0 0</init_pose>\n'
                                   '</block>\n')}, "w.xml", 3, "bad colour '#12345' for <color>"),
    ("negative mass", {"w.xml": world('<block name="b">\n <mass>-3</mass>\n <init_pose>0 0 0</init_pose>\n'
                                      '</block>\n')}, "w.xml", 3, "<mass> must be greater than 0 kg (got -3)"),
    ("negative size", {"w.xml": world('<block name="b">\n <geometry type="box" lx="1" ly="-2" lz="1"/>\n'
                                      ' <init_pose>0 0 0</init_pose>\n</block>\n')}, "w.xml", 3,
     'ly="..." of <geometry> must be greater than 0 (got -2)'),
    ("negative wheel diameter", {"w.xml": world(
        '<vehicle name="v">\n <dynamics class="differential">\n  <l_wheel diameter="-0.4"/>\n </dynamics>\n'
        ' <init_pose>0 0 0</init_pose>\n</vehicle>\n')}, "w.xml", 4, "diameter"),
    ("negative timestep", {"w.xml": world("<simul_timestep>-0.01</simul_timestep>\n")}, "w.xml", 2,
     "<simul_timestep> must be at least 0 s (got -0.01)"),
    ("unknown variable", {"w.xml": world('<variable name="A" value="1"/>\n<gravity>${G}</gravity>\n')},
     "w.xml", 3, "unknown variable ${G}; known variables: A"),
    ("variables that refer to each other", {
        "w.xml": world('<include file="inc.xml" a="${b}" b="${a}"/>\n'),
        "inc.xml": "<gravity>${a}</gravity>\n"}, "w.xml", 2, "variables refer to each other"),
    ("missing include", {"w.xml": world('<include\n  file="nothere.xml"/>\n')}, "w.xml", 3,
     "included file not found"),
    ("include cycle", {"w.xml": world('<include file="a.xml"/>\n'), "a.xml": '<include file="b.xml"/>\n',
                       "b.xml": '\n<include file="a.xml"/>\n'}, "b.xml", 2, "include cycle: a.xml -> b.xml -> a.xml"),
    ("error inside an included file", {"w.xml": world('<include file="inc.xml"/>\n'),
                                       "inc.xml": "<gui>\n\n <win_w>wide</win_w>\n</gui>\n"},
     "inc.xml", 3, "bad integer 'wide' for <win_w>"),
    ("missing map file", {"w.xml": world('<element class="occupancy_grid">\n <file>nomap.png</file>\n'
                                         '</element>\n')}, "w.xml", 3, "nomap.png"),
    ("unreadable image", {"w.xml": world('<element class="occupancy_grid">\n <file>bad.png</file>\n</element>\n'),
                          "bad.png": "this is not a png"}, "w.xml", 3, "bad.png"),
    ("$f syntax error", {"w.xml": world("<gravity>$f{2 * (3 + }</gravity>\n")}, "w.xml", 2, "in $f{2 * (3 + }"),
    ("$f __import__ refused", {"w.xml": world("<gravity>$f{__import__('os').system('touch PWNED')}</gravity>\n")},
     "w.xml", 2, "in $f{__import__("),
    ("$f attribute access refused", {"w.xml": world("<gravity>$f{math.pi}</gravity>\n")}, "w.xml", 2,
     "in $f{math.pi}"),
    ("$(cmd) without permission", {"w.xml": world("<gravity>$(touch PWNED)</gravity>\n")}, "w.xml", 2,
     "refused to run shell command $(touch PWNED)"),
    ("for with non-integer bounds", {"w.xml": world('<for var="i" from="1"\n to="2.5">\n</for>\n')}, "w.xml", 3,
     '<for> bound to="2.5" is not an integer'),
    ("undefined text variable in include", {"w.xml": world('<include file="inc.xml"/>\n'),
                                            "inc.xml": "<gui>\n <win_w>${WIDTH}</win_w>\n</gui>\n"},
     "inc.xml", 2, "undefined variable ${WIDTH}"),
    ("joint to an undefined body", {"w.xml": world('<joint type="revolute" body_a="a" body_b="b"/>\n')},
     "w.xml", 2, "joint body_a=\"a\" is not a vehicle or block"),
    ("shape with too few points", {"w.xml": world('<block name="b">\n <shape><pt>0 0</pt><pt>1 0</pt></shape>\n'
                                                  ' <init_pose>0 0 0</init_pose>\n</block>\n')}, "w.xml", 3,
     "<shape> needs at least 3"),
    ("vehicle without init_pose", {"w.xml": world(VEH_CLASS + '<vehicle name="r" class="bot">\n</vehicle>\n')},
     "w.xml", 7, "has no <init_pose>"),
]


@pytest.mark.parametrize(("kind", "files", "fname", "line", "fragment"), CASES, ids=[c[0] for c in CASES])
def test_bad_world(tmp_path: Path, monkeypatch, kind, files, fname, line, fragment):
    monkeypatch.chdir(tmp_path)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(mv.WorldFileError) as ei:
        mv.load_world(tmp_path / "w.xml")
    err = ei.value
    assert Path(err.file).name == fname, str(err)
    assert err.line == line, str(err)
    assert fragment in err.message, str(err)
    assert str(err).startswith(f"{err.file}:{line}: " if line else f"{err.file}: ")
    assert not (tmp_path / "PWNED").exists()


def test_missing_world_file(tmp_path):
    with pytest.raises(mv.WorldFileError) as ei:
        mv.load_world(tmp_path / "none.world.xml")
    assert ei.value.message == "file not found; check the path" and ei.value.line == 0


def test_empty_world_file(tmp_path):
    (tmp_path / "w.xml").write_text("  \n")
    with pytest.raises(mv.WorldFileError) as ei:
        mv.load_world(tmp_path / "w.xml")
    assert ei.value.line == 1 and ei.value.message.startswith("empty file")


def test_binary_world_file(tmp_path):
    (tmp_path / "w.xml").write_bytes(bytes(range(256)) * 4)
    with pytest.raises(mv.WorldFileError) as ei:
        mv.load_world(tmp_path / "w.xml")
    assert ei.value.line == 1 and "binary data" in ei.value.message


def test_unknown_tags_warn_once_and_are_skipped(tmp_path):
    text = world('<for var="i" from="1" to="3">\n<frobnicate/>\n</for>\n<gui>\n <wobble>1</wobble>\n</gui>\n')
    (tmp_path / "w.xml").write_text(text)
    w = mv.load_world(tmp_path / "w.xml")
    f = str(tmp_path / "w.xml")
    assert w.warnings == [f"{f}:3: unknown tag <frobnicate> is ignored",
                          f"{f}:6: unknown tag <wobble> in <gui> is ignored"]


def test_shell_runs_when_allowed(tmp_path):
    (tmp_path / "w.xml").write_text(world("<gravity>$(echo 3.5)</gravity>\n"))
    w = mv.load_world(tmp_path / "w.xml", allow_shell=True)
    assert w.params["gravity"] == 3.5
