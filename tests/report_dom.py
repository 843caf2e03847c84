"""A small DOM for the report tests, built with the standard library's ``html.parser``.

``parse(page)`` gives the root ``Node``; ``find_all`` walks it. The parser also records
every start tag it saw, so a test can assert that no element of a kind (``script`` with
code, ``img``, ``iframe``) exists and no attribute is an event handler.
"""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser

import attrs

__all__ = ["Node", "parse"]

_VOID = frozenset({"meta", "link", "br", "img", "input", "hr", "base", "col", "source"})


@attrs.define
class Node:
    tag: str
    attrs: dict[str, str | None]
    children: list[Node] = attrs.field(factory=list)
    text_parts: list[str] = attrs.field(factory=list)

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def text(self) -> str:
        return "".join(self.text_parts) + "".join(c.text() for c in self.children)

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            yield from child.walk()

    def find_all(self, tag: str | None = None, cls: str | None = None) -> list[Node]:
        return [
            n
            for n in self.walk()
            if (tag is None or n.tag == tag) and (cls is None or cls in n.classes)
        ]

    def by_id(self, ident: str) -> Node:
        found = [n for n in self.walk() if n.attrs.get("id") == ident]
        assert len(found) == 1, (ident, len(found))
        return found[0]


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attributes: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attributes))
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attributes: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, dict(attributes)))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return
        raise AssertionError(f"</{tag}> closes nothing open")

    def handle_data(self, data: str) -> None:
        self.stack[-1].text_parts.append(data)


def parse(page: str) -> Node:
    builder = _Builder()
    builder.feed(page)
    builder.close()
    assert len(builder.stack) == 1, [n.tag for n in builder.stack]  # every element closed
    return builder.root
