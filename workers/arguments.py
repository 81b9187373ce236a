"""Reading a command's arguments, with errors that name the command and the argument."""

from __future__ import annotations

from typing import Any

from engine.cluster.bus import Command

__all__ = ["component_id", "number", "text", "text_list"]


def component_id(command: Command) -> str:
    """The command's ``id``: the component it is about."""
    identifier = command.args.get("id")
    if not identifier or not isinstance(identifier, str):
        raise ValueError(f"command {command.kind} needs the component's 'id'")
    return identifier


def text(command: Command, name: str, default: str | None = None) -> str:
    """The text argument ``name`` (``default`` when absent; required when that is None)."""
    value = command.args.get(name, default)
    if not isinstance(value, str) or not value:
        raise ValueError(f"command {command.kind} needs {name!r} as text" if value is None else
                         f"command {command.kind}: {name!r} must be text, not {value!r}")
    return value


def number(command: Command, name: str, default: int | None = None, *, low: int = 0, high: int | None = None) -> int:
    """The whole-number argument ``name`` (a number or its digits), at least ``low`` and, when
    ``high`` is given, at most it (``default`` when absent; required when that is None)."""
    value: Any = command.args.get(name, default)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if value is None:
        raise ValueError(f"command {command.kind} needs {name!r} (a whole number)")
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bounds = f"from {low}" + (f" to {high:,}" if high is not None else "")
        raise ValueError(f"command {command.kind}: {name!r} must be a whole number {bounds}, not {value!r}")
    return value


def text_list(command: Command, name: str) -> list[str]:
    """The required list-of-text argument ``name``."""
    value = command.args.get(name)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"command {command.kind} needs {name!r} as a list of text values" if value is None else
                         f"command {command.kind}: {name!r} must be a list of text values, not {value!r}")
    return value
