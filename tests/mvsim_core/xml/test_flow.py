"""<include>, <variable>, <for>, <if> as the loader sees them."""

from __future__ import annotations

import math

import pytest

import mvsim_core as mv
from mvsim_core.xml.flow import is_true_condition


def load(tmp_path, body, **files):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "w.xml").write_text(f'<mvsim_world version="1.0">\n{body}\n</mvsim_world>\n')
    return mv.load_world(tmp_path / "w.xml")


def test_for_is_inclusive_and_child_major(tmp_path):
    w = load(tmp_path, '<for var="i" from="1" to="3">\n'
                       ' <block name="a$f{i}"><init_pose>$f{i} 0 0</init_pose></block>\n'
                       ' <block name="b${i}"><init_pose>0 $f{2*i} 0</init_pose></block>\n</for>')
    assert list(w.blocks) == ["a1", "a2", "a3", "b1", "b2", "b3"]
    assert [b.pose[0] for b in list(w.blocks.values())[:3]] == [1.0, 2.0, 3.0]
    assert w.blocks["b3"].pose[1] == 6.0


def test_nested_for_and_if(tmp_path):
    w = load(tmp_path, '<for var="x" from="0" to="2"><for var="y" from="0" to="2">\n'
                       '<if condition="$f{x == y}"><block name="d$f{x}"><init_pose>$f{x} $f{y} 0</init_pose>'
                       '</block></if>\n</for></for>')
    assert list(w.blocks) == ["d0", "d1", "d2"]


@pytest.mark.parametrize(("text", "value"), [("yes", True), ("TRUE", True), ("on", True), ("1", True),
                                             ("0x10", True), ("0", False), ("false", False), ("no", False),
                                             ("", False), ("0.0", False), ("2.5", True)])
def test_if_truth(text, value):
    assert is_true_condition(text) is value


def test_variables_are_global_and_overwritten(tmp_path):
    w = load(tmp_path, '<variable name="G" value="1.5"/>\n<variable name="G" value="$f{G*2}"/>\n'
                       '<include file="sub/inc.xml"/>\n<gravity>${G2}</gravity>',
             **{"sub/inc.xml": '<variable name="G2" value="$f{G+1}"/>'})
    assert w.params["gravity"] == 4.0


def test_include_current_directory_variable(tmp_path):
    with pytest.raises(mv.WorldFileError) as ei:
        load(tmp_path, '<include file="defs/thing.xml"/>',
             **{"defs/thing.xml": '<gui><follow_vehicle>x</follow_vehicle>\n'
                                  '<win_w>${MVSIM_CURRENT_FILE_DIRECTORY}</win_w></gui>'})
    assert ei.value.file.endswith("defs/thing.xml") and ei.value.line == 2
    assert f"bad integer '{tmp_path / 'defs'}'" in ei.value.message


def test_included_file_with_several_roots_and_attributes(tmp_path):
    w = load(tmp_path, '<include file="two.xml" h="3.0"/>',
             **{"two.xml": '<block name="p"><zmax>${h}</zmax><init_pose>0 0 0</init_pose></block>\n'
                           '<block name="q"><zmax>${missing|1.25}</zmax><init_pose>1 0 90</init_pose></block>'})
    assert (w.blocks["p"].zmax, w.blocks["q"].zmax) == (3.0, 1.25)
    assert w.blocks["q"].pose[3] == pytest.approx(math.pi / 2)


def test_include_inside_vehicle_resolves_name_and_parent(tmp_path):
    w = load(tmp_path, '<vehicle name="rov">\n <dynamics class="differential"/>\n <init_pose>0 0 0</init_pose>\n'
                       ' <include file="s.xml" sname="front"/>\n</vehicle>',
             **{"s.xml": '<sensor class="laser" name="${sname}">\n<publish enabled="true">'
                         '<publish_topic>/${PARENT_NAME}/${NAME}</publish_topic></publish>\n</sensor>'})
    s = w.vehicles["rov"].sensors["front"]
    assert s.publish_topic == "/rov/front"


def test_rand_draws_per_iteration_and_randomize(tmp_path):
    body = ('<for var="i" from="1" to="3"><block name="r$f{i}"><init_pose>$f{rand()} 0 0</init_pose></block></for>\n'
            '<variable name="dummy" value="$f{randomize(5)}"/>\n'
            '<block name="s1"><init_pose>$f{rand()} 0 0</init_pose></block>\n'
            '<variable name="dummy2" value="$f{randomize(5)}"/>\n'
            '<block name="s2"><init_pose>$f{rand()} 0 0</init_pose></block>')
    w = load(tmp_path, body)
    xs = [w.blocks[f"r{i}"].pose[0] for i in (1, 2, 3)]
    assert len(set(xs)) == 3 and all(0 <= x < 1 for x in xs)
    assert w.blocks["s1"].pose[0] == w.blocks["s2"].pose[0]


def test_include_path_the_system_cannot_use_is_a_world_file_error(tmp_path):
    """A name too long for the file system used to end in a raw OSError (ENAMETOOLONG)."""
    long_name = "a" * 5000 + ".xml"
    with pytest.raises(mv.WorldFileError) as ei:
        load(tmp_path, f'<include\n file="{long_name}"/>')
    shown = f"{tmp_path}/{'a' * (120 - len(str(tmp_path)) - 1)}...{'a' * 56}.xml ({len(str(tmp_path)) + 5005} " \
            f"characters)"
    assert (ei.value.file, ei.value.line) == (str(tmp_path / "w.xml"), 3)
    assert ei.value.message == f'cannot use included file {shown}: File name too long; check the file="..." path'
    with pytest.raises(mv.WorldFileError) as ei:  # the same inside an object body
        load(tmp_path, f'<block name="b">\n<init_pose>0 0 0</init_pose>\n<include file="{"d/" * 3000}x.xml"/>'
                       f'\n</block>')
    assert ei.value.line == 4 and ei.value.message.endswith(': File name too long; check the file="..." path')


def test_include_of_a_directory_or_a_device_says_what_it_is(tmp_path):
    (tmp_path / "dir.xml").mkdir()
    for target, what in (("dir.xml", f"is a directory: {tmp_path / 'dir.xml'}"),
                         ("/dev/zero", "is not a regular file (a device, fifo or socket): /dev/zero"),
                         ("none.xml", f"not found: {tmp_path / 'none.xml'}")):
        with pytest.raises(mv.WorldFileError) as ei:
            load(tmp_path, f'<include file="{target}"/>')
        assert (ei.value.line, ei.value.message) == (2, f"included file {what}")
