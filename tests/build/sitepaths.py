"""Locales, pages and where each built page lives (shared by the build tests)."""

from __future__ import annotations

from pathlib import Path

LOCALES = ("en", "tr", "pt", "ru", "fa")
PAGES = ("index", "calculator", "how-it-works", "rule-of-thumb", "lora-qlora",
         "full-fine-tuning", "choosing-a-gpu", "faq", "accuracy")


def page_path(site: Path, locale: str, page: str) -> Path:
    """Built HTML of `page` ("index", "faq", ...) in `locale`."""
    base = site if locale == "en" else site / locale
    return base / "index.html" if page == "index" else base / page / "index.html"
