"""A tiny DOM of the widgets' HTML for the unit tests (html.parser): elements, their
attributes and text, and the engine figures (`data-calc`) a fragment holds."""

from __future__ import annotations

from html.parser import HTMLParser

VOID = {"input", "br", "img", "meta", "link", "hr", "col", "source", "wbr", "area", "base"}


class Node:
    def __init__(self, tag, attrs, parent=None):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children: list = []

    def get(self, name, default=None):
        return self.attrs.get(name, default)

    def iter(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.iter()

    def find_all(self, pred):
        return [n for n in self.iter() if pred(n)]

    def find(self, pred):
        found = self.find_all(pred)
        return found[0] if found else None

    def text(self):
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)


class TreeBuilder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.stack[-1])
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(Node(tag, attrs, self.stack[-1]))

    def handle_endtag(self, tag):
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def dom(text: str) -> Node:
    b = TreeBuilder()
    b.feed(text)
    b.close()
    assert b.stack == [b.root], "unclosed elements: " + ", ".join(n.tag for n in b.stack[1:])
    return b.root


def figures(html: str) -> dict[str, tuple[str, str, str]]:
    """data-calc name -> (kind, raw, visible text); each name appears once."""
    out = {}
    for n in dom(html).find_all(lambda n: "data-calc" in n.attrs):
        name = n.get("data-calc")
        assert name not in out, f"data-calc={name} twice"
        if "data-bytes" in n.attrs:
            out[name] = ("bytes", n.get("data-bytes"), n.text())
        else:
            assert "data-value" in n.attrs, name
            out[name] = ("value", n.get("data-value"), n.text())
    return out


def by_id(root: Node, ident: str) -> Node | None:
    return root.find(lambda n: n.get("id") == ident)

