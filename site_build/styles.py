"""The widgets' stylesheet: written in parts by concern, served as one file.

`docs/assets/calc/css/*.css` are its parts, one concern each (every widget's form, results and
chart; the detailed calculator's layout and its pieces), joined in their names' order into the
site's `assets/calc/calc.css`: the one stylesheet a page with a widget links
(overrides/main.html), so the split costs the reader no request. The parts themselves are not
copied into the site.
"""

from __future__ import annotations

from pathlib import Path

from .common import fail

__all__ = ["CALC_CSS", "PARTS", "parts", "joined", "drop_parts", "write_calc_css"]

#: The joined stylesheet, relative to the site's root.
CALC_CSS = "assets/calc/calc.css"
#: Its parts' folder, relative to the docs folder; the names' order is the cascade's.
PARTS = "assets/calc/css"


def parts(docs_dir: Path) -> list[Path]:
    """The parts in the order they are joined (by name); the build fails without any."""
    found = sorted((Path(docs_dir) / PARTS).glob("*.css"))
    if not found:
        raise fail(f"no stylesheet parts in {Path(docs_dir) / PARTS}")
    return found


def joined(docs_dir: Path) -> str:
    """The parts, one after another, a blank line between two."""
    texts = [p.read_text(encoding="utf-8").rstrip("\n") + "\n" for p in parts(docs_dir)]
    return "\n".join(texts)


def drop_parts(files) -> None:
    """Leave the parts out of the site (mkdocs' `on_files`): only the joined file is served."""
    for file in [f for f in files if f.src_uri.startswith(PARTS + "/")]:
        files.remove(file)


def write_calc_css(config) -> Path:
    """The joined stylesheet into the site (before the service worker's list and the
    precompressed copies are made from the site's files)."""
    target = Path(config.site_dir) / CALC_CSS
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(joined(Path(config.docs_dir)), encoding="utf-8")
    return target
