"""A model preset by the name a reader types: its id, its display name as the picker shows it,
or its Hugging Face repository (read from the URL of its config.json)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .catalog import ModelPreset


def model_label(preset: ModelPreset, locale: str) -> str:
    """The preset's name as a reader sees it in `locale`: its name, and for the language model
    of a multimodal checkpoint the catalog's "(text)" (`model.text_part`) after it."""
    from .i18n import t

    if preset.published is not None and preset.published.part == "text":
        return f"{preset.name} {t('model.text_part', locale)}"
    return preset.name


def _name_key(text: str) -> str:
    """A name as a reader may type it: case, spaces, dashes and underscores don't matter."""
    return "".join(ch for ch in text.casefold() if ch.isalnum() or ch == ".")


def hub_id(preset: ModelPreset) -> str | None:
    """The preset's Hugging Face repository ("meta-llama/Llama-3.1-8B"), read from the URL of
    its config.json (`source`), or None when the source is not a Hub file."""
    parts = preset.source.split("/")
    if len(parts) > 4 and parts[2] == "huggingface.co":
        return "/".join(parts[3:5])
    return None


@lru_cache(maxsize=None)
def _models_by_name() -> dict[str, str]:
    out: dict[str, str] = {}
    from .catalog import models

    for m in models():
        keys = [m.id, m.name, model_label(m, "en")]
        hub = hub_id(m)
        if hub:
            keys += [hub, hub.split("/", 1)[1]]
        for k in keys:
            out.setdefault(_name_key(k), m.id)
    return out


def resolve_model(text: str) -> str | None:
    """The preset id a reader means: its id ("llama-3.1-8b"), its display name as the list shows
    it ("Llama 3.1 8B"), or its Hugging Face id ("meta-llama/Llama-3.1-8B", with or without the
    organisation); None when no preset matches."""
    if not isinstance(text, str) or len(text) > 200:
        return None
    return _models_by_name().get(_name_key(text))
