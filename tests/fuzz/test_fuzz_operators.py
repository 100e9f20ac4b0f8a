"""The structural operators issue 37 added to the mutator, each applied to a small world of its own (a real folder,
scanned as a corpus root): what each one changes, that it changes nothing outside the mutant, and that what they make
ends as the loader promises (a DTD is refused at line 1; a billion-laughs COLLADA model is refused by expat)."""

from __future__ import annotations

import ast
import random
import re
import time
from pathlib import Path

import pytest

from .corpus import Corpus, CorpusRoot, SourceWorld, build_mirror
from .mutator import (
    DTDS,
    ODD_NUMERALS,
    _decode,
    _Work,
    op_delete_required,
    op_dtd,
    op_duplicate_many,
    op_garbage_image,
    op_garbage_model,
    op_include_cycle,
    op_move_to_parent,
    op_odd_name,
    op_odd_numeral,
    op_swap_values,
)
from .xml_spans import scan

WORLD = """<mvsim_world version="1.0">
    <simul_timestep>0.005</simul_timestep>
    <element class="occupancy_grid"><file>maps/room.png</file><resolution>0.25</resolution></element>
    <block name="box"><mass>2</mass><init_pose>2 0 0</init_pose>
        <shape><pt>0 0</pt><pt>1 0</pt><pt>1 1</pt></shape></block>
    <vehicle name="r1">
        <init_pose>0 0 0</init_pose>
        <dynamics class="differential"/>
        <visual><model_uri>models/box.dae</model_uri></visual>
    </vehicle>
</mvsim_world>
"""
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010800000000")  # a 1 x 1 header, cut short
DAE = b'<?xml version="1.0"?><COLLADA version="1.4.1"><asset><up_axis>Z_UP</up_axis></asset></COLLADA>'


@pytest.fixture
def tree(tmp_path: Path) -> CorpusRoot:
    root = tmp_path / "src"
    (root / "maps").mkdir(parents=True)
    (root / "models").mkdir()
    (root / "w.world.xml").write_text(WORLD)
    (root / "maps/room.png").write_bytes(PNG)
    (root / "maps/unused.png").write_bytes(PNG)
    (root / "models/box.dae").write_bytes(DAE)
    return CorpusRoot.scan("t", root)


def _work(root: CorpusRoot, seed: int) -> _Work:
    corpus = Corpus([root], [SourceWorld(root, "w.world.xml", ())])
    return _Work(corpus, corpus.worlds[0], random.Random(f"test:{seed}"))


def _tags(text: str, tag: str) -> int:
    return sum(e.tag == tag for e in scan(text).elements)


def test_duplicate_many_makes_50_to_200_copies(tree: CorpusRoot) -> None:
    before = {e.tag for e in scan(WORLD).elements}
    for seed in range(20):
        w = _work(tree, seed)
        op = op_duplicate_many(w)
        tag = re.search(r"<(\w+)> x(\d+)", op)
        assert tag is not None and tag.group(1) in before, op
        copies = int(tag.group(2))
        assert copies in (50, 100, 199, 200)
        assert _tags(w.text, tag.group(1)) >= _tags(WORLD, tag.group(1)) + copies


def test_move_to_parent_keeps_every_element_once(tree: CorpusRoot) -> None:
    for seed in range(20):
        w = _work(tree, seed)
        op = op_move_to_parent(w)
        assert op.startswith("move <") and " into <" in op, op
        assert sorted(e.tag for e in scan(w.text).elements) == sorted(e.tag for e in scan(WORLD).elements)
        assert w.text != WORLD


def test_swap_values_exchanges_two_values(tree: CorpusRoot) -> None:
    w = _work(tree, 3)
    op_swap_values(w)
    old = sorted(WORLD[s.start:s.end] for s in scan(WORLD).attr_values + scan(WORLD).texts)
    new = sorted(w.text[s.start:s.end] for s in scan(w.text).attr_values + scan(w.text).texts)
    assert new == old and w.text != WORLD  # the same values, in other places


def test_delete_required_removes_what_the_loader_needs(tree: CorpusRoot) -> None:
    seen = set()
    for seed in range(40):
        w = _work(tree, seed)
        op = op_delete_required(w)
        m = re.match(r"delete required <(\w+)> x(\d+) of <(\w+)>", op)
        if m is None:
            assert op.startswith("empty <"), op
            continue
        tag, n = m.group(1), int(m.group(2))
        seen.add(tag)
        assert _tags(w.text, tag) == _tags(WORLD, tag) - n
    assert {"init_pose", "pt", "file", "shape", "dynamics"} <= seen


def test_odd_numerals_and_names_replace_values(tree: CorpusRoot) -> None:
    checked = 0
    for seed in range(20):
        w = _work(tree, seed)
        op = op_odd_numeral(w)
        assert op.startswith("odd numerals ") and w.text != WORLD, op
        for new in re.findall(r"->('(?:[^'\\]|\\.)*'|\"[^\"]*\")", op):
            assert ast.literal_eval(new) in w.text, (op, new)
            checked += 1
    assert checked >= 20
    assert "\u0663" in ODD_NUMERALS and "\u22121" in ODD_NUMERALS and "0x10" in ODD_NUMERALS
    names = set()
    for seed in range(30):
        w = _work(tree, seed)
        op = op_odd_name(w)
        assert "-> odd name" in op, op
        names.add(op)
    assert len(names) >= 10


def test_include_cycle_writes_two_files_that_include_each_other(tree: CorpusRoot, tmp_path: Path) -> None:
    w = _work(tree, 0)
    op = op_include_cycle(w)
    new = sorted(f for f in w.files if f.startswith("fz_cycle"))
    assert len(new) == 2, op
    a, b = new
    assert f'<include file="{b}"/>' in _decode(w.files[a]) and '<include file="' in _decode(w.files[b])
    assert f'<include file="{a}"/>' in w.text


def test_dtd_goes_before_the_root_and_the_parser_refuses_it(tree: CorpusRoot) -> None:
    from mvsim_core.errors import WorldFileError
    from mvsim_core.xml.parser import parse_text

    for seed in range(10):
        w = _work(tree, seed)
        op_dtd(w)
        assert w.text.lower().startswith("<!doctype")
        with pytest.raises(WorldFileError) as e:
            parse_text(w.text, "w.world.xml")
        assert str(e.value).startswith("w.world.xml:1: ")
    assert any(d.count("<!ENTITY lol") == 10 for d in DTDS)  # billion laughs: 10^9 "lol" if it were expanded


def test_garbage_assets_go_only_into_the_mutant(tree: CorpusRoot, tmp_path: Path) -> None:
    for seed in range(12):
        w = _work(tree, seed)
        op = op_garbage_image(w)
        assert op.startswith("image maps/room.png (named) replaced by "), op  # the one the world names
        assert w.files["maps/room.png"] != PNG or "bytes flipped" in op
    w = _work(tree, 5)
    op_garbage_model(w)
    assert "models/box.dae" in w.files
    assert (tree.path / "maps/room.png").read_bytes() == PNG and (tree.path / "models/box.dae").read_bytes() == DAE
    mirror = tmp_path / "mirror"
    build_mirror(tree, mirror, w.files)
    assert (mirror / "models/box.dae").read_bytes() == w.files["models/box.dae"]
    assert not (mirror / "models/box.dae").is_symlink() and (mirror / "maps/unused.png").is_symlink()


def test_billion_laughs_model_is_refused_quickly(tmp_path: Path) -> None:
    from mvsim_core.errors import AssetError
    from mvsim_core.io.meshes import load_mesh

    bomb = tmp_path / "bomb.dae"
    bomb.write_text('<?xml version="1.0"?>' + DTDS[0] + '<COLLADA version="1.4.1"><asset><up_axis>&lol9;</up_axis>'
                    '</asset></COLLADA>')
    t0 = time.monotonic()
    with pytest.raises(AssetError, match=r"cannot parse COLLADA file \(.*amplification"):
        load_mesh(str(bomb))
    assert time.monotonic() - t0 < 5.0
