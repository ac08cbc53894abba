"""A configuration's validation errors as one line each: key path, problem, source, a likely key."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError


def _keys(data: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Every key path of a nested mapping (sections and their keys)."""
    found: set[tuple[str, ...]] = set()
    for key, value in data.items():
        path = (*prefix, str(key))
        found.add(path)
        if isinstance(value, Mapping):
            found |= _keys(value, path)
    return found


def _fields(model: type[BaseModel], path: tuple[str, ...]) -> list[str]:
    """The field names of the model section at ``path`` (empty when it is no model)."""
    for part in path:
        field = model.model_fields.get(part)
        annotation = getattr(field, "annotation", None)
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return list(model.model_fields)


def error_lines(
    error: ValidationError,
    model: type[BaseModel],
    file_data: Mapping[str, Any],
    override_data: Mapping[str, Any],
    file_name: str,
) -> list[str]:
    """One line per problem: ``key.path: what is wrong (source)``, where the source is the
    ``--set`` override or the file that gave the key (or the defaults), with "did you mean"
    for an unknown key that is close to a known one."""
    overridden, in_file = _keys(override_data), _keys(file_data)
    lines = []
    for problem in error.errors():
        location = tuple(str(part) for part in problem["loc"])
        key = ".".join(location) or "(top level)"
        if location in overridden:
            source = f"--set {key}"
        elif location in in_file:
            source = file_name
        else:
            source = "defaults"
        message = problem["msg"]
        if problem["type"] == "extra_forbidden":
            message = "unknown key"
            close = difflib.get_close_matches(location[-1], _fields(model, location[:-1]), n=1)
            if close:
                message += f"; did you mean {'.'.join((*location[:-1], close[0]))}?"
        lines.append(f"{key}: {message} ({source})")
    return lines
