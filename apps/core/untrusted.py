"""Parsing files and text that users upload, with bounds (one home for the rules; pure Python).

- JSON and YAML nested deeper than MAX_DEPTH are refused (Python's parsers recurse: 100,000
  brackets raised RecursionError, a 500);
- YAML aliases are refused: a 455-byte "billion laughs" rubric expanded each level ninefold
  (38 s, 3 GB). Rubric files never need anchors; copying a block is clearer;
- text meant for PostgreSQL must not hold NUL (U+0000);
- YAML `!!binary` values are refused: a name written as `!!binary aGVsbG8=` used to be stored
  as the text "b'hello'";
- integers written with more than MAX_INT_DIGITS digits are kept as their text, so the field that
  reads them refuses them by name (Python's int() raises beyond 4,300 digits: a 500);
- `parse_int` is the one reader of a whole number typed as text: ASCII digits only, bounded
  (`str.isdigit()` accepts "²" and "٣", which int() refuses or reads as another number).
Each refusal is a ValueError whose message the caller puts under the field or row it read.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

# Deepest nesting accepted in an uploaded JSON or YAML document (rubrics need 4, rows 2).
MAX_DEPTH = 64
# The longest integer a document may write as a number; longer ones stay text (see above).
# 18 digits: every value PostgreSQL's bigint holds that has no more digits than it.
MAX_INT_DIGITS = 18
_INTEGER_TEXT = re.compile(rf"[+-]?[0-9]{{1,{MAX_INT_DIGITS}}}")


def parse_int(value: object, *, low: int | None = None, high: int | None = None) -> int | None:
    """A whole number from a document or a form: an int (not a bool) or its text in ASCII
    digits (an optional sign, at most MAX_INT_DIGITS digits, surrounding spaces ignored),
    within [low, high] when given. None for anything else: the caller names the field."""
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value if abs(value) < 10**MAX_INT_DIGITS else None
    elif isinstance(value, str) and _INTEGER_TEXT.fullmatch(value.strip()):
        number = int(value.strip())
    if number is None or (low is not None and number < low):
        return None
    if high is not None and number > high:
        return None
    return number


def _int_or_text(text: str) -> int | str:
    """json's parse_int: past MAX_INT_DIGITS digits the number stays its text."""
    return int(text) if len(text.lstrip("-")) <= MAX_INT_DIGITS else text


def _depth(text: str) -> int:
    """Deepest bracket nesting outside strings (JSON); cheap, iterative, linear."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


def json_loads(text: str) -> Any:
    """json.loads, refusing documents nested deeper than MAX_DEPTH (ValueError)."""
    if _depth(text) > MAX_DEPTH:
        raise ValueError(f"is nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text, parse_int=_int_or_text)
    except RecursionError as exc:  # belt and braces: the scan above should have caught it
        raise ValueError(f"is nested deeper than {MAX_DEPTH} levels") from exc


class _BoundedSafeLoader(yaml.SafeLoader):
    """yaml.SafeLoader without aliases, without !!binary, with a nesting bound, and with long
    integers kept as text."""

    def construct_yaml_int(self, node: Any) -> Any:
        digits = str(node.value).replace("_", "").lstrip("+-")
        if len(digits) > MAX_INT_DIGITS:
            return str(node.value)
        return super().construct_yaml_int(node)

    def construct_yaml_binary(self, node: Any) -> Any:
        raise yaml.constructor.ConstructorError(
            None,
            None,
            "binary values (!!binary) are not accepted; write the text itself",
            node.start_mark,
        )

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None,
                None,
                "aliases (*name) are not accepted; repeat the content instead",
                event.start_mark,
            )
        self._depth = getattr(self, "_depth", 0) + 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    f"the document is nested deeper than {MAX_DEPTH} levels",
                    self.peek_event().start_mark,
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_BoundedSafeLoader.add_constructor("tag:yaml.org,2002:int", _BoundedSafeLoader.construct_yaml_int)
_BoundedSafeLoader.add_constructor(
    "tag:yaml.org,2002:binary", _BoundedSafeLoader.construct_yaml_binary
)


def yaml_load(text: str) -> Any:
    """yaml.safe_load without aliases, nested at most MAX_DEPTH levels (yaml.YAMLError)."""
    try:
        return yaml.load(text, Loader=_BoundedSafeLoader)  # noqa: S506 (a SafeLoader subclass)
    except RecursionError as exc:
        raise yaml.YAMLError(f"the document is nested deeper than {MAX_DEPTH} levels") from exc


def nul_error(value: str) -> str:
    """Why this text cannot be stored ("" when it can)."""
    return "contains a NUL character (U+0000), which text cannot hold" if "\x00" in value else ""
