"""A PNG's chunk lengths checked against its file before any decoder reads them.

A PNG is an 8-byte signature and a run of chunks, each ``length (u32, big-endian), type (4 bytes), data, CRC
(4 bytes)``. A damaged length (one flipped bit of an ``IDAT`` chunk of a 2 KiB map can claim 4 GB) makes PIL ask
the file for that many bytes at once when it skips the rest of the chunk, which fails as ``MemoryError`` under a
memory limit although the image's declared size is small. :func:`png_chunk_problem` walks the chunk headers (a few
bytes each; the data is skipped, never read) and names the first chunk that claims more bytes than the file holds,
so that callers refuse the file with a clear message instead.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_CHUNKS = 1_000_000
"""Chunks walked at most (a real image has a few dozen; a file of empty chunks stops the walk here)."""


def png_chunk_problem(path: str | Path) -> str | None:
    """None when ``path`` is not a PNG (other formats are left to their decoders) or when every chunk fits in the
    file; otherwise the problem as a phrase: ``"is a damaged PNG: chunk 3 ('IDAT') claims 4076865593 bytes, the file
    has 2133 left"``. Unreadable files are None too (their opener reports them)."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            if f.read(8) != PNG_SIGNATURE:
                return None
            pos = 8
            for index in range(MAX_CHUNKS):
                header = f.read(8)
                if len(header) < 8:
                    return None  # the end (or a truncated tail, which the decoder reports itself)
                length, kind = struct.unpack(">I4s", header)
                left = size - pos - 8
                if length + 4 > left:
                    name = kind.decode("latin-1")
                    return (f"is a damaged PNG: chunk {index} ({name!r}) claims {length} bytes, the file has "
                            f"{max(left - 4, 0)} left")
                if kind == b"IEND":
                    return None
                pos += 12 + length
                f.seek(pos)
    except (OSError, ValueError):
        return None
    return None
