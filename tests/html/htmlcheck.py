"""Parse a produced HTML page with the standard library's parser and check it is self-contained.

`parse(text)` returns a `Page`: parse errors (a closing tag that does not match,
an element left open, a duplicate id), every id, every element's attributes and
the text inside each element that has an id.  `external(page)` lists whatever
would be fetched from elsewhere (a link, a src, a CSS url()).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Page:
    errors: list[str] = field(default_factory=list)
    ids: dict[str, dict] = field(default_factory=dict)  # id -> attributes (with "tag")
    elements: list[dict] = field(default_factory=list)  # every element's attributes (with "tag")
    text_in: dict[str, str] = field(default_factory=dict)  # id -> its text content
    in_template: set[str] = field(default_factory=set)  # ids inside a <template> (not rendered)
    styles: list[str] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)

    def with_class(self, cls: str, tag: str | None = None) -> list[dict]:
        return [
            e for e in self.elements if cls in e.get("class", "").split() and (tag is None or e["tag"] == tag)
        ]


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self.stack: list[tuple[str, str | None]] = []  # (tag, id)

    def handle_starttag(self, tag, attrs):
        a = {k: (v or "") for k, v in attrs}
        a["tag"] = tag
        self.page.elements.append(a)
        if "id" in a:
            if a["id"] in self.page.ids:
                self.page.errors.append(f"duplicate id {a['id']!r}")
            self.page.ids[a["id"]] = a
            if any(t == "template" for t, _ in self.stack):
                self.page.in_template.add(a["id"])
            self.page.text_in[a["id"]] = ""
        if tag not in VOID:
            self.stack.append((tag, a.get("id")))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1][0] != tag:
            top = self.stack[-1][0] if self.stack else None
            self.page.errors.append(f"</{tag}> closes <{top}> at line {self.getpos()[0]}")
            return
        self.stack.pop()

    def handle_data(self, data):
        if self.stack and self.stack[-1][0] == "style":
            self.page.styles.append(data)
        if self.stack and self.stack[-1][0] == "script":
            self.page.scripts.append(data)
        for _, i in self.stack:
            if i is not None:
                self.page.text_in[i] += data


def parse(text: str) -> Page:
    p = _Parser()
    p.feed(text)
    p.close()
    if p.stack:
        p.page.errors.append(f"left open: {[t for t, _ in p.stack]}")
    if not text.startswith("<!DOCTYPE html>"):
        p.page.errors.append("no doctype")
    return p.page


def external(page: Page) -> list[str]:
    """Everything the page would fetch: src attributes, links other than #anchors, CSS url()."""
    out = []
    for e in page.elements:
        for k in ("src", "href", "xlink:href", "action", "data"):
            v = e.get(k)
            if v is not None and not v.startswith("#"):
                out.append(f"<{e['tag']} {k}={v!r}>")
        if e["tag"] == "link":
            out.append("<link>")
    for css in page.styles:
        if "url(" in css or "@import" in css:
            out.append("CSS url()/@import")
    for js in page.scripts:
        if "http://" in js or "https://" in js or "fetch(" in js or "XMLHttpRequest" in js:
            out.append("script fetches")
    return out


def broken_anchors(page: Page) -> list[str]:
    """In-page links (#x) to an id that is not there."""
    return [
        e["href"]
        for e in page.elements
        if e.get("href", "").startswith("#") and e["href"][1:] not in page.ids
    ]
