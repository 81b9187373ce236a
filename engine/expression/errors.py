"""The one exception the expression language raises."""

from __future__ import annotations

__all__ = ["ExpressionError"]


class ExpressionError(ValueError):
    """A malformed expression or a failed evaluation.

    ``position`` is the 0-based offset into the expression text of the construct at fault.
    """

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} (at position {position})")
        self.message = message
        self.position = position
