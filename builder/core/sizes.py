"""Which fields of a record or a prediction are over their size limit (``[sizes]``), and by what."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from builder.core.config import SizesConfig


def size(value: Any) -> int:
    """Bytes of ``value`` as UTF-8 text: a string, or the strings of a list or tuple summed;
    anything else (a number, None) counts nothing."""
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, (list, tuple)):
        return sum(size(item) for item in value)
    return 0


def oversized(fields: Mapping[str, Any] | BaseModel, limits: SizesConfig) -> dict[str, str]:
    """Each field of ``fields`` over its limit, with its size and the limit's setting; empty
    when every one fits."""
    if isinstance(fields, BaseModel):
        fields = {name: getattr(fields, name) for name in type(fields).model_fields}
    over = {}
    for name, value in fields.items():
        found, most = size(value), limits.limit(name)
        if found > most:
            over[name] = f"{found} bytes > {most} (sizes.{limits.setting(name)})"
    return over
