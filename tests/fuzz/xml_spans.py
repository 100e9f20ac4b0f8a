"""A lenient scanner that finds the elements, attribute values, text contents and numbers of a world file as
character spans, so that the mutator can cut, copy and replace them in the original text (comments, layout and
upstream's quirks kept).

It is not a parser: it pairs start and end tags with a stack (an end tag that matches nothing is skipped; one that
matches an element further down closes the ones above it, which are then not elements), skips comments, CDATA,
processing instructions and declarations, and allows ``<`` inside quoted attribute values (upstream writes
``condition="$f{if(iY<=3, 1, 0)}"``).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

_TOKEN = re.compile(
    r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<![^>]*>"
    r"|<(?P<close>/?)(?P<tag>[A-Za-z_][\w:.\-]*)(?P<attrs>(?:[^<>\"']|\"[^\"]*\"|'[^']*')*?)(?P<empty>/?)>",
    re.S)
_ATTR = re.compile(r"([A-Za-z_][\w:.\-]*)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")
_NUMBER = re.compile(r"(?<![\w.$])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")


@dataclass(frozen=True)
class Element:
    """One element: ``start``..``end`` is the whole element, ``inner_start``..``inner_end`` its content (empty for
    ``<x/>``). ``parent`` is the index of the enclosing element in :attr:`Spans.elements`, -1 at the top."""

    tag: str
    start: int
    end: int
    inner_start: int
    inner_end: int
    parent: int
    depth: int

    @property
    def self_closing(self) -> bool:
        return self.inner_start == self.inner_end == self.end


@dataclass(frozen=True)
class Span:
    """A replaceable piece of text: ``start``..``end`` (characters), and what it is (``attr:NAME`` or ``text:TAG``)."""

    start: int
    end: int
    what: str


@dataclass
class Spans:
    """What :func:`scan` found in one text."""

    elements: list[Element]
    attr_values: list[Span]
    texts: list[Span]
    numbers: list[Span]
    ignored: list[tuple[int, int]]

    def children(self, index: int) -> list[int]:
        return [i for i, e in enumerate(self.elements) if e.parent == index]


def scan(text: str) -> Spans:
    """Find the elements, attribute values, leaf text contents and numbers of ``text``."""
    attr_values: list[Span] = []
    ignored: list[tuple[int, int]] = []
    tag_spans: list[tuple[int, int]] = []
    stack: list[tuple[str, int, int]] = []  # open elements: (tag, start, inner_start)
    open_count: dict[str, int] = {}  # tag -> how many of the stack's elements have it
    found: list[Element] = []
    for m in _TOKEN.finditer(text):
        tag = m.group("tag")
        if tag is None:
            ignored.append((m.start(), m.end()))
            continue
        tag_spans.append((m.start(), m.end()))
        if m.group("close"):
            if not open_count.get(tag):
                continue
            while stack:
                t, s, inner = stack.pop()
                open_count[t] -= 1
                if t == tag:
                    found.append(Element(t, s, m.end(), inner, m.start(), -1, 0))
                    break
            continue
        attrs_at = m.start("attrs")
        for a in _ATTR.finditer(m.group("attrs")):
            g = 2 if a.group(2) is not None else 3
            attr_values.append(Span(attrs_at + a.start(g), attrs_at + a.end(g), f"attr:{a.group(1)}"))
        if m.group("empty"):
            found.append(Element(tag, m.start(), m.end(), m.end(), m.end(), -1, 0))
        else:
            stack.append((tag, m.start(), m.end()))
            open_count[tag] = open_count.get(tag, 0) + 1
    found.sort(key=lambda e: (e.start, -e.end))
    # parents: the innermost earlier element that contains this one
    out: list[Element] = []
    open_stack: list[int] = []
    for e in found:
        while open_stack and out[open_stack[-1]].end <= e.start:
            open_stack.pop()
        parent = open_stack[-1] if open_stack else -1
        out.append(Element(e.tag, e.start, e.end, e.inner_start, e.inner_end, parent, len(open_stack)))
        if not e.self_closing:
            open_stack.append(len(out) - 1)
    has_child = {e.parent for e in out}
    texts = [Span(e.inner_start, e.inner_end, f"text:{e.tag}") for i, e in enumerate(out)
             if i not in has_child and not e.self_closing and text[e.inner_start:e.inner_end].strip()
             and "<" not in text[e.inner_start:e.inner_end]]
    values = [(v.start, v.end) for v in attr_values]
    numbers = []
    for m in _NUMBER.finditer(text):
        pos = m.start()
        if _inside(ignored, pos) or (_inside(tag_spans, pos) and not _inside(values, pos)):
            continue
        numbers.append(Span(m.start(), m.end(), "number"))
    return Spans(out, attr_values, texts, numbers, ignored)


def _inside(spans: list[tuple[int, int]], pos: int) -> bool:
    """Whether ``pos`` lies in one of ``spans`` (sorted, not overlapping)."""
    i = bisect.bisect_right(spans, (pos, float("inf"))) - 1
    return i >= 0 and spans[i][0] <= pos < spans[i][1]
