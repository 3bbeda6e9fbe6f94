"""Headings never skip a level on the way down (h1, then h2, then h3: WCAG 1.3.1's outline, and
Lighthouse's `heading-order` audit, which found the calculator's h3s right after the page's h1),
on every page in every locale, the widgets' build-time results included."""

from __future__ import annotations


def test_no_heading_skips_a_level(site_pages):
    skipped = []
    for rel, page in site_pages.items():
        previous = 0
        for tag, _attrs, text in page.headings:
            level = int(tag[1])
            if previous and level > previous + 1:
                skipped.append(f"{rel}: h{previous} -> {tag} {text.strip()[:40]!r}")
            previous = level
    assert skipped == []
