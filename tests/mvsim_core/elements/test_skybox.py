"""<element class="skybox">: the six-face pattern, local and remote."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from mvsim_core.elements.skybox import FACES
from mvsim_core.errors import WorldFileError


def test_local_faces(build, tmp_path: Path):
    for face in FACES:
        Image.new("RGB", (2, 2)).save(tmp_path / f"sky{face}.png")
    e, ctx = build('<element class="skybox"><textures>sky%s.png</textures></element>')
    assert e.complete and e.faces["Up"] == tmp_path / "skyUp.png"
    assert ctx.warnings == [] and "6/6" in e.summary()


def test_remote_unavailable_is_one_warning(build, no_asset_mirror):
    uri = "https://mrpt.github.io/mvsim-models/skyboxes/SunSet.zip/SunSet/SunSet%s.jpg"
    e, ctx = build(f'<element class="skybox">\n <textures>{uri}</textures>\n</element>')
    assert not e.complete and all(p is None for p in e.faces.values())
    assert list(ctx.missing_assets) == [uri]
    assert len(ctx.warnings) == 1 and ":2: asset not available" in ctx.warnings[0]


@pytest.mark.parametrize(("text", "fragment"), [("", "needs a <textures>"), ("sky.png", "exactly one '%s'")])
def test_bad_pattern(build, text: str, fragment: str):
    with pytest.raises(WorldFileError) as ei:
        build(f'<element class="skybox">\n <textures>{text}</textures>\n</element>')
    assert ei.value.line == 2 and fragment in ei.value.message
