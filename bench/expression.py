"""Expression Language evaluations per second, beside the same computation as a plain Python function.

Run with ``python -m bench.expression [--seconds S]``. The expression is compiled once and evaluated against
a rotating set of FlowFile-like attribute maps, as a processor does per FlowFile; the peer is a hand-written
Python function computing the same text. A third figure parses the expression anew on every evaluation, to
show what compiling once saves.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from bench.machine import describe_machine
from engine.expression import compile_expression
from engine.expression.functions import Scope
from engine.expression.parser import parse

EXPRESSION = "${filename:substringBefore('.'):toUpper():append('-'):append(${now():format('yyyyMMdd')})}"


def attribute_maps(count: int = 256) -> list[dict[str, str]]:
    """FlowFile attributes shaped like real ones, with a different file name each."""
    return [{"filename": f"report-{index}.final.csv", "path": "./", "uuid": f"00000000-0000-4000-8000-{index:012d}",
             "mime.type": "text/csv"} for index in range(count)]


def plain_python(attributes: dict[str, str]) -> str:
    """The expression's result written directly in Python."""
    name = attributes.get("filename") or ""
    index = name.find(".")
    base = name if index < 0 else name[:index]
    return base.upper() + "-" + datetime.now(timezone.utc).strftime("%Y%m%d")


def rate(function, maps: list[dict[str, str]], seconds: float) -> float:
    """Calls per second of ``function`` over ``maps`` for about ``seconds``."""
    done = 0
    started = time.perf_counter()
    stop = started + seconds
    while time.perf_counter() < stop:
        for attributes in maps:
            function(attributes)
        done += len(maps)
    return done / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="duration of each measurement")
    args = parser.parse_args()
    print(describe_machine(Path(tempfile.gettempdir())))
    print(f"expression: {EXPRESSION}")
    maps = attribute_maps()
    compiled = compile_expression(EXPRESSION)
    assert compiled.evaluate(maps[1]) == plain_python(maps[1]), "the expression and the peer disagree"
    started = time.perf_counter()
    for _ in range(1000):
        parse(EXPRESSION).build()
    compile_ms = (time.perf_counter() - started) / 1000 * 1000

    def reparsed(attributes: dict[str, str]) -> str:
        return parse(EXPRESSION).build()(Scope(attributes, None))

    flowsite = rate(compiled.evaluate, maps, args.seconds)
    peer = rate(plain_python, maps, args.seconds)
    parsing = rate(reparsed, maps, args.seconds)
    print(f"compile (parse, check, build) once: {compile_ms:12.3f} ms")
    print(f"compiled expression:                {flowsite:12,.0f} evaluations/s")
    print(f"plain Python function (peer):       {peer:12,.0f} calls/s")
    print(f"ratio compiled / peer:              {flowsite / peer:12.2f}")
    print(f"parsed on every evaluation:         {parsing:12,.0f} evaluations/s = {parsing / flowsite:.2f} x compiled")


if __name__ == "__main__":
    main()
