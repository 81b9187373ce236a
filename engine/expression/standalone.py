"""Functions that read the evaluation's surroundings: ``getUri``, ``thread``, ``getStateValue``,
``evaluateELString``."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING
from urllib.parse import quote

from engine.expression.types import to_string

if TYPE_CHECKING:
    from engine.expression.functions import Scope

__all__ = ["get_uri", "thread_name", "get_state_value", "evaluate_el_string"]

# Characters java.net.URI leaves as they are in each component (unreserved, punctuation, and the separators the
# component may hold); everything else is percent-encoded as UTF-8.
_USER_INFO_SAFE = "-_.!~*'();:&=+$,"
_PATH_SAFE = "-_.!~*'();:@&=+$,/"
_QUERY_SAFE = "-_.!~*'();:@&=+$,/?[]"


def get_uri(scope: Scope, *parts: object) -> str:
    """``getUri(scheme, userInfo, host, port, path, query, fragment)``: a URI built and quoted as Java's
    seven-argument ``java.net.URI`` constructor does; empty or null parts are left out, port -1 is none."""
    scheme, user_info, host, port, path, query, fragment = (to_string(part) for part in parts)  # type: ignore[arg-type]
    try:
        port_number = -1 if port is None or not port.strip() else int(port.strip())
    except ValueError:
        raise ValueError(f"port {port!r} is not a number") from None
    if path and host and not path.startswith("/"):
        raise ValueError(f"path {path!r} must start with '/' when a host is given")
    text = f"{scheme}:" if scheme else ""
    if host:
        text += "//"
        if user_info:
            text += quote(user_info, safe=_USER_INFO_SAFE) + "@"
        text += f"[{host}]" if ":" in host and not host.startswith("[") else host
        if port_number != -1:
            text += f":{port_number}"
    if path:
        text += quote(path, safe=_PATH_SAFE)
    if query:
        text += "?" + quote(query, safe=_QUERY_SAFE)
    if fragment:
        text += "#" + quote(fragment, safe=_QUERY_SAFE)
    return text


def thread_name(scope: Scope) -> str:
    """``thread()``: the name of the thread evaluating the expression."""
    return threading.current_thread().name


def get_state_value(scope: Scope, key: str) -> str | None:
    """``getStateValue(key)``: the value under ``key`` in the component's state, when the processor offers its
    state to expressions (UpdateAttribute with a stateful store); null otherwise."""
    return None if scope.state is None else scope.state.get(key)


def evaluate_el_string(subject: str, scope: Scope) -> str:
    """``evaluateELString()``: the subject's text evaluated as an expression against the same attributes."""
    from engine.expression.compiler import compile_expression

    return compile_expression(subject).evaluate(scope.attributes, scope.variables, scope.parameters, scope.state)
