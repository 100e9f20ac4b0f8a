"""A chunked MCAP file writer that takes many messages in one call (what a simulation recorder needs).

MCAP (https://mcap.dev/spec): magic, a Header record, then the data section — Schema and Channel records, Chunks of
Message records each followed by its Message Index records — then Data End, a summary section (schemas, channels,
statistics, chunk indexes, summary offsets), the Footer and the magic again. Every record is opcode (uint8), length
(uint64) and content, little endian.

The ``mcap`` package writes the header, schema, channel, chunk, summary and footer records (its record classes);
message records and message indexes are built here with numpy, the records straight into the open chunk's buffer
(reused from chunk to chunk), so that a batch of n fixed-size messages (:meth:`McapWriter.add_batch`: every
vehicle's odometry at once) costs a few array operations instead of n Python calls — ``mcap.writer.Writer.
add_message`` takes ~4 µs a message, which is more than a simulation step of 25 robots can spare.

Crash safety: a chunk is closed, compressed, written and flushed to the operating system when it holds
``chunk_bytes`` or spans ``flush_after_ns`` of log time (1 s by default), or on :meth:`flush`; after a crash (even
SIGKILL) the file holds every closed chunk and a streaming reader (``mcap.stream_reader.StreamReader``,
``mcap.reader.make_reader(f).iter_messages()`` on a non-seekable stream) reads them up to the cut; :meth:`close`
writes the summary and footer so that indexed readers (``rosbags``, Foxglove) open it.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

import numpy as np
from mcap.data_stream import RecordBuilder
from mcap.opcode import Opcode
from mcap.records import (
    Channel,
    Chunk,
    ChunkIndex,
    DataEnd,
    Header,
    McapRecord,
    Schema,
    Statistics,
    SummaryOffset,
)

from mvsim_core.jit import njit

MAGIC = b"\x89MCAP0\r\n"
MESSAGE_HEADER = 31  # opcode 1 + length 8 + channel 2 + sequence 4 + log_time 8 + publish_time 8
COMPRESSIONS = ("zstd", "lz4", "")


def _compressor(name: str) -> Callable[[memoryview], bytes]:
    if name == "zstd":
        import zstandard

        zc = zstandard.ZstdCompressor(level=1)
        return zc.compress
    if name == "lz4":
        import lz4.frame  # type: ignore[import-untyped]

        return lz4.frame.compress
    if name == "":
        return bytes
    raise ValueError(f"MCAP chunk compression must be one of zstd, lz4 or '' (got {name!r})")


def _record(rec: McapRecord) -> bytes:
    b = RecordBuilder()
    rec.write(b)
    return b.end()


def _message_indexes(ch: np.ndarray, t: np.ndarray, off: np.ndarray) -> tuple[bytes, np.ndarray, np.ndarray]:
    """The Message Index records of a chunk, one per channel in order, their channels and where each starts in them
    (bytes), from every message's channel, log time (ns) and offset in the chunk (bytes), (n,) int64 each, sorted by
    channel then time.

    A record: opcode (1), length (8), channel (2), bytes of pairs (4), then (log time, offset) uint64 pairs."""
    n = len(ch)
    starts = np.r_[0, np.flatnonzero(np.diff(ch)) + 1]
    counts = np.diff(np.r_[starts, n])
    head = np.empty((len(starts), 15), np.uint8)
    head[:, 0] = Opcode.MESSAGE_INDEX
    head[:, 1:9].view("<u8")[:, 0] = 6 + 16 * counts
    head[:, 9:11].view("<u2")[:, 0] = ch[starts]
    head[:, 11:15].view("<u4")[:, 0] = 16 * counts
    at = 15 * np.arange(len(starts)) + 16 * starts  # record k: k heads and starts[k] pairs before it
    heads = head.tobytes()
    pairs = np.column_stack((t, off)).astype("<u8").tobytes()
    bounds = (16 * np.r_[starts, n]).tolist()
    out: list[bytes] = []
    for k in range(len(starts)):
        out += (heads[15 * k:15 * k + 15], pairs[bounds[k]:bounds[k + 1]])
    return b"".join(out), ch[starts], at


@njit(cache=True)
def _number_records(buf: np.ndarray, offsets: np.ndarray, channels: np.ndarray, seq: np.ndarray, counts: np.ndarray,
                    t: int) -> None:  # pragma: no cover (compiled)
    """Sequence numbers (the channel's next, uint32) and log = publish times ``t`` (ns, uint64) of the message
    records at ``offsets`` (bytes) in ``buf`` (uint8), little endian; each channel's next number and count go up."""
    for k in range(offsets.shape[0]):
        o, c = offsets[k], channels[k]
        s = seq[c] & 0xFFFFFFFF
        for j in range(4):
            buf[o + 11 + j] = (s >> (8 * j)) & 0xFF
        for j in range(8):
            byte = (t >> (8 * j)) & 0xFF
            buf[o + 15 + j] = byte
            buf[o + 23 + j] = byte
        seq[c] += 1
        counts[c] += 1


class MessageBlock:
    """Message records on fixed channels, of fixed payload sizes, laid out once and rewritten in place: the periodic
    messages of a recorder (every vehicle's odometry, ground truth, tf ...), written again and again by
    :meth:`McapWriter.add_block` with new payloads, sequence numbers and times.

    Args:
        parts: (channels (n,), payload templates (n, size) uint8) per part; a part's records follow the previous
            part's, in row order (sequence numbers in that order too).

    Attributes:
        payloads: per part, the (n, size) uint8 payloads: writable views into the records (fill them before each
            :meth:`McapWriter.add_block`).
        channels: (N,) int64 the channel of every record, in order.
        offsets: (N,) int64 byte offset of every record in the block.
        buf: the records, (nbytes,) uint8.
    """

    def __init__(self, parts: Sequence[tuple[np.ndarray, np.ndarray]]) -> None:
        sizes = [MESSAGE_HEADER + rows.shape[1] for _, rows in parts]
        self.buf = np.zeros(sum(len(ch) * rec for (ch, _), rec in zip(parts, sizes, strict=True)), np.uint8)
        self.payloads: list[np.ndarray] = []
        offsets = []
        pos = 0
        for (channels, rows), rec_size in zip(parts, sizes, strict=True):
            n = len(channels)
            rec = self.buf[pos:pos + n * rec_size].reshape(n, rec_size)
            rec[:, 0] = Opcode.MESSAGE
            rec[:, 1:9].view("<u8")[:, 0] = rec_size - 9
            rec[:, 9:11].view("<u2")[:, 0] = channels
            rec[:, MESSAGE_HEADER:] = rows
            self.payloads.append(rec[:, MESSAGE_HEADER:])
            offsets.append(pos + rec_size * np.arange(n, dtype=np.int64))
            pos += n * rec_size
        self.channels = np.concatenate([np.asarray(ch, np.int64) for ch, _ in parts] or [np.zeros(0, np.int64)])
        self.offsets = np.concatenate(offsets or [np.zeros(0, np.int64)])


class McapWriter:
    """Writes one MCAP file (see the module docstring). Times are integer nanoseconds (simulated time here)."""

    def __init__(self, path: str | Path, *, profile: str = "ros2", library: str = "mvsim_core",
                 compression: str = "zstd", chunk_bytes: int = 1 << 20, flush_after_ns: int = 1_000_000_000) -> None:
        self._compress = _compressor(compression)
        self.compression = compression
        self.path = Path(path)
        self._f: BinaryIO = open(self.path, "wb")  # noqa: SIM115 (closed by close())
        self._pos = 0
        self._crc = 0
        self.chunk_bytes, self.flush_after_ns = int(chunk_bytes), int(flush_after_ns)
        self.schemas: list[Schema] = []
        self.channels: list[Channel] = []
        self._buf = np.empty(self.chunk_bytes + (1 << 18), np.uint8)  # the open chunk's records (reused)
        self._seq = np.zeros(16, np.int64)
        self._counts = np.zeros(16, np.int64)
        self._chunk_indexes: list[ChunkIndex] = []
        self._new_chunk()
        self.message_start = self.message_end = -1
        self.closed = False
        self._write(MAGIC)
        self._write(_record(Header(profile=profile, library=library)))

    @property
    def message_count(self) -> int:
        """Messages written so far."""
        return int(self._counts.sum())

    # ------------------------------------------------------------------ low level
    def _write(self, data: bytes) -> None:
        self._f.write(data)
        self._crc = zlib.crc32(data, self._crc)
        self._pos += len(data)

    def _new_chunk(self) -> None:
        self._size = 0  # bytes of records in the open chunk: self._buf[:self._size]
        self._ix_ch: list[np.ndarray] = []
        self._ix_t: list[np.ndarray] = []
        self._ix_off: list[np.ndarray] = []
        self._one: list[int] = []  # (channel, time, offset) of the messages added one by one
        self._t0 = self._t1 = -1

    def _room(self, n: int) -> np.ndarray:
        """The next ``n`` bytes of the open chunk: a view to fill (the buffer grows for a big message)."""
        end = self._size + n
        if end > len(self._buf):
            buf = np.empty(max(end, 2 * len(self._buf)), np.uint8)
            buf[:self._size] = self._buf[:self._size]
            self._buf = buf
        return self._buf[self._size:end]

    def _grow(self, n: int) -> None:
        if n > len(self._seq):
            k = max(n, 2 * len(self._seq))
            self._seq = np.concatenate([self._seq, np.zeros(k - len(self._seq), np.int64)])
            self._counts = np.concatenate([self._counts, np.zeros(k - len(self._counts), np.int64)])

    # ------------------------------------------------------------------ schemas, channels
    def add_schema(self, name: str, encoding: str, data: bytes) -> int:
        """Register a schema (id 1, 2, ...) and write its record; returns its id."""
        s = Schema(id=len(self.schemas) + 1, name=name, encoding=encoding, data=data)
        self.schemas.append(s)
        self._write(_record(s))
        return s.id

    def add_channel(self, topic: str, schema_id: int, message_encoding: str = "cdr",
                    metadata: dict[str, str] | None = None) -> int:
        """Register a channel (id 0, 1, ...) and write its record; returns its id."""
        c = Channel(id=len(self.channels), topic=topic, message_encoding=message_encoding,
                    metadata=dict(metadata or {}), schema_id=schema_id)
        self.channels.append(c)
        self._grow(len(self.channels))
        self._write(_record(c))
        return c.id

    # ------------------------------------------------------------------ messages
    def add_message(self, channel: int, log_time: int, data: bytes | bytearray) -> None:
        """One message on ``channel`` at ``log_time`` ns (also its publish time)."""
        seq = int(self._seq[channel])
        self._seq[channel] = seq + 1
        self._counts[channel] += 1
        head = struct.pack("<BQHIQQ", 0x05, 22 + len(data), channel, seq & 0xFFFFFFFF, log_time, log_time)
        self._one.extend((channel, log_time, self._size))
        rec = self._room(MESSAGE_HEADER + len(data))
        rec[:MESSAGE_HEADER] = np.frombuffer(head, np.uint8)
        rec[MESSAGE_HEADER:] = np.frombuffer(data, np.uint8)
        self._size += len(rec)
        self._times(log_time, log_time)

    def add_batch(self, channels: np.ndarray, log_times: np.ndarray, payloads: np.ndarray) -> None:
        """n messages of one size: ``payloads`` (n, size) uint8, on ``channels`` (n, each once) at ``log_times`` (n
        ns)."""
        n, size = payloads.shape
        if n == 0:
            return
        ch = np.asarray(channels, np.int64)
        t = np.asarray(log_times, np.int64)
        rec = self._room(n * (MESSAGE_HEADER + size)).reshape(n, MESSAGE_HEADER + size)
        rec[:, MESSAGE_HEADER:] = payloads
        rec[:, 0] = 0x05
        rec[:, 1:9].view("<u8")[:, 0] = 22 + size
        rec[:, 9:11].view("<u2")[:, 0] = ch
        rec[:, 11:15].view("<u4")[:, 0] = self._seq[ch] & 0xFFFFFFFF
        rec[:, 15:23].view("<u8")[:, 0] = t
        rec[:, 23:31].view("<u8")[:, 0] = t
        self._seq[ch] += 1  # each channel once per batch
        self._counts[ch] += 1
        self._ix_ch.append(ch)
        self._ix_t.append(t)
        self._ix_off.append(self._size + np.arange(n, dtype=np.int64) * (MESSAGE_HEADER + size))
        self._size += rec.size
        self._times(int(t[0]), int(t[-1])) if n == 1 or (t == t[0]).all() else self._times(int(t.min()),
                                                                                             int(t.max()))

    def add_block(self, block: MessageBlock, log_time: int) -> None:
        """Every record of ``block`` (its payloads as they are now) at ``log_time`` ns: the same records as
        :meth:`add_batch` of each part, with one copy of the block instead of a batch per part."""
        n = len(block.channels)
        if n == 0:
            return
        ch = block.channels
        _number_records(block.buf, block.offsets, ch, self._seq, self._counts, log_time)
        self._ix_ch.append(ch)
        self._ix_t.append(np.full(n, log_time, np.int64))
        self._ix_off.append(self._size + block.offsets)
        self._room(block.buf.size)[:] = block.buf
        self._size += block.buf.size
        self._times(log_time, log_time)

    def _times(self, lo: int, hi: int) -> None:
        if self._t0 < 0:
            self._t0 = lo
        self._t0, self._t1 = min(self._t0, lo), max(self._t1, hi)
        if self.message_start < 0 or lo < self.message_start:
            self.message_start = lo
        self.message_end = max(self.message_end, hi)
        if self._size >= self.chunk_bytes or self._t1 - self._t0 >= self.flush_after_ns:
            self.flush()

    # ------------------------------------------------------------------ chunks
    def _close_chunk(self) -> None:
        if not self._size:
            return
        data = self._buf[:self._size].data  # a memoryview: compressed and checksummed in place
        packed = self._compress(data)
        start = self._pos
        chunk = _record(Chunk(compression=self.compression, data=packed, message_start_time=self._t0,
                              message_end_time=self._t1, uncompressed_crc=zlib.crc32(data),
                              uncompressed_size=self._size))
        self._write(chunk)
        one = np.array(self._one, np.int64).reshape(-1, 3)
        ch = np.concatenate([*self._ix_ch, one[:, 0]])
        t = np.concatenate([*self._ix_t, one[:, 1]])
        off = np.concatenate([*self._ix_off, one[:, 2]])
        order = np.lexsort((t, ch))
        ch, t, off = ch[order], t[order], off[order]
        index_start = self._pos
        index, channels, at = _message_indexes(ch, t, off)
        offsets = dict(zip(channels.tolist(), (index_start + at).tolist(), strict=True))
        self._write(index)
        self._chunk_indexes.append(ChunkIndex(
            message_start_time=self._t0, message_end_time=self._t1, chunk_start_offset=start,
            chunk_length=len(chunk), message_index_offsets=offsets, message_index_length=self._pos - index_start,
            compression=self.compression, compressed_size=len(packed), uncompressed_size=self._size))
        self._new_chunk()

    def flush(self) -> None:
        """Close the open chunk (if any), write it and hand it to the operating system."""
        self._close_chunk()
        self._f.flush()

    def close(self) -> None:
        """Write the last chunk, Data End, the summary (schemas, channels, statistics, chunk indexes, summary offsets)
        and the footer; close the file. Idempotent."""
        if self.closed:
            return
        self._close_chunk()
        self._write(_record(DataEnd(data_section_crc=self._crc)))
        summary_start = self._pos
        summary = bytearray()
        groups: list[SummaryOffset] = []

        def group(opcode: Opcode, records: list[bytes]) -> None:
            if records:
                groups.append(SummaryOffset(group_opcode=opcode, group_start=summary_start + len(summary),
                                            group_length=sum(len(r) for r in records)))
                summary.extend(b"".join(records))

        group(Opcode.SCHEMA, [_record(s) for s in self.schemas])
        group(Opcode.CHANNEL, [_record(c) for c in self.channels])
        start = max(self.message_start, 0)
        group(Opcode.STATISTICS, [_record(Statistics(
            message_count=int(self._counts.sum()), schema_count=len(self.schemas), channel_count=len(self.channels),
            attachment_count=0, metadata_count=0, chunk_count=len(self._chunk_indexes), message_start_time=start,
            message_end_time=max(self.message_end, start),
            channel_message_counts={c.id: int(self._counts[c.id]) for c in self.channels}))])
        group(Opcode.CHUNK_INDEX, [_record(ci) for ci in self._chunk_indexes])
        offsets_start = summary_start + len(summary)
        summary.extend(b"".join(_record(g) for g in groups))
        footer_head = struct.pack("<BQQQ", Opcode.FOOTER, 20, summary_start if summary else 0, offsets_start)
        crc = zlib.crc32(footer_head, zlib.crc32(bytes(summary)))
        self._write(bytes(summary) + footer_head + struct.pack("<I", crc) + MAGIC)
        self._f.close()
        self.closed = True
