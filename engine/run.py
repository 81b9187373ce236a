"""Running one node in the foreground until SIGTERM or SIGINT.

``python -m engine run`` and the control plane's ``manage.py runnode`` share this: both take
the options ``add_run_arguments`` defines and hand them to ``run_node``, which recovers the data
directory, starts the components in their saved states, logs a status line periodically and,
on the signal, stops the flow, checkpoints the repositories and returns. A repository that
cannot be closed cleanly (a full disk) is logged in one line and does not make the stop fail:
what was committed is recovered at the next start. The node's Spark (``engine.spark.runtime``)
is set up from the settings' ``spark`` section, the Spark master and staging directory the
caller gives overriding them; it starts only when a Spark-backed component has work, and stops
with the node.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from engine.balance.service import BalanceSettings, LoadBalancing
from engine.cluster.agent import ClusterAgent, ClusterOptions
from engine.cluster.bus import CommandListener
from engine.cluster.keys import ClusterKeys
from engine.cluster.placement import Placement
from engine.cluster.records import OFFLOAD_COMMAND
from engine.cluster.state import ClusterStateProvider
from engine.damage import StorageCorruptionError
from engine.lock import DataDirectoryInUseError
from engine.node import NodeConfig, StandaloneNode
from engine.runtime.connectable import NodeRole
from engine.runtime.state import LocalStateProvider
from engine.spark.runtime import configure_node_runtime, node_runtime

__all__ = ["RunError", "add_run_arguments", "run_node"]

log = logging.getLogger("engine")


class RunError(Exception):
    """The node cannot start: bad settings, a broken flow, no flow at all (exit status 2) or a
    data directory another node holds (exit status 1); the message says why."""

    def __init__(self, message: str, exit_status: int = 2) -> None:
        super().__init__(message)
        self.exit_status = exit_status


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of running a node: --flow, --data-dir, --config, --parameter, --status-interval,
    --files-root, --accept-damage, --start."""
    parser.add_argument("--flow", type=Path, help="the flow definition (JSON, optionally gzip); without it, the "
                                                  "flow saved in the data directory resumes")
    parser.add_argument("--data-dir", type=Path, required=True, help="the node's data directory")
    parser.add_argument("--config", type=Path, help="node settings (JSON: repository sections and 'runtime')")
    parser.add_argument("--parameter", action="append", default=[], metavar="NAME=VALUE",
                        help="set a parameter of the flow's parameter contexts (repeatable)")
    parser.add_argument("--status-interval", type=float, metavar="SECONDS",
                        help="seconds between status lines in the log (default 60)")
    parser.add_argument("--files-root", type=Path, metavar="DIR",
                        help="where tenants' files live: a tenant without configured file roots may touch only "
                             "DIR/<tenant slug> (overrides the settings' confinement.files_root)")
    parser.add_argument("--accept-damage", action="store_true",
                        help="start even though the FlowFile repository's write-ahead log is damaged: keep a copy "
                             "of its files in DATA_DIR/quarantine/, recover what is readable and report what was "
                             "given up (without it, a damaged log refuses to start and nothing is changed)")
    parser.add_argument("--start", action="store_true",
                        help="start every component of the flow that is not DISABLED, its services saved ENABLED "
                             "first, as NiFi's start of the root group does (a flow NiFi wrote holds its "
                             "processors stopped, ENABLED); what starts is saved RUNNING, so a restart resumes it")


def run_node(data_dir: Path, flow: Path | None = None, *, config: Path | None = None, parameter: Sequence[str] = (),
             status_interval: float | None = None, name: str = "node", cluster: ClusterOptions | None = None,
             accept_damage: bool = False, files_root: Path | None = None, protected_paths: Sequence[str] = (),
             platform_addresses: Sequence[str] = (), spark_master: str | None = None,
             spark_staging_dir: str | None = None, start: bool = False) -> None:
    """Run the node over ``data_dir`` until SIGTERM or SIGINT, then stop it cleanly.

    The arguments are those of ``add_run_arguments`` (``parameter`` holds ``NAME=VALUE`` texts);
    ``name`` identifies the node in the log; with ``cluster`` the node joins that cluster (see
    ``engine.cluster.agent``); ``protected_paths`` and ``platform_addresses`` are added to the
    settings' ``confinement`` section; ``spark_master`` and ``spark_staging_dir``, when given,
    replace the settings' ``spark.master`` and ``spark.staging_dir``. A staging directory outside
    the data directory is protected too: it holds every tenant's records. With ``start`` every
    component that is not DISABLED is started once the saved states are taken
    (``FlowController.start_group``). Raises RunError when the node cannot start.
    """
    node_config = _node_config(config, status_interval)
    node_config = replace(node_config, spark=_spark_settings(node_config, spark_master, spark_staging_dir))
    staging = (str(Path(node_config.spark.staging_dir).resolve()),) if node_config.spark.staging_dir else ()
    confinement = node_config.confinement.adding(tuple(map(str, protected_paths)) + staging,
                                                 tuple(platform_addresses))
    if files_root is not None:
        confinement = replace(confinement, files_root=str(Path(files_root).resolve()))
    node_config = replace(node_config, confinement=confinement)
    if accept_damage:
        node_config = replace(node_config, storage=replace(node_config.storage, flowfile_repository=replace(
            node_config.storage.flowfile_repository, accept_damage=True)))
    configure_node_runtime(node_config.spark, Path(data_dir), f"flowsite {name}")
    try:
        return _run_node(data_dir, flow, node_config, parameter, name, cluster, start)
    except DataDirectoryInUseError as error:
        raise RunError(str(error), exit_status=1) from None
    finally:
        node_runtime().stop()


def _run_node(data_dir: Path, flow: Path | None, node_config: NodeConfig, parameter: Sequence[str], name: str,
              cluster: ClusterOptions | None, start: bool) -> None:
    agent = balancing = None
    if cluster is None:
        node = StandaloneNode(data_dir, node_config, name=name)
    else:
        try:
            keys = ClusterKeys(cluster.cluster)
        except ValueError as error:
            raise RunError(str(error)) from None
        if cluster.election_max_candidates is not None:
            node_config = replace(node_config, cluster=replace(
                node_config.cluster, election_max_candidates=cluster.election_max_candidates))
        if cluster.signer is None:
            raise RunError("a node in a cluster needs the cluster key that authenticates its commands")
        role = NodeRole(clustered=False, primary=True)
        state = ClusterStateProvider(LocalStateProvider(Path(data_dir) / "state" / "local"), keys)
        node = StandaloneNode(data_dir, node_config, unseal=cluster.unseal, role=role, cluster_state=state, name=name,
                              placement=Placement(cluster.labels))
        if cluster.transfer_trust is not None:
            balancing = LoadBalancing(node, cluster.node_id, cluster.redis_url, keys, *cluster.transfer_trust,
                                      settings=BalanceSettings.of(node_config.cluster))
            node.queue_factory = balancing.queue_factory
        agent = ClusterAgent(node, cluster.node_id, cluster.redis_url, keys, node_config.cluster, role, state,
                             cluster.signer, _with_offload(cluster.register_commands, balancing))
        log.info("%s: runs the tenants of %s", name, node.placement.describe())
    try:
        problems = node.load_flow(flow, _parameters(parameter))
    except (FileNotFoundError, ValueError) as error:  # FlowDefinitionError is a ValueError
        node.stop()
        raise RunError(str(error)) from None
    for problem in problems:
        log.warning("%s: flow problem: %s", name, problem)
    with _stop_signals() as wait_for_stop_signal:
        if agent is not None:
            agent.connect()
        try:
            failures = node.start()
        except StorageCorruptionError as error:
            raise RunError(str(error)) from None
        if start:
            refused = node.controller.start_group()
            for failure in refused:
                log.warning("%s: not started: %s", name, failure)
            failures += refused
        if agent is not None:
            agent.start()
        if balancing is not None:
            balancing.start()
        log.info("%s: running %s from %s; %d component(s) could not start", name,
                 node.flow.root.name or "the flow", flow or node.flow_path, len(failures))
        log.info("%s: %s", name, node.controller.status_line())
        wait_for_stop_signal()
    log.info("%s: stopping", name)
    if balancing is not None:
        balancing.stop()
    if agent is not None:
        agent.stop()
    unclosed = node.stop()
    if unclosed:
        log.warning("%s: stopped; %d repository(ies) could not be closed cleanly (see above); what was committed is "
                    "recovered at the next start", name, len(unclosed))
    else:
        log.info("%s: stopped cleanly", name)


_STOP_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT})


@contextlib.contextmanager
def _stop_signals() -> Iterator[Callable[[], None]]:
    """Catch SIGTERM and SIGINT until the block ends; yields the function that waits for one (a
    signal that came before the wait counts).

    The handlers do nothing in Python: the interpreter writes each caught signal's number to a
    pipe (``signal.set_wakeup_fd``) that the wait reads. A handler that set a ``threading.Event``
    could deadlock the node: the signal may land while the main thread holds that Event's lock
    inside ``Event.wait``, and the handler runs on that same thread.
    """
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    previous = signal.set_wakeup_fd(write_end)

    def wait() -> None:
        while not _STOP_SIGNALS.intersection(os.read(read_end, 64)):
            continue  # another caught signal's number

    try:
        for signum in _STOP_SIGNALS:
            signal.signal(signum, _do_nothing)
        yield wait
    finally:
        signal.set_wakeup_fd(previous)
        os.close(read_end)
        os.close(write_end)


def _do_nothing(signum: int, frame: object) -> None:
    """A Python-level handler, so that the interpreter catches the signal (and writes the wakeup pipe)."""


def _node_config(path: Path | None, status_interval: float | None) -> NodeConfig:
    try:
        config = NodeConfig.from_file(path) if path else NodeConfig()
    except (OSError, ValueError) as error:
        raise RunError(str(error)) from None
    if status_interval is not None:
        config = replace(config, runtime=replace(config.runtime, status_log_interval=status_interval))
    return config


def _spark_settings(config: NodeConfig, master: str | None, staging_dir: str | None):
    """The settings' ``spark`` section with the caller's master and staging directory."""
    changes = {name: value for name, value in (("master", master), ("staging_dir", staging_dir)) if value}
    try:
        return replace(config.spark, **changes)
    except ValueError as error:
        raise RunError(f"spark settings: {error}") from None


def _parameters(texts: Sequence[str]) -> dict[str, str]:
    parameters = {}
    for text in texts:
        name, separator, value = text.partition("=")
        if not separator or not name:
            raise RunError(f"--parameter expects NAME=VALUE, not {text!r}")
        parameters[name] = value
    return parameters


def _with_offload(register: Callable[[CommandListener, StandaloneNode], None] | None,
                  balancing: LoadBalancing | None) -> Callable[[CommandListener, StandaloneNode], None] | None:
    """``register`` plus the ``offload`` command, answered by ``balancing`` (when the node load-balances)."""
    if balancing is None:
        return register

    def both(listener: CommandListener, node: StandaloneNode) -> None:
        if register is not None:
            register(listener, node)
        listener.register(OFFLOAD_COMMAND, lambda command: balancing.offload())
    return both
