"""The one exception `calc` lets out: a list of problems, each naming its field."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable


@dataclass(frozen=True)
class Problem:
    """One invalid field. `code` is a catalog key suffix (`error.<code>`); `params` fill it."""

    field: str
    code: str
    params: tuple[tuple[str, str], ...] = ()

    @staticmethod
    def of(field_name: str, code: str, **params: object) -> "Problem":
        return Problem(field_name, code, tuple(sorted((k, str(v)) for k, v in params.items())))


class CalcError(ValueError):
    """Invalid input. Carries every problem found, so a form can mark each field."""

    def __init__(self, problems: Iterable[Problem]):
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__("; ".join(f"{p.field}: {p.code}" for p in self.problems))

    @classmethod
    def one(cls, field_name: str, code: str, **params: object) -> "CalcError":
        return cls([Problem.of(field_name, code, **params)])

    def messages(self, locale: str = "en") -> dict[str, str]:
        """Field name -> translated message (first problem per field)."""
        from .i18n import error_message

        out: dict[str, str] = {}
        for p in self.problems:
            out.setdefault(p.field, error_message(p, locale))
        return out

    def message(self, locale: str = "en") -> str:
        return "\n".join(self.messages(locale).values())
