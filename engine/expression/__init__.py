"""NiFi Expression Language for attribute-driven property values (``/data/${filename:toUpper()}.bak``)."""

from __future__ import annotations

from engine.expression.compiler import CompiledExpression, compile_expression, evaluate
from engine.expression.errors import ExpressionError
from engine.expression.functions import FUNCTIONS
from engine.expression.parser import expression_ranges

__all__ = ["CompiledExpression", "ExpressionError", "FUNCTIONS", "compile_expression", "evaluate", "expression_ranges"]
