"""The site build's concerns, one module each, wired to mkdocs' events by build_tables.py:
`macros` and `tables` (the pages' Jinja context), `prose` (translations, the digit check,
right-to-left prose, FAQ data), `pages` (the one finish of every built page and template,
sitemaps, the 404 page per locale), `search` (one index per locale), `runtime` (Pyodide, the
calc wheel, the snapshot); `common` holds what they share."""
