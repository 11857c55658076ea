"""Checks the decide form runs before anything is sent.

They mirror the server's rules (CONTRACT §3, Decide) so a reviewer sees the
problem next to the field instead of a 422 after a round trip. The server
still checks; this only explains early.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation

import attrs

NULL = object()  # "nothing picked" for a select


@attrs.frozen
class FormResult:
    response: dict[str, object]
    errors: dict[str, str]  # field name -> message; "choice" for the choice

    @property
    def ok(self) -> bool:
        return not self.errors


def number_hint(field: dict) -> str:
    parts = []
    if field.get("min") is not None:
        parts.append(f"min {_show(Decimal(str(field['min'])))}")
    if field.get("step") is not None:
        parts.append(f"step {_show(Decimal(str(field['step'])))}")
    return ", ".join(parts)


def check_number(field: dict, raw: str) -> tuple[int | float | None, str | None]:
    """The JSON number for ``raw``, or why it is refused."""
    text = raw.strip()
    if not text:
        return None, "required"
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None, f"{text!r} is not a number"
    if not value.is_finite() or not math.isfinite(float(value)):  # 1e999 is a Decimal, but no JSON number
        return None, f"{text!r} is not a number"
    low = Decimal(str(field["min"])) if field.get("min") is not None else None
    if low is not None and value < low:
        return None, f"must be at least {_show(low)}"
    step = Decimal(str(field["step"])) if field.get("step") is not None else None
    # Decimal keeps 0.1 steps exact; the grid is counted from min (or 0).
    if step is not None and (value - (low or Decimal(0))) % step != 0:
        base = _show(low or Decimal(0))
        return None, f"must be {base} plus a multiple of {_show(step)}"
    return (int(value) if value == value.to_integral_value() else float(value)), None


def check_select(field: dict, value: object) -> str | None:
    if value is NULL or value is None:
        return "pick one"
    if value not in {o["value"] for o in field.get("options", [])}:
        return "not one of the options"
    return None


def check_form(fields: list[dict], *, choice: str | None, values: dict[str, object]) -> FormResult:
    """Validate a whole decide form. ``values`` holds raw text for numbers."""
    errors: dict[str, str] = {}
    response: dict[str, object] = {}
    if not choice:
        errors["choice"] = "pick a choice"
    for field in fields:
        name = field["name"]
        if field.get("type") == "number":
            number, problem = check_number(field, str(values.get(name) or ""))
            if problem is None:
                response[name] = number
        else:
            problem = check_select(field, values.get(name, NULL))
            if problem is None:
                response[name] = values[name]
        if problem is not None:
            errors[name] = problem
    return FormResult(response=response, errors=errors)


def _show(value: Decimal) -> str:
    return format(value.normalize(), "f")
