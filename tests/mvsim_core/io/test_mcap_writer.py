"""The MCAP writer (mvsim_core.io.mcap_writer): messages one by one, in batches and in blocks, a message bigger than
the chunk buffer, chunk boundaries, read back by ``mcap``'s own reader; and the REP 117 pass of the recorder's scans."""

from __future__ import annotations

import numpy as np
from mcap.reader import make_reader

from mvsim_core.io.mcap_writer import McapWriter, MessageBlock
from mvsim_core.record.mcap_recorder import _rep117, _rep117_in_place


def read_all(path) -> tuple[list[tuple[str, int, int, bytes]], object]:
    with open(path, "rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        msgs = [(ch.topic, m.log_time, m.sequence, bytes(m.data)) for _, ch, m in reader.iter_messages()]
    return msgs, summary


def test_singles_batches_blocks_and_a_big_message(tmp_path):
    """Every message comes back with its topic, time, sequence number and bytes, in time order, across 1 KiB
    chunks; a 3 MiB message (bigger than the chunk buffer) fits in its own chunk."""
    path = tmp_path / "w.mcap"
    w = McapWriter(path, chunk_bytes=1024)
    sid = w.add_schema("std_msgs/msg/String", "ros2msg", b"string data")
    a, b = w.add_channel("/a", sid), w.add_channel("/b", sid)
    rng = np.random.default_rng(3)
    want = []
    block = MessageBlock([(np.array([a, b]), np.zeros((2, 40), np.uint8))])
    big = rng.integers(0, 256, 3 << 20, dtype=np.uint8).tobytes()
    seq = {a: 0, b: 0}
    for k in range(30):
        t = 1_000 * k
        payload = rng.integers(0, 256, (2, 40), dtype=np.uint8)
        block.payloads[0][:] = payload
        w.add_block(block, t)
        for ch, row in zip((a, b), payload, strict=True):
            want.append(("/a" if ch == a else "/b", t, seq[ch], row.tobytes()))
            seq[ch] += 1
        rows = rng.integers(0, 256, (2, 7), dtype=np.uint8)
        w.add_batch(np.array([b, a]), np.array([t + 1, t + 1]), rows)
        for ch, row in zip((b, a), rows, strict=True):
            want.append(("/a" if ch == a else "/b", t + 1, seq[ch], row.tobytes()))
            seq[ch] += 1
        data = big if k == 17 else bytes([k]) * (k + 1)
        w.add_message(a, t + 2, data)
        want.append(("/a", t + 2, seq[a], data))
        seq[a] += 1
    w.close()
    got, summary = read_all(path)
    assert sorted(got, key=lambda m: (m[1], m[0], m[2])) == sorted(want, key=lambda m: (m[1], m[0], m[2]))
    assert [m[1] for m in got] == sorted(m[1] for m in got)
    assert summary.statistics.message_count == len(want) == 150
    assert summary.statistics.channel_message_counts == {a: 90, b: 60}
    assert len(summary.chunk_indexes) >= 8  # 1 KiB chunks: one per ~4 rounds of ~250 bytes
    assert max(ci.uncompressed_size for ci in summary.chunk_indexes) > 3 << 20  # the big message's chunk


def test_rep117_in_place_equals_the_array_form():
    """Invalid readings: -inf below the scan's min_range, +inf otherwise; valid ones untouched (3 scans of 50)."""
    rng = np.random.default_rng(0)
    ranges = rng.uniform(0.0, 5.0, (3, 50)).astype(np.float32)
    valid = rng.random((3, 50)) > 0.4

    class Scan:
        def __init__(self, rmin: float) -> None:
            self.min_range = rmin

    scans = [Scan(0.5), Scan(1.0), Scan(0.0)]
    want = _rep117(ranges, valid, scans)
    flat = ranges.reshape(-1).copy()
    _rep117_in_place(flat, valid.reshape(-1), np.repeat(np.array([0.5, 1.0, 0.0], np.float32), 50))
    np.testing.assert_array_equal(flat.reshape(3, 50), want)
    assert np.isneginf(want).any() and np.isposinf(want).any()
    assert (want[valid] == ranges[valid]).all()
