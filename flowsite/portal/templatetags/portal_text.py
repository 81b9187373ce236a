"""Template filters for text from the engine and the API."""

import re

from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

from flowsite.portal.forms.common import constant_label

register = template.Library()

_LITERAL = re.compile(r"``(.+?)``")


@register.filter
def doc_text(text: str) -> str:
    """Documentation text with its ``literal`` spans (reStructuredText style) as code."""
    return mark_safe(_LITERAL.sub(r"<code>\1</code>", escape(text or "")))


@register.filter
def constant(value: str) -> str:
    """One of the API's upper-case choices as words (ROUND_ROBIN: "Round robin")."""
    return constant_label(str(value))
