"""A PNG whose chunk claims more bytes than its file is refused before any decoder reads it (issue 37's fuzzer)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from mvsim_core.errors import AssetError
from mvsim_core.io.image_map import image_size, read_image_array
from mvsim_core.io.png_chunks import png_chunk_problem
from mvsim_core.sensors.render.scene_geometry import load_texture


def _png(tmp_path: Path) -> Path:
    p = tmp_path / "map.png"
    Image.fromarray(np.full((20, 30), 255, np.uint8)).save(p)
    return p


def _claim(path: Path, index: int, length: int) -> tuple[int, str]:
    """Set chunk ``index``'s length field to ``length``; its offset and type."""
    data = bytearray(path.read_bytes())
    pos = 8
    for _ in range(index):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        pos += 12 + n
    kind = data[pos + 4:pos + 8].decode()
    data[pos:pos + 4] = struct.pack(">I", length)
    path.write_bytes(bytes(data))
    return pos, kind


def test_a_sound_png_and_other_formats_pass(tmp_path: Path) -> None:
    p = _png(tmp_path)
    assert png_chunk_problem(p) is None
    jpg = tmp_path / "a.jpg"
    Image.fromarray(np.zeros((4, 4, 3), np.uint8)).save(jpg)
    assert png_chunk_problem(jpg) is None
    assert png_chunk_problem(tmp_path / "missing.png") is None  # the opener says "not found"


def test_an_idat_claiming_4_gb_is_named_and_refused(tmp_path: Path) -> None:
    p = _png(tmp_path)
    size = p.stat().st_size
    pos, kind = _claim(p, 1, 0xF3000839)  # PIL writes IHDR, IDAT, IEND
    assert kind == "IDAT"
    assert png_chunk_problem(p) == (f"is a damaged PNG: chunk 1 ('IDAT') claims 4076865593 bytes, the file has "
                                    f"{size - pos - 12} left")
    assert image_size(p) is None
    with pytest.raises(AssetError, match=r"is a damaged PNG: chunk 1 .* claims 4076865593 bytes"):
        read_image_array(p)
    assert load_texture(p) is None  # drawn in its plain colour


def test_a_chunk_one_byte_too_long_is_caught_and_an_exact_fit_is_not(tmp_path: Path) -> None:
    p = _png(tmp_path)
    data = p.read_bytes()
    (n,) = struct.unpack(">I", data[8:12])  # IHDR, 13 bytes
    assert n == 13
    # a file that ends right after IHDR's CRC: IHDR fits exactly, nothing follows
    head = tmp_path / "head.png"
    head.write_bytes(data[:8 + 12 + 13])
    assert png_chunk_problem(head) is None
    crc = zlib.crc32(data[12:12 + 4 + 13]) & 0xFFFFFFFF
    assert struct.unpack(">I", data[8 + 8 + 13:8 + 12 + 13])[0] == crc
    _claim(head, 0, 14)
    assert png_chunk_problem(head) == "is a damaged PNG: chunk 0 ('IHDR') claims 14 bytes, the file has 13 left"
