"""A lenient, non-validating XML reader with line numbers.

MVSim's C++ reader (rapidxml in non-validating mode) accepts things a strict XML parser rejects, and real world files
depend on them. This reader accepts the same, and still knows the line of every element:

* tag names with colons (``<vehicle:class>``) are plain names — there are no namespaces;
* a closing tag closes the innermost open element whatever name it carries (``<a>0</b>``); a warning says so;
* a raw ``<`` or ``>`` inside a quoted attribute value is just a character;
* a file may hold several root elements (included files often do).

It rejects what cannot be read sensibly — binary data, an unclosed tag, an unterminated comment or attribute, a
stray closing tag — with a :class:`~mvsim_core.errors.WorldFileError` carrying the file and line.

Entities ``&lt; &gt; &amp; &quot; &apos; &#N; &#xN;`` are decoded in text and attribute values; a character
reference to a character XML does not allow (``&#0;``, a lone surrogate such as ``&#xD800;``, past U+10FFFF) is
kept as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from mvsim_core.errors import WorldFileError
from mvsim_core.io.file_check import FileProblem, read_bytes_limited
from mvsim_core.xml.limits import ENV_NAMES, LoadLimits
from mvsim_core.xml.node import XmlNode

__all__ = ["parse_text", "parse_file", "read_text_file"]

_NAME = re.compile(r"[^\s/>=<\"']+")
_ATTR = re.compile(r"\s*([^\s/>=<\"']+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')", re.S)
_WS = re.compile(r"\s*")
_ENTITY = re.compile(r"&(#x[0-9a-fA-F]+|#[0-9]+|lt|gt|amp|quot|apos);")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
DEFAULT_MAX_DEPTH = LoadLimits().nesting_depth
DEFAULT_MAX_TEXT_BYTES = LoadLimits().included_bytes

Warn = Callable[[str, int, str], None]


def _decode_entities(s: str) -> str:
    if "&" not in s:
        return s

    def repl(m: re.Match[str]) -> str:
        ent = m.group(1)
        if ent[0] == "#":
            try:
                code = int(ent[2:], 16) if ent[1] in "xX" else int(ent[1:])
            except ValueError:  # more digits than Python converts
                return m.group(0)
            # only characters XML allows: no NUL, no lone surrogate (unprintable, unencodable), nothing past Unicode
            if code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD \
                    or 0x10000 <= code <= 0x10FFFF:
                return chr(code)
            return m.group(0)
        return _NAMED[ent]

    return _ENTITY.sub(repl, s)


def read_text_file(path: str | Path, *, shown_as: str | None = None,
                   max_bytes: int = DEFAULT_MAX_TEXT_BYTES) -> str:
    """Read a world file as text, refusing binary data with a clear error.

    Args:
        path: file to read.
        shown_as: the name to use in error messages (defaults to ``path``).
        max_bytes: the longest file read (bytes; ``MVSIM_MAX_INCLUDED_BYTES``, the limit of included text): a
            longer one, a directory or a special file (``/dev/zero``, a fifo) is refused, not read forever.
    """
    name = shown_as or str(path)
    try:
        data = read_bytes_limited(Path(path), max_bytes)
    except FileProblem as e:
        if e.problem == "not found":
            raise WorldFileError(name, 0, "file not found; check the path") from None
        if e.problem == "is a directory":
            raise WorldFileError(name, 0, "is a directory, not a world file") from None
        hint = (f"; set the environment variable {ENV_NAMES['included_bytes']} to raise it"
                if e.problem.startswith("is too large") else "; a world file is a regular XML text file")
        raise WorldFileError(name, 0, f"{e.problem}{hint}") from None
    return decode_bytes(data, name)


def decode_bytes(data: bytes, name: str) -> str:
    """Decode file bytes as UTF-8 (BOM allowed), falling back to Latin-1; refuse binary data."""
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise WorldFileError(name, line, f"binary data (NUL byte at offset {nul}); expected an XML text file")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        # control bytes other than tab/CR/LF are a strong sign of a binary file
        bad = sum(1 for b in data[:4096] if b < 9 or 13 < b < 32)
        if bad:
            line = data.count(b"\n", 0, e.start) + 1
            raise WorldFileError(name, line, "binary data; expected an XML text file") from None
        return data.decode("latin-1")


def parse_file(path: str | Path, *, warn: Warn | None = None, max_depth: int = DEFAULT_MAX_DEPTH) -> list[XmlNode]:
    """Parse a file; returns its root elements (see :func:`parse_text`)."""
    text = read_text_file(path)
    return parse_text(text, str(path), warn=warn, max_depth=max_depth)


def parse_text(text: str, file: str = "<string>", *, warn: Warn | None = None,
               max_depth: int = DEFAULT_MAX_DEPTH) -> list[XmlNode]:
    """Parse XML text leniently and return the list of root elements.

    The reader is iterative: however deep the document, no recursion limit is hit; an element nested more than
    ``max_depth`` levels deep is refused (``MVSIM_MAX_NESTING_DEPTH``, :mod:`mvsim_core.xml.limits`).

    Args:
        text: the document.
        file: name used in error messages and stored in every node.
        warn: optional callback ``warn(file, line, message)`` for tolerated oddities.
        max_depth: most levels of elements nested inside each other (a root element is level 1).

    Raises:
        WorldFileError: with the file and line of the problem.
    """
    roots: list[XmlNode] = []
    stack: list[XmlNode] = []
    texts: list[list[str]] = []  # the text pieces of each open element, joined when it closes (linear time)
    suspect: tuple[XmlNode, str, int] | None = None
    pos = 0
    line = 1  # line number at `pos`
    n = len(text)
    find = text.find

    def advance(to: int) -> None:
        nonlocal pos, line
        line += text.count("\n", pos, to)
        pos = to

    while pos < n:
        lt = find("<", pos)
        if lt < 0:
            lt = n
        if lt > pos:
            chunk = text[pos:lt]
            if stack:
                texts[-1].append(_decode_entities(chunk))
            elif chunk.strip():
                raise WorldFileError(file, line + chunk[: len(chunk) - len(chunk.lstrip())].count("\n"),
                                     "text outside of any element; this is not an XML world file")
            advance(lt)
            if pos >= n:
                break
        # at '<'
        start_line = line
        if text.startswith("<!--", pos):
            end = find("-->", pos + 4)
            if end < 0:
                raise WorldFileError(file, start_line, "comment '<!--' is never closed; add '-->'")
            advance(end + 3)
        elif text.startswith("<![CDATA[", pos):
            end = find("]]>", pos + 9)
            if end < 0:
                raise WorldFileError(file, start_line, "CDATA section is never closed; add ']]>'")
            if stack:
                texts[-1].append(text[pos + 9:end])
            advance(end + 3)
        elif text.startswith("<?", pos):
            end = find("?>", pos + 2)
            if end < 0:
                raise WorldFileError(file, start_line, "processing instruction '<?' is never closed; add '?>'")
            advance(end + 2)
        elif text.startswith("<!DOCTYPE", pos) or text.startswith("<!doctype", pos):
            raise WorldFileError(file, start_line, "DTDs (<!DOCTYPE ...>) are not supported in world files: "
                                                   "remove the declaration (entities and includes go through "
                                                   "<include file=...> and <variable>)")
        elif text.startswith("<!", pos):
            end = find(">", pos + 2)
            if end < 0:
                raise WorldFileError(file, start_line, "declaration '<!' is never closed; add '>'")
            advance(end + 1)
        elif text.startswith("</", pos):
            m = _NAME.match(text, pos + 2)
            name = m.group(0) if m else ""
            end = find(">", pos + 2)
            if end < 0:
                raise WorldFileError(file, start_line, f"closing tag '</{name}' has no '>'")
            if not stack:
                raise WorldFileError(file, start_line,
                                     f"closing tag </{name}> without a matching opening tag; remove it")
            node = stack.pop()
            node.text += "".join(texts.pop())
            if name != node.tag and suspect is None and any(o.tag == name for o in stack):
                # probably a missing closing tag: remember it in case the document ends unbalanced
                suspect = (node, name, start_line)
            if name != node.tag and warn is not None:
                warn(file, start_line, f"closing tag </{name}> closes <{node.tag}> (line {node.line}); "
                                       f"accepted like upstream MVSim, but please fix the tag name")
            advance(end + 1)
        else:
            m = _NAME.match(text, pos + 1)
            if not m:
                raise WorldFileError(file, start_line, "'<' not followed by a tag name; this is not valid XML "
                                                      "(write &lt; for a literal '<' in text)")
            node = XmlNode(tag=m.group(0), file=file, line=start_line)
            p = m.end()
            # lines are counted incrementally, from one attribute to the next (not from the tag's start for each:
            # that made a tag of many attributes quadratic)
            aline, counted = line, pos
            while True:
                a = _ATTR.match(text, p)
                if a is None:
                    break
                aname = a.group(1)
                aline += text.count("\n", counted, a.start(1))
                counted = a.start(1)
                node.attr_lines[aname] = aline
                raw = a.group(2) if a.group(2) is not None else a.group(3)
                node.attrs[aname] = _decode_entities(raw)
                p = a.end()
            ws = _WS.match(text, p)
            assert ws is not None  # \s* matches, if only the empty string
            p = ws.end()
            if text.startswith("/>", p):
                self_closing = True
                tag_end = p + 2
            elif text.startswith(">", p):
                self_closing = False
                tag_end = p + 1
            else:
                bad_line = line + text.count("\n", pos, p)
                if p >= n:
                    raise WorldFileError(file, start_line, f"start tag <{node.tag}> is never finished; add '>'")
                rest = text[p:p + 20].split("\n")[0]
                if rest[:1] in "\"'" or re.match(r"[^\s/>=]+\s*=\s*[\"']", rest):
                    msg = f"attribute value in <{node.tag}> is never closed; add the closing quote"
                else:
                    msg = (f"malformed attribute in <{node.tag}> near '{rest}'; "
                           f"write attributes as name=\"value\"")
                raise WorldFileError(file, bad_line, msg)
            if len(stack) >= max_depth:
                raise WorldFileError(file, start_line, f"<{node.tag}> is nested {len(stack) + 1} elements deep: more "
                                                       f"than the limit of {max_depth} levels; set the environment "
                                                       f"variable {ENV_NAMES['nesting_depth']} to raise it")
            if stack:
                stack[-1].children.append(node)
            else:
                roots.append(node)
            if not self_closing:
                stack.append(node)
                texts.append([])
            advance(tag_end)

    if stack:
        if suspect is not None:
            node, name, at = suspect
            raise WorldFileError(file, node.line, f"tag <{node.tag}> is never closed; add </{node.tag}> "
                                                  f"(the </{name}> at line {at} closed it instead)")
        node = stack[-1]
        raise WorldFileError(file, node.line, f"tag <{node.tag}> is never closed; add </{node.tag}>")
    return roots
