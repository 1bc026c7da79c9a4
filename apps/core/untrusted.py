"""Parsing files and text that users upload, with bounds (one home for the rules; pure Python).

- JSON and YAML nested deeper than MAX_DEPTH are refused (Python's parsers recurse: 100,000
  brackets raised RecursionError, a 500);
- YAML aliases are refused: a 455-byte "billion laughs" rubric expanded each level ninefold
  (38 s, 3 GB). Rubric files never need anchors; copying a block is clearer;
- text meant for PostgreSQL must not hold NUL (U+0000).
Each refusal is a ValueError whose message the caller puts under the field or row it read.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

# Deepest nesting accepted in an uploaded JSON or YAML document (rubrics need 4, rows 2).
MAX_DEPTH = 64


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
        return json.loads(text)
    except RecursionError as exc:  # belt and braces: the scan above should have caught it
        raise ValueError(f"is nested deeper than {MAX_DEPTH} levels") from exc


class _BoundedSafeLoader(yaml.SafeLoader):
    """yaml.SafeLoader without aliases and with a nesting bound."""

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


def yaml_load(text: str) -> Any:
    """yaml.safe_load without aliases, nested at most MAX_DEPTH levels (yaml.YAMLError)."""
    try:
        return yaml.load(text, Loader=_BoundedSafeLoader)  # noqa: S506 (a SafeLoader subclass)
    except RecursionError as exc:
        raise yaml.YAMLError(f"the document is nested deeper than {MAX_DEPTH} levels") from exc


def nul_error(value: str) -> str:
    """Why this text cannot be stored ("" when it can)."""
    return "contains a NUL character (U+0000), which text cannot hold" if "\x00" in value else ""
