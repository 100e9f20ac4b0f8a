"""The seeded mutator: mutant ``k`` of seed ``s`` is one source world of the corpus with one to three mutations
applied to it or to an XML file it includes, and is the same on every machine and run (``random.Random`` seeded
with ``"mvsim-fuzz:s:k"``; the corpus is listed in a fixed order).

Operators (each one appends a line saying what it did to :attr:`Mutant.ops`):

* bytes: flip bits or bytes, truncate, insert junk bytes (NUL, invalid UTF-8, ``<``, ``&``, ``]]>``, ...);
* elements: delete, duplicate, swap, move; insert an element taken from any corpus file (crossover);
* values: replace numbers (one, a few, or every number of an element) by huge / tiny / negative / zero / NaN / inf
  / ``1e999`` / empty / text / ``$f{2^2000}`` / other ``$f{}`` traps; replace attribute values and leaf texts by bad
  values, long strings, substitution traps or a value seen elsewhere in the corpus; drop attributes;
* expansion: ``<if condition="1">`` nested hundreds to thousands deep, nested ``<for>`` loops (2^40, 100000^2),
  ``<variable>`` doubling chains, huge texts and shapes;
* includes: self-includes; includes of ``/dev/zero``, ``/dev/urandom``, ``/etc/passwd``, folders, binary files
  (a corpus image, or a random blob written beside the world), long and traversal names.

Structural operators of the independent campaign (issue 37):

* an element duplicated up to 200 times in place, or its copies moved into another parent;
* values swapped between two attributes or two leaf texts (a name into a number, a pose into a file name);
* a child the loader requires deleted (a vehicle without ``<init_pose>``, a class without ``<chassis>``, a shape
  without its points, a map without its ``<file>``; see :data:`REQUIRED_CHILDREN`), or every child of an element;
* odd numerals (``0x10``, ``1_000``, ``+.5``, ``1e``, `` 3 ``, Arabic-Indic digits, ``1,5``, a Unicode minus,
  thousands of digits) and odd names (empty, 10 000 characters, Unicode, spaces, ``../``, ``/``, control characters);
* includes of devices, ``/proc`` files and directories; include cycles through two new files; DTDs with entities
  (billion laughs, external entities), which the parser must refuse;
* garbage images: an image the world names (or any image of its tree) replaced, in the mutant's own tree only, by
  random bytes, a truncated PNG, a PNG header that claims 100 000 x 100 000 pixels, or a real 8000 x 8000 PNG.
"""

from __future__ import annotations

import os
import random
import re
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from .corpus import Corpus, SourceWorld
from .xml_spans import Element, Spans, scan

BAD_NUMBERS = (
    "nan", "NaN", "-nan", "inf", "-inf", "Infinity", "-Infinity", "1e999", "-1e999", "1e308", "-1e308", "1e30",
    "-1e30", "1e10", "1e9", "-1e9", "999999999", "2147483648", "9223372036854775808", "1e-9", "1e-300", "5e-324",
    "0", "-0", "0.0", "-1", "-0.001", "1e-5", "", " ", "abc", "1,5", "0x10", "1e", "--1", "$f{2^2000}", "$f{1/0}",
    "$f{0/0}", "$f{-(2^2000)}", "$f{sqrt(-1)}", "$f{log(0)}", "$f{exp(1000)}", "$f{unifrnd(1,0)}",
    "$f{randn()*1e300}", "$f{1e308*10}", "1 2 3 4 5 6 7 8", "nan nan nan", "1e999 0 0",
)
EXPRESSIONS = (
    "$f{1/0}", "$f{0/0}", "$f{2^2000}", "$f{-(2^2000)}", "$f{unifrnd(1,0)}", "$f{unifrnd(0,1e300)}",
    "$f{unifrnd(-1e308,1e308)}", "$f{sqrt(-1)}", "$f{log(0)}", "$f{exp(710)}", "$f{randn()}", "$f{undefined_var}",
    "$f{1+}", "$f{", "$f{}", "$f{" + "(" * 300 + "1" + ")" * 300 + "}", "$f{" + "1+" * 6000 + "1}",
    "$f{randomize(1e300)}", "$f{randomize(-1)}", "$f{pow(0,-1)}", "$f{asin(2)}", "$f{acos(-2)*1e9}",
    "$f{1 % 0}", "$f{floor(1e300)}", "$f{round(0/0)}", "$f{max(1/0, 0)}", "$f{if(0/0, 1, 2)}",
)
BAD_STRINGS = (
    "", " ", "x", "-1", "0", "true", "false", "yes", "none", "..", "/", "/dev/zero", "/etc/passwd", "a" * 300,
    "b" * 5000, "$(echo hi)", "${undefined}", "${undefined|}", "$env{UNSET_FUZZ_VAR}", "$env{HOME}", "${",
    "$f{1/0}", "}", "<", "&amp;", "&lt;tag&gt;", "\u00e9\u4e2d\U0001F600", "\t\n", "NaN", "1e999", "#zzzzzz",
    "#12345", "0 0 0 0 0 0 0 0 0 0 0 0", "1 2", "class", "mvsim_world",
)
BAD_INCLUDES = (
    "/dev/zero", "/dev/urandom", "/dev/null", "/etc/passwd", "/", ".", "..", "nonexistent.xml", "a" * 300 + ".xml",
    "a/" * 2500 + "x.xml", "../" * 40 + "etc/hostname", "file:///etc/passwd", "$(echo x).xml", "${undefined}.xml",
    "", " ", "\u00e9.xml",
)
JUNK_BYTES = (b"\x00", b"\xff\xfe", b"\x80\x81", b"<", b">", b"&", b"&#0;", b"&#xD800;", b"&nope;", b"]]>", b"<!--",
              b"<![CDATA[", b"</", b"<a", b"\"", b"'", b"<!DOCTYPE x [<!ENTITY e \"e\">]>", b"<?xml version='1.0'?>")
ODD_NUMERALS = (
    "0x10", "0X1p3", "0b101", "0o17", "1_000", "1_0.5", "+.5", "-.5", ".5.", "1e", "1e+", "e5", "1.e5", " 3 ",
    "\t2\n", "\u0663", "\u0661\u066b\u0665", "\u06f1\u06f2", "\uff11\uff12", "1,5", "1.000,5", "\u22121",
    "\u2212" + "0.5", "\u00bd", "1\u00a0000", "\u200b1", "1\u200b", "\ufeff2", "\U0001d7d9", "++1", "-+1", "1-",
    "1..2", "0.1.2", "1e-", "1d3", "1f", "1L", "07", "00", "-0e0", "0e999", "1E309", "INF", "+inf", "nAn", "nan(1)",
    "9" * 400, "0." + "0" * 400 + "1", "1" + "0" * 4000, "-" + "9" * 4000, "1" * 20000 + ".5",
)
"""Numerals Python or C++ read differently, or not at all (issue 37's campaign)."""
ODD_NAMES = (
    "", " ", "  lead", "trail  ", "a b", "a\tb", "a" * 10_000, "\u00e9t\u00e9", "\u4e2d\u6587", "\U0001F600",
    "\u202eevil", "../", "../../x", "a/b", "/", "/abs", "./x", ".", "..", "~", "-", "a:b", "a.b", "1", "0x", "_",
    "&#1;", "&#27;[31m", "a&#0;b", "\x01", "a\x1fb", "\x7f", "$", "#", "%s%n", "{}", "name with \"quote",
    "CON", "nul", "a" * 255, "b" * 256,
)
"""Names: empty, long, Unicode, spaces, path pieces, control characters (raw and as references)."""
DEVICE_INCLUDES = (
    "/dev/zero", "/dev/null", "/dev/full", "/dev/urandom", "/proc/self/maps", "/proc/self/status",
    "/proc/self/environ", "/proc/self/mem", "/proc/self/fd", "/proc/self", "/proc", "/sys", "/", "/tmp", ".",
    "..", "./", "maps", "maps/", "/proc/self/cwd", "/proc/self/cwd/", "/dev", "/dev/shm",
)
"""Includes of devices, ``/proc`` and ``/sys`` files and directories (never ``/dev/stdin`` or ``/dev/tty``: they
could wait for input). ``/proc/self/cwd`` is the child's own work folder."""
DTDS = (
    '<!DOCTYPE lolz [<!ENTITY lol "lol">' + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10)) + "]>",
    '<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>',
    '<!DOCTYPE x [<!ENTITY xxe SYSTEM "/dev/zero">]>',
    '<!DOCTYPE x [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]>',
    '<!DOCTYPE x SYSTEM "/dev/urandom">',
    '<!DOCTYPE mvsim_world>',
    '<!doctype x [<!ENTITY e "' + "x" * 100_000 + '">]>',
    '<!DocType x [<!ENTITY e "e">]>',
)
"""DTDs: billion laughs, external entities (a file, a device, the network), a system DTD, a long entity."""
ENTITY_USES = ("&lol9;", "&xxe;", "&e;", "&lol;", "&p;")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".pgm", ".ppm", ".tif", ".tiff", ".gif")
_IMAGE_NAME = re.compile(r"[^\s<>\"']+\.(?:png|jpe?g|bmp|pgm|ppm|tiff?|gif)\b", re.I)
MODEL_SUFFIXES = (".dae", ".obj", ".stl", ".ply")
_MODEL_NAME = re.compile(r"[^\s<>\"']+\.(?:dae|obj|stl|ply)\b", re.I)
REQUIRED_CHILDREN = frozenset({
    "init_pose", "init_pose3d", "class", "dynamics", "chassis", "controller", "drivetrain", "rl_wheel", "rr_wheel",
    "fl_wheel", "fr_wheel", "l_wheel", "r_wheel", "shape", "pt", "shape_from_visual", "mass", "file", "resolution",
    "elevation_image", "elevation_data_matrix", "file_txt_2d", "file_txt_3d", "model_uri", "textures",
    "value_double", "value_bool", "latitude", "longitude", "georeference", "pose", "pose_3d", "fov_deg", "nrays",
    "ncols", "nrows", "vert_nrays", "horz_nrays", "sensor_period", "max_range", "ps", "x_min", "x_max", "y_min",
    "y_max", "z", "visual", "simul_timestep", "waypoint", "joint", "body", "target",
})
"""Child tags the loader needs (or that one of its elements needs): deleting one must give a WorldFileError at
its parent, or a documented default. Read from mvsim_core: ``has no <init_pose>``, ``needs a <file>``,
``needs one height source``, ``needs a <model_uri> ... or a <shape>``, the chassis and wheels of a vehicle class."""


@dataclass
class Mutant:
    """One mutant.

    Attributes:
        seed, index: which one (``--seed seed --only index`` makes it again).
        source: the source world it comes from.
        files: relative path (in the source's corpus root) -> bytes, for every file it changes or adds; the world
            file itself is always there.
        ops: what was done, one line per mutation.
    """

    seed: int
    index: int
    source: SourceWorld
    files: dict[str, bytes]
    ops: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"s{self.seed}-k{self.index}"

    @property
    def world_rel(self) -> str:
        return self.source.rel


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


class _Work:
    """The mutant being made: its generator, its files, the target file of the current mutation."""

    def __init__(self, corpus: Corpus, source: SourceWorld, rng: random.Random) -> None:
        self.corpus = corpus
        self.source = source
        self.rng = rng
        self.files: dict[str, bytes] = {source.rel: source.root.text[source.rel]}
        self.target = source.rel

    # the target file as text, and its spans
    @property
    def text(self) -> str:
        if self.target not in self.files:
            self.files[self.target] = self.source.root.text[self.target]
        return _decode(self.files[self.target])

    @text.setter
    def text(self, value: str) -> None:
        self.files[self.target] = _encode(value)

    def spans(self) -> Spans:
        return scan(self.text)

    def pick_element(self, s: Spans, *, not_root: bool = True) -> Element | None:
        pool = [e for e in s.elements if not (not_root and e.depth == 0)]
        return self.rng.choice(pool) if pool else None

    def insertion_point(self, s: Spans) -> int:
        """Just inside the start or end of a random element that has content (the root most often)."""
        containers = [e for e in s.elements if not e.self_closing]
        if not containers:
            return self.rng.randrange(len(self.text) + 1)
        e = containers[0] if self.rng.random() < 0.5 else self.rng.choice(containers)
        return e.inner_end if self.rng.random() < 0.7 else e.inner_start

    def here(self) -> str:
        return f"{self.target}"


# ---------------------------------------------------------------------- operators
def op_flip_bytes(w: _Work) -> str:
    data = bytearray(w.files.get(w.target, w.source.root.text[w.target]))
    if not data:
        return "flip: empty file"
    n = w.rng.choice((1, 1, 2, 4, 8))
    for _ in range(n):
        i = w.rng.randrange(len(data))
        data[i] = data[i] ^ (1 << w.rng.randrange(8)) if w.rng.random() < 0.6 else w.rng.randrange(256)
    w.files[w.target] = bytes(data)
    return f"flip {n} byte(s) of {w.here()}"


def op_truncate(w: _Work) -> str:
    data = w.files.get(w.target, w.source.root.text[w.target])
    cut = w.rng.randrange(len(data) + 1)
    w.files[w.target] = data[:cut]
    return f"truncate {w.here()} at byte {cut} of {len(data)}"


def op_insert_bytes(w: _Work) -> str:
    data = w.files.get(w.target, w.source.root.text[w.target])
    junk = w.rng.choice(JUNK_BYTES) if w.rng.random() < 0.8 else bytes(w.rng.randrange(256) for _ in range(16))
    i = w.rng.randrange(len(data) + 1)
    w.files[w.target] = data[:i] + junk + data[i:]
    return f"insert {junk[:40]!r} at byte {i} of {w.here()}"


def op_delete_element(w: _Work) -> str:
    s = w.spans()
    e = w.pick_element(s)
    if e is None:
        return op_truncate(w)
    t = w.text
    w.text = t[:e.start] + t[e.end:]
    return f"delete <{e.tag}> at char {e.start} of {w.here()}"


def op_duplicate_element(w: _Work) -> str:
    s = w.spans()
    e = w.pick_element(s)
    if e is None:
        return op_insert_bytes(w)
    t = w.text
    copies = w.rng.choice((1, 1, 1, 2, 3, 20))
    w.text = t[:e.end] + t[e.start:e.end] * copies + t[e.end:]
    return f"duplicate <{e.tag}> x{copies} in {w.here()}"


def op_swap_elements(w: _Work) -> str:
    s = w.spans()
    pool = [e for e in s.elements if e.depth > 0]
    for _ in range(10):
        if len(pool) < 2:
            break
        a, b = sorted(w.rng.sample(pool, 2), key=lambda e: e.start)
        if a.end <= b.start:
            t = w.text
            w.text = t[:a.start] + t[b.start:b.end] + t[a.end:b.start] + t[a.start:a.end] + t[b.end:]
            return f"swap <{a.tag}> and <{b.tag}> in {w.here()}"
    return op_delete_element(w)


def op_move_element(w: _Work) -> str:
    s = w.spans()
    e = w.pick_element(s)
    if e is None:
        return op_insert_bytes(w)
    t = w.text
    piece = t[e.start:e.end]
    rest = t[:e.start] + t[e.end:]
    w.text = rest
    at = w.insertion_point(w.spans())
    w.text = rest[:at] + piece + rest[at:]
    return f"move <{e.tag}> to char {at} of {w.here()}"


def op_insert_fragment(w: _Work) -> str:
    frag_file, frag = _fragment(w)
    s = w.spans()
    at = w.insertion_point(s)
    t = w.text
    w.text = t[:at] + frag + t[at:]
    return f"insert an element of {frag_file} ({frag[:30]!r}...) at char {at} of {w.here()}"


def _bad_number(w: _Work, old: str) -> str:
    r = w.rng.random()
    if r < 0.7:
        return w.rng.choice(BAD_NUMBERS)
    if r < 0.85:
        return w.rng.choice(EXPRESSIONS)
    try:
        v = float(old)
    except ValueError:
        return w.rng.choice(BAD_NUMBERS)
    return repr(w.rng.choice((-v, v * 10.0 ** w.rng.randint(3, 12), v * 10.0 ** -w.rng.randint(3, 12), v + 0.5)))


def op_replace_numbers(w: _Work) -> str:
    s = w.spans()
    if not s.numbers:
        return op_mutate_attr(w)
    t = w.text
    mode = w.rng.random()
    if mode < 0.6:
        chosen = [w.rng.choice(s.numbers)]
    elif mode < 0.85:
        chosen = w.rng.sample(s.numbers, min(len(s.numbers), w.rng.randint(2, 4)))
    else:  # every number inside one element
        e = w.pick_element(s) or s.elements[0] if s.elements else None
        chosen = [n for n in s.numbers if e is not None and e.start <= n.start < e.end] or [w.rng.choice(s.numbers)]
    done = []
    for n in sorted(chosen, key=lambda n: n.start, reverse=True):
        new = _bad_number(w, t[n.start:n.end])
        done.append(f"{t[n.start:n.end]}->{new[:30]}")
        t = t[:n.start] + new + t[n.end:]
    w.text = t
    return f"numbers {', '.join(reversed(done))} in {w.here()}"


def _bad_value(w: _Work, what: str) -> str:
    r = w.rng.random()
    if r < 0.35:
        return w.rng.choice(BAD_NUMBERS)
    if r < 0.6:
        return w.rng.choice(BAD_STRINGS)
    if r < 0.7:
        return w.rng.choice(EXPRESSIONS)
    vocab = _vocabulary(w.corpus)
    same = vocab.get(what)
    if same and w.rng.random() < 0.7:
        return w.rng.choice(same)
    return w.rng.choice(vocab["*"])


def op_mutate_attr(w: _Work) -> str:
    s = w.spans()
    if not s.attr_values:
        return op_replace_numbers(w) if s.numbers else op_insert_bytes(w)
    a = w.rng.choice(s.attr_values)
    t = w.text
    new = _bad_value(w, a.what).replace('"', "&quot;")
    w.text = t[:a.start] + new + t[a.end:]
    return f"{a.what}: {t[a.start:a.end][:30]!r} -> {new[:40]!r} in {w.here()}"


def op_mutate_text(w: _Work) -> str:
    s = w.spans()
    if not s.texts:
        return op_mutate_attr(w)
    x = w.rng.choice(s.texts)
    t = w.text
    new = _bad_value(w, x.what).replace("<", "&lt;")
    w.text = t[:x.start] + new + t[x.end:]
    return f"{x.what}: {t[x.start:x.end].strip()[:30]!r} -> {new[:40]!r} in {w.here()}"


def op_drop_attr(w: _Work) -> str:
    s = w.spans()
    if not s.attr_values:
        return op_delete_element(w)
    a = w.rng.choice(s.attr_values)
    t = w.text
    # the value span sits inside name="value": drop back to the name
    name = a.what.split(":", 1)[1]
    start = t.rfind(name, 0, a.start)
    if start < 0:
        return op_mutate_attr(w)
    w.text = t[:start] + t[a.end + 1:]
    return f"drop attribute {name} at char {start} of {w.here()}"


def _wrap(w: _Work, open_: str, close: str, what: str) -> str:
    """Wrap a random element (or nothing) of the target in ``open_`` ... ``close``."""
    s = w.spans()
    e = w.pick_element(s)
    t = w.text
    if e is None or w.rng.random() < 0.2:
        at = w.insertion_point(s)
        w.text = t[:at] + open_ + close + t[at:]
        return f"{what} (empty) at char {at} of {w.here()}"
    w.text = t[:e.start] + open_ + t[e.start:e.end] + close + t[e.end:]
    return f"{what} around <{e.tag}> in {w.here()}"


def op_deep_if(w: _Work) -> str:
    n = w.rng.choice((50, 200, 1000, 3000))
    cond = w.rng.choice(("1", "true", "$f{1}"))
    return _wrap(w, f'<if condition="{cond}">' * n, "</if>" * n, f"{n} nested <if>")


def op_nested_for(w: _Work) -> str:
    depth, width = w.rng.choice(((40, 2), (20, 2), (2, 100000), (3, 50), (10, 3), (1, 100000)))
    pre = f"fz{w.rng.randrange(1000)}_"
    open_ = "".join(f'<for var="{pre}{i}" from="1" to="{width}">' for i in range(depth))
    return _wrap(w, open_, "</for>" * depth, f"{depth} nested <for> of {width}")


def op_variable_chain(w: _Work) -> str:
    depth = w.rng.choice((16, 24, 32, 40, 64))
    chain = ['<variable name="fzv0" value="abcdefgh"/>']
    chain += [f'<variable name="fzv{i}" value="${{fzv{i - 1}}}${{fzv{i - 1}}}"/>' for i in range(1, depth + 1)]
    s = w.spans()
    at = w.insertion_point(s)
    t = w.text
    use = f'<block name="${{fzv{depth}}}"><mass>1</mass></block>' if w.rng.random() < 0.5 \
        else f"<gravity>${{fzv{depth}}}</gravity>"
    w.text = t[:at] + "".join(chain) + use + t[at:]
    return f"<variable> doubling chain {depth} deep at char {at} of {w.here()}"


def op_self_include(w: _Work) -> str:
    s = w.spans()
    at = w.insertion_point(s)
    t = w.text
    name = PurePosixPath(w.target).name
    w.text = t[:at] + f'<include file="{name}"/>' + t[at:]
    return f"self-include of {name} at char {at}"


def op_bad_include(w: _Work) -> str:
    here = PurePosixPath(w.target).parent
    r = w.rng.random()
    if r < 0.25:  # a binary file of the corpus (an image, a gzip)
        binaries = [f for f in w.source.root.files if not f.endswith((".xml", ".md"))]
        target = os.path.relpath(w.rng.choice(binaries), here.as_posix()) if binaries else "/dev/zero"
    elif r < 0.45:  # a random blob written beside the target
        blob = f"fuzz_blob{w.rng.randrange(100)}.xml"
        size = w.rng.choice((0, 1, 100, 10000, 3_000_000))
        w.files[(here / blob).as_posix()] = w.rng.randbytes(size) if w.rng.random() < 0.5 else \
            b"<mvsim_world>" * (size // 13 + 1)
        target = blob
    else:
        target = w.rng.choice(BAD_INCLUDES)
    s = w.spans()
    at = w.insertion_point(s)
    t = w.text
    w.text = t[:at] + f'<include file="{target}"/>' + t[at:]
    return f"include {target[:60]!r} at char {at} of {w.here()}"


def op_huge_value(w: _Work) -> str:
    s = w.spans()
    t = w.text
    r = w.rng.random()
    if r < 0.4 and s.texts:
        x = w.rng.choice(s.texts)
        new = w.rng.choice(("9" * 5000, "1." + "0" * 100000, " ".join(["1"] * 100000), "x" * 1_000_000))
        w.text = t[:x.start] + new + t[x.end:]
        return f"{x.what}: {len(new)}-character value in {w.here()}"
    at = w.insertion_point(s)
    n = w.rng.choice((1000, 20000))
    pts = "".join(f"<pt>{w.rng.uniform(-50, 50):.3f} {w.rng.uniform(-50, 50):.3f}</pt>" for _ in range(n))
    w.text = t[:at] + f'<block name="fz_poly"><mass>1</mass><shape>{pts}</shape></block>' + t[at:]
    return f"block with a {n}-point shape at char {at} of {w.here()}"


def op_duplicate_many(w: _Work) -> str:
    """An element duplicated 50 to 200 times, in place or (its copies) inside another element."""
    s = w.spans()
    e = w.pick_element(s)
    if e is None:
        return op_insert_bytes(w)
    t = w.text
    copies = w.rng.choice((50, 100, 199, 200))
    piece = t[e.start:e.end]
    if len(piece) * copies > 4 * HUGE_TEXT:  # a big element: fewer copies, the file stays scannable
        copies = max(2, 4 * HUGE_TEXT // max(1, len(piece)))
    containers = [c for c in s.elements if not c.self_closing and not (c.start <= e.start < c.end)]
    if containers and w.rng.random() < 0.4:
        c = w.rng.choice(containers)
        at = c.inner_end if w.rng.random() < 0.7 else c.inner_start
        w.text = t[:at] + piece * copies + t[at:]
        return f"duplicate <{e.tag}> x{copies} into <{c.tag}> at char {at} of {w.here()}"
    w.text = t[:e.end] + piece * copies + t[e.end:]
    return f"duplicate <{e.tag}> x{copies} in place in {w.here()}"


def op_move_to_parent(w: _Work) -> str:
    """An element moved into another element (a sensor into a block, a wheel into the world, a pose into a for)."""
    s = w.spans()
    e = w.pick_element(s)
    if e is None:
        return op_insert_bytes(w)
    t = w.text
    piece = t[e.start:e.end]
    others = [c for c in s.elements if not c.self_closing and not (e.start <= c.start < e.end)
              and c is not (s.elements[e.parent] if e.parent >= 0 else None)]
    if not others:
        return op_move_element(w)
    c = w.rng.choice(others)
    at = c.inner_end if w.rng.random() < 0.6 else c.inner_start
    if at <= e.start:
        w.text = t[:at] + piece + t[at:e.start] + t[e.end:]
    else:
        w.text = t[:e.start] + t[e.end:at] + piece + t[at:]
    return f"move <{e.tag}> into <{c.tag}> of {w.here()}"


def op_swap_values(w: _Work) -> str:
    """The values of two attributes (or two leaf texts, or one of each) swapped."""
    s = w.spans()
    pool = [(a, "attr") for a in s.attr_values] + [(x, "text") for x in s.texts]
    if len(pool) < 2:
        return op_mutate_attr(w)
    (a, ka), (b, kb) = sorted(w.rng.sample(pool, 2), key=lambda p: p[0].start)
    if a.end > b.start:
        return op_mutate_attr(w)
    t = w.text

    def fit(v: str, kind: str) -> str:  # a text moved into an attribute value must not close its quotes
        return v.replace('"', "&quot;").replace("\n", " ") if kind == "attr" else v.replace("<", "&lt;")

    va, vb = t[a.start:a.end], t[b.start:b.end]
    w.text = t[:a.start] + fit(vb, ka) + t[a.end:b.start] + fit(va, kb) + t[b.end:]
    return f"swap values of {a.what} ({va.strip()[:20]!r}) and {b.what} ({vb.strip()[:20]!r}) in {w.here()}"


def op_delete_required(w: _Work) -> str:
    """A child the loader requires deleted (every one of its tag under that parent, sometimes), or an element
    emptied of all its children."""
    s = w.spans()
    pool = [i for i, e in enumerate(s.elements) if e.depth > 0 and e.tag in REQUIRED_CHILDREN]
    t = w.text
    if not pool or w.rng.random() < 0.15:
        parents = [e for e in s.elements if not e.self_closing and e.inner_end > e.inner_start]
        if not parents:
            return op_delete_element(w)
        p = w.rng.choice(parents)
        w.text = t[:p.inner_start] + t[p.inner_end:]
        return f"empty <{p.tag}> at char {p.start} of {w.here()}"
    i = w.rng.choice(pool)
    e = s.elements[i]
    doomed = [e]
    if w.rng.random() < 0.3:  # every sibling of that tag: a shape without any <pt>, a class without wheels
        doomed = [x for x in s.elements if x.parent == e.parent and x.tag == e.tag]
    for x in sorted(doomed, key=lambda x: x.start, reverse=True):
        t = t[:x.start] + t[x.end:]
    w.text = t
    parent = s.elements[e.parent].tag if e.parent >= 0 else "(top)"
    return f"delete required <{e.tag}> x{len(doomed)} of <{parent}> in {w.here()}"


def op_odd_numeral(w: _Work) -> str:
    """One to three numbers replaced by numerals that C++ and Python read differently, or not at all."""
    s = w.spans()
    if not s.numbers:
        return op_odd_name(w)
    t = w.text
    chosen = w.rng.sample(s.numbers, min(len(s.numbers), w.rng.choice((1, 1, 2, 3))))
    done = []
    for n in sorted(chosen, key=lambda n: n.start, reverse=True):
        new = w.rng.choice(ODD_NUMERALS)
        if w.rng.random() < 0.2:  # glued to the old value: "1_000" from "1", "-" + "2"
            new = w.rng.choice(("-", "+", "\u2212", "0x", "")) + t[n.start:n.end] + w.rng.choice(("_0", "e", ",5", ""))
        done.append(f"{t[n.start:n.end]}->{new[:20]!r}")
        t = t[:n.start] + new + t[n.end:]
    w.text = t
    return f"odd numerals {', '.join(reversed(done))} in {w.here()}"


def op_odd_name(w: _Work) -> str:
    """A name (``name=``, ``class=``, ``<name>``, a ``var=`` or a topic) replaced by an odd one; sometimes two objects
    get the same odd name."""
    s = w.spans()
    keys = ("attr:name", "attr:class", "attr:var", "text:name", "text:publish_topic", "text:topic", "attr:value",
            "text:follow_vehicle")
    pool = [x for x in s.attr_values + s.texts if x.what in keys]
    if not pool:
        return op_mutate_attr(w)
    new = w.rng.choice(ODD_NAMES)
    chosen = [w.rng.choice(pool)]
    same = [x for x in pool if x.what == chosen[0].what and x is not chosen[0]]
    if same and w.rng.random() < 0.25:
        chosen.append(w.rng.choice(same))
    t = w.text
    for x in sorted(chosen, key=lambda x: x.start, reverse=True):
        v = new.replace('"', "&quot;") if x.what.startswith("attr:") else new.replace("<", "&lt;")
        t = t[:x.start] + v + t[x.end:]
    w.text = t
    return f"{chosen[0].what} -> odd name {new[:30]!r} (x{len(chosen)}) in {w.here()}"


def op_device_include(w: _Work) -> str:
    """An include of a device, a ``/proc`` or ``/sys`` file, or a directory."""
    target = w.rng.choice(DEVICE_INCLUDES)
    s = w.spans()
    at = w.insertion_point(s)
    t = w.text
    w.text = t[:at] + f'<include file="{target}"/>' + t[at:]
    return f"include device/directory {target!r} at char {at} of {w.here()}"


def op_include_cycle(w: _Work) -> str:
    """An include cycle: the target includes a new file that includes a second one that includes the first (or the
    target itself, or the world file)."""
    here = PurePosixPath(w.target).parent
    tag = w.rng.randrange(1000)
    a, b = f"fz_cycle{tag}_a.xml", f"fz_cycle{tag}_b.xml"
    back = w.rng.choice((a, PurePosixPath(w.target).name, os.path.relpath(w.source.rel, here.as_posix())))
    body = w.rng.choice(("", '<variable name="fz_c" value="1"/>', "<gravity>9.8</gravity>"))
    w.files[(here / a).as_posix()] = _encode(f'<mvsim_world>{body}<include file="{b}"/></mvsim_world>')
    w.files[(here / b).as_posix()] = _encode(f'<mvsim_world><include file="{back}"/>{body}</mvsim_world>')
    s = w.spans()
    at = w.insertion_point(s)
    t = w.text
    w.text = t[:at] + f'<include file="{a}"/>' + t[at:]
    return f"include cycle {a} -> {b} -> {back} at char {at} of {w.here()}"


def op_dtd(w: _Work) -> str:
    """A DTD with entities (billion laughs, external entities) before the root, and an entity used in a value."""
    dtd = w.rng.choice(DTDS)
    t = w.text
    decl_end = t.find("?>") + 2 if t.lstrip().startswith("<?xml") else 0
    s = scan(t[decl_end:])
    use = w.rng.choice(ENTITY_USES)
    if s.texts and w.rng.random() < 0.7:
        x = w.rng.choice(s.texts)
        t = t[:decl_end + x.start] + use + t[decl_end + x.end:]
    w.text = t[:decl_end] + dtd + t[decl_end:]
    return f"DTD {dtd[:40]!r} (uses {use}) in {w.here()}"


def _png(width: int, height: int, idat: bytes, *, color_type: int = 0) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def _png_of_zeros(width: int, height: int) -> bytes:
    """A real grayscale PNG of ``width`` x ``height`` black pixels (compressed to a few hundred KB)."""
    z = zlib.compressobj(9)
    row = bytes(width + 1)
    return _png(width, height, b"".join(z.compress(row) for _ in range(height)) + z.flush())


_BIG_PNG: dict[tuple[int, int], bytes] = {}


def _garbage_image(w: _Work, original: bytes) -> tuple[bytes, str]:
    r = w.rng.random()
    if r < 0.25:
        size = w.rng.choice((0, 1, 8, 100, 5000))
        return w.rng.randbytes(size), f"{size} random bytes"
    if r < 0.5:
        cut = w.rng.randrange(max(1, len(original)))
        return original[:cut], f"truncated at byte {cut} of {len(original)}"
    if r < 0.65:
        data = bytearray(original)
        for _ in range(w.rng.choice((1, 8, 64))):
            if data:
                data[w.rng.randrange(len(data))] = w.rng.randrange(256)
        return bytes(data), "bytes flipped"
    if r < 0.8:
        wh = w.rng.choice(((100_000, 100_000), (1, 10_000_000), (0, 0), (2**31 - 1, 1), (65_535, 65_535)))
        return _png(wh[0], wh[1], zlib.compress(bytes(64))), f"a PNG header claiming {wh[0]} x {wh[1]}"
    if r < 0.9:
        return b"\x89PNG\r\n\x1a\n" + w.rng.randbytes(w.rng.choice((0, 16, 2000))), "a PNG signature then junk"
    wh = w.rng.choice(((8000, 8000), (4000, 4000), (20000, 1)))
    if wh not in _BIG_PNG:
        _BIG_PNG[wh] = _png_of_zeros(*wh)
    return _BIG_PNG[wh], f"a real {wh[0]} x {wh[1]} PNG"


def _named_assets(w: _Work, pattern: re.Pattern[str], suffixes: tuple[str, ...]) -> tuple[list[str], bool]:
    """Files of the source's corpus root that the world or its includes name (matching ``pattern``), else every
    file of the root with one of ``suffixes``; and whether they were named."""
    root = w.source.root
    named: list[str] = []
    for rel in (w.source.rel, *w.source.includes):
        here = PurePosixPath(rel).parent
        for m in pattern.finditer(_decode(w.files.get(rel, root.text.get(rel, b"")))):
            name = m.group(0).replace("${MVSIM_CURRENT_FILE_DIRECTORY}/", "")
            norm = os.path.normpath((here / name).as_posix())
            if norm in root.files and norm not in named:
                named.append(norm)
    return (named, True) if named else ([f for f in root.files if f.lower().endswith(suffixes)], False)


def op_garbage_image(w: _Work) -> str:
    """An image the world or its includes name (else any image of the corpus root) replaced by garbage, written in
    the mutant's own tree (a changed file of the mutant; the original is never touched)."""
    pool, named = _named_assets(w, _IMAGE_NAME, IMAGE_SUFFIXES)
    if not pool:
        return op_bad_include(w)
    rel = w.rng.choice(pool)
    data, what = _garbage_image(w, (w.source.root.path / rel).read_bytes())
    w.files[rel] = data
    return f"image {rel} ({'named' if named else 'unnamed'}) replaced by {what}"


def op_garbage_model(w: _Work) -> str:
    """A 3D model the world names (else any of its tree) replaced, in the mutant's tree, by random bytes, a
    truncated copy, or a COLLADA file with a DTD (billion laughs, an external entity)."""
    pool, named = _named_assets(w, _MODEL_NAME, MODEL_SUFFIXES)
    if not pool:
        return op_garbage_image(w)
    rel = w.rng.choice(pool)
    original = (w.source.root.path / rel).read_bytes()
    r = w.rng.random()
    if r < 0.25:
        data, what = w.rng.randbytes(w.rng.choice((0, 10, 4000))), "random bytes"
    elif r < 0.5:
        cut = w.rng.randrange(max(1, len(original)))
        data, what = original[:cut], f"truncated at byte {cut} of {len(original)}"
    else:
        dtd = w.rng.choice(DTDS)
        use = w.rng.choice(ENTITY_USES)
        data = _encode(f'<?xml version="1.0"?>{dtd}<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" '
                       f'version="1.4.1"><asset><unit meter="1"/><up_axis>{use}</up_axis></asset></COLLADA>')
        what = f"a COLLADA file with {dtd[:30]!r}"
    w.files[rel] = data
    return f"model {rel} ({'named' if named else 'unnamed'}) replaced by {what}"


OPERATORS: tuple[tuple[Callable[[_Work], str], int], ...] = (
    (op_flip_bytes, 4), (op_truncate, 3), (op_insert_bytes, 3),
    (op_delete_element, 8), (op_duplicate_element, 6), (op_swap_elements, 5), (op_move_element, 4),
    (op_insert_fragment, 8),
    (op_replace_numbers, 22), (op_mutate_attr, 10), (op_mutate_text, 8), (op_drop_attr, 3),
    (op_deep_if, 2), (op_nested_for, 2), (op_variable_chain, 2), (op_huge_value, 2),
    (op_self_include, 1), (op_bad_include, 3),
    # issue 37: the independent campaign's structural operators
    (op_duplicate_many, 3), (op_move_to_parent, 3), (op_swap_values, 4), (op_delete_required, 6),
    (op_odd_numeral, 6), (op_odd_name, 4), (op_device_include, 2), (op_include_cycle, 1), (op_dtd, 1),
    (op_garbage_image, 3), (op_garbage_model, 1),
)
_OPS = [op for op, _ in OPERATORS]
HUGE_TEXT = 100_000
"""Bytes above which a file is only mutated byte-wise (the span scanner costs about 50 µs per tag)."""
_WEIGHTS = [wt for _, wt in OPERATORS]


# ---------------------------------------------------------------------- corpus-derived material
_FRAGMENTS: dict[int, list[tuple[str, str]]] = {}
_VOCAB: dict[int, dict[str, list[str]]] = {}


def _fragment(w: _Work) -> tuple[str, str]:
    """A random element (its text) from any XML file of the corpus, with the file's id."""
    frags = _FRAGMENTS.get(id(w.corpus))
    if frags is None:
        frags = []
        for root in w.corpus.roots:
            for rel, data in root.text.items():
                t = _decode(data)
                frags += [(f"{root.name}/{rel}", t[e.start:e.end]) for e in scan(t).elements
                          if e.depth > 0 and e.end - e.start < 20000]
        _FRAGMENTS[id(w.corpus)] = frags
    return w.rng.choice(frags)


def _vocabulary(corpus: Corpus) -> dict[str, list[str]]:
    """Values seen in the corpus: ``attr:NAME`` / ``text:TAG`` -> values; ``*`` -> all of them."""
    vocab = _VOCAB.get(id(corpus))
    if vocab is None:
        vocab = {"*": []}
        for root in corpus.roots:
            for data in root.text.values():
                t = _decode(data)
                s = scan(t)
                for span in s.attr_values + s.texts:
                    v = t[span.start:span.end].strip()
                    if v and len(v) < 200:
                        vocab.setdefault(span.what, []).append(v)
                        vocab["*"].append(v)
        for k in vocab:
            vocab[k] = sorted(set(vocab[k]))
        _VOCAB[id(corpus)] = vocab
    return vocab


# ---------------------------------------------------------------------- the mutant
def make_mutant(corpus: Corpus, seed: int, index: int) -> Mutant:
    """Mutant ``index`` of ``seed``: a source world picked from the corpus, one to three mutations."""
    rng = random.Random(f"mvsim-fuzz:{seed}:{index}")
    source = rng.choice(corpus.worlds)
    w = _Work(corpus, source, rng)
    ops = []
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        w.target = source.rel
        if source.includes and rng.random() < 0.25:
            w.target = rng.choice(source.includes)
        op = rng.choices(_OPS, _WEIGHTS)[0]
        if len(w.files.get(w.target, b"")) > HUGE_TEXT:  # already huge: bytes only (scanning it again is slow)
            op = rng.choice((op_flip_bytes, op_truncate, op_insert_bytes))
        ops.append(f"{op.__name__[3:]}: {op(w)}")
    return Mutant(seed, index, source, dict(w.files), ops)
