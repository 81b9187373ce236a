"""Command line of the engine, without Django.

    python -m engine run --flow FLOW.json --data-dir DIR     run one node until SIGTERM/SIGINT (--start: start
                                                             every component not DISABLED, as NiFi's start)
                                                             (SPARK_MASTER and FLOWSITE_SPARK_STAGING_DIR,
                                                             when set, choose its Spark: docs/spark.md)
    python -m engine validate FLOW.json                      list every problem of a flow definition
    python -m engine components [--json]                     the processor and service types found
    python -m engine docs                                    Markdown reference of the built-in types
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from engine.components import ComponentRegistry, default_registry
from engine.docs import render_components
from engine.flow import FlowDefinitionError, check_flow, load_flow
from engine.run import RunError, add_run_arguments, run_node

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the command; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m engine", description="Flowsite's dataflow engine.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a flow on this machine until SIGTERM or SIGINT")
    add_run_arguments(run)
    run.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR (default INFO)")
    validate = commands.add_parser("validate", help="list every problem of a flow definition")
    validate.add_argument("flow", type=Path)
    components = commands.add_parser("components", help="list the processor and controller-service types")
    components.add_argument("--json", action="store_true", help="print JSON")
    commands.add_parser("docs", help="print the reference of the built-in processors and services (Markdown)")
    args = parser.parse_args(argv)
    if args.command == "run":
        return _run(args)
    if args.command == "validate":
        return _validate(args.flow)
    if args.command == "docs":
        sys.stdout.write(render_components(ComponentRegistry(use_entry_points=False)))
        return 0
    return _components(args.json)


def _run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        run_node(args.data_dir, args.flow, config=args.config, parameter=args.parameter,
                 status_interval=args.status_interval, name=args.data_dir.resolve().name,
                 accept_damage=args.accept_damage, files_root=args.files_root,
                 spark_master=os.environ.get("SPARK_MASTER") or None,
                 spark_staging_dir=os.environ.get("FLOWSITE_SPARK_STAGING_DIR") or None, start=args.start)
    except RunError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_status
    return 0


def _validate(path: Path) -> int:
    try:
        problems = check_flow(load_flow(path))
    except FlowDefinitionError as error:
        problems = error.problems
    except OSError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for problem in problems:
        kind = "error" if problem.fatal else "invalid"
        print(f"{kind}: {problem}")
    if not problems:
        print(f"{path}: no problems")
    return 2 if any(problem.fatal for problem in problems) else (1 if problems else 0)


def _components(as_json: bool) -> int:
    registry = default_registry()
    rows = [{"kind": kind, "type": entry.type_name, "nifi_type": entry.cls.nifi_type, "origin": entry.origin,
             "description": entry.cls.description()}
            for kind, entries in (("processor", registry.processors()), ("controller service", registry.services()))
            for entry in entries]
    if as_json:
        print(json.dumps(rows, indent=2))
    else:
        for row in rows:
            print(f"{row['kind']:<19} {row['type']:<28} {row['description']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
