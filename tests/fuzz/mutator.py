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
"""

from __future__ import annotations

import os
import random
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


OPERATORS: tuple[tuple[Callable[[_Work], str], int], ...] = (
    (op_flip_bytes, 4), (op_truncate, 3), (op_insert_bytes, 3),
    (op_delete_element, 8), (op_duplicate_element, 6), (op_swap_elements, 5), (op_move_element, 4),
    (op_insert_fragment, 8),
    (op_replace_numbers, 22), (op_mutate_attr, 10), (op_mutate_text, 8), (op_drop_attr, 3),
    (op_deep_if, 2), (op_nested_for, 2), (op_variable_chain, 2), (op_huge_value, 2),
    (op_self_include, 1), (op_bad_include, 3),
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
