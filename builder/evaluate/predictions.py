"""Predictions in SWE-bench's format (JSONL or a JSON list), read and checked at the boundary."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from builder.core.config import SizesConfig
from builder.core.errors import SwtError
from builder.core.records import INSTANCE_ID_MAX_LENGTH, INSTANCE_ID_PATTERN
from builder.core.sizes import oversized

GOLD = "gold"
"""``--predictions gold``: the dataset's own golden tests stand as the predictions."""


class PredictionsError(SwtError, ValueError):
    """The predictions file cannot be read; the message names the file and the entry."""


def _no_dots(value: str) -> str:
    if ".." in value:
        raise ValueError("contains '..'")
    return value


class Prediction(BaseModel):
    """One predicted patch for one instance (a missing or null ``model_patch`` is empty: the
    evaluation reports it not applicable)."""

    model_config = ConfigDict(extra="ignore", frozen=True, protected_namespaces=())

    instance_id: Annotated[
        str,
        Field(pattern=INSTANCE_ID_PATTERN, max_length=INSTANCE_ID_MAX_LENGTH),
        AfterValidator(_no_dots),
    ]
    model_name_or_path: str = ""
    model_patch: str = ""
    invalid: str = Field(
        default="",
        description="why the entry cannot be evaluated though its instance is known (a raw "
        "byte that is not UTF-8, a lone surrogate, a field over its size limit): the "
        "prediction is not applicable for this reason",
    )


def read_predictions(path: Path, sizes: SizesConfig | None = None) -> list[Prediction]:
    """Every prediction of ``path``, in file order; two for one instance is an error. One
    whose text is not UTF-8 or over its limit in ``sizes`` (default: the defaults) is kept,
    invalid, with the reason."""
    sizes = sizes or SizesConfig()
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise PredictionsError(f"{path}: cannot read the predictions ({error.strerror})") from error
    if raw.lstrip().startswith(b"["):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise PredictionsError(
                f"{path}: not UTF-8 text (byte {error.start}); in a JSON list that spoils "
                "every entry"
            ) from error
        entries = _listed(path, text)
    else:
        entries = _lines(path, raw)
    predictions: list[Prediction] = []
    seen: dict[str, str] = {}
    for where, entry, problem in entries:
        prediction = _prediction(path, where, entry, problem, sizes)
        if prediction.instance_id in seen:
            raise PredictionsError(
                f"{path}: {where} predicts {prediction.instance_id} again "
                f"(first at {seen[prediction.instance_id]})"
            )
        seen[prediction.instance_id] = where
        predictions.append(prediction)
    return predictions


def _listed(path: Path, text: str) -> Iterable[tuple[str, Any, str]]:
    try:
        listed = json.loads(text)
    except json.JSONDecodeError as error:
        raise PredictionsError(f"{path}: not a JSON list: {error}") from error
    return [(f"entry {index}", item, "") for index, item in enumerate(listed, start=1)]


def _lines(path: Path, raw: bytes) -> Iterable[tuple[str, Any, str]]:
    """JSONL, one entry a line (with why it is invalid, or ""). A line that is not UTF-8
    spoils only its own prediction: read with the bad bytes escaped, it is kept, invalid, when
    its instance id can be read."""
    entries = []
    offset = 0
    for number, line in enumerate(raw.split(b"\n"), start=1):
        start, offset = offset, offset + len(line) + 1
        problem = ""
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as error:
            text = line.decode("utf-8", "surrogateescape")
            problem = (
                f"the prediction is not valid UTF-8 at line {number} "
                f"(byte {start + error.start} of the file)"
            )
        if not text.strip():
            continue
        try:
            entry = json.loads(text)
        except json.JSONDecodeError as error:
            raise PredictionsError(f"{path}: line {number} is not JSON: {error.msg}") from error
        if problem:
            entry = _escaped(path, number, entry)
        entries.append((f"line {number}", entry, problem))
    return entries


def _escaped(path: Path, number: int, entry: Any) -> Any:
    """An entry read with bad bytes as lone surrogates, its strings with those bytes written
    as ``\\xNN``; an error when even the instance id is spoilt."""
    if not isinstance(entry, dict):
        return entry
    instance = entry.get("instance_id")
    if isinstance(instance, str) and _spoilt(instance):
        raise PredictionsError(f"{path}: line {number}: instance_id is not valid UTF-8")
    fixed = {
        key: value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        if isinstance(value, str) and _spoilt(value)
        else value
        for key, value in entry.items()
    }
    return fixed


def _surrogate_at(value: str) -> int:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        return error.start
    return -1


def _spoilt(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _prediction(path: Path, where: str, entry: Any, problem: str, sizes: SizesConfig) -> Prediction:
    if not isinstance(entry, dict):
        raise PredictionsError(f"{path}: {where} is not an object")
    entry = {**entry, "model_patch": entry.get("model_patch") or ""}
    over = oversized(
        {k: v for k, v in entry.items() if k in ("model_patch", "model_name_or_path")}, sizes
    )
    if over:  # its text is not kept: a 300 MB patch is not held for every later step
        problem = problem or "the prediction is over its size limit: " + "; ".join(
            f"{field}: {said}" for field, said in sorted(over.items())
        )
        entry = {**entry, **dict.fromkeys(over, "")}
    surrogates = [
        f"{key} (character {_surrogate_at(value)})"
        for key, value in entry.items()
        if key != "instance_id" and isinstance(value, str) and _spoilt(value)
    ]
    if surrogates:  # a JSON escape such as "\ud800" is valid JSON and no text
        problem = problem or (
            f"the prediction is not valid UTF-8 text: a lone surrogate in {', '.join(surrogates)}"
        )
        entry = {
            key: value.encode("utf-8", "backslashreplace").decode("utf-8")
            if key != "instance_id" and isinstance(value, str) and _spoilt(value)
            else value
            for key, value in entry.items()
        }
    entry["invalid"] = problem
    try:
        return Prediction.model_validate(entry)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'entry'}: {e['msg']}" for e in error.errors()
        )
        raise PredictionsError(f"{path}: {where}: {problems}") from error
