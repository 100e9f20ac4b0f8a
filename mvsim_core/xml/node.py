"""The element tree produced by the lenient XML parser.

Every node remembers the file and the 1-based line where its start tag begins, so that any problem found later
(a bad number, an unknown class) can be reported as ``file:line: message``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass(eq=False)
class XmlNode:
    """One XML element.

    Attributes:
        tag: tag name exactly as written (``vehicle:class`` keeps its colon; there are no namespaces).
        attrs: attribute name -> raw value (entities decoded, substitutions not yet applied), in file order.
        children: child elements in file order.
        text: the element's own character data (all text pieces concatenated, CDATA included), not stripped.
        file: path of the file the element was read from.
        line: 1-based line of the ``<`` that starts the element.
        attr_lines: attribute name -> 1-based line where the attribute is written.
    """

    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[XmlNode] = field(default_factory=list)
    text: str = ""
    file: str = ""
    line: int = 0
    attr_lines: dict[str, int] = field(default_factory=dict)

    def child(self, tag: str) -> XmlNode | None:
        """The first child element named ``tag``, or None."""
        for c in self.children:
            if c.tag == tag:
                return c
        return None

    def children_named(self, tag: str) -> Iterator[XmlNode]:
        """All child elements named ``tag``, in order."""
        return (c for c in self.children if c.tag == tag)

    @property
    def value(self) -> str:
        """The element's text, stripped of surrounding whitespace."""
        return self.text.strip()

    def where(self) -> str:
        """``file:line`` of this element."""
        return f"{self.file}:{self.line}"

    def __repr__(self) -> str:
        return f"<XmlNode {self.tag} {self.file}:{self.line} attrs={self.attrs} children={len(self.children)}>"
