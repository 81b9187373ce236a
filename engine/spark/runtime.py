"""The node's Spark: one SparkSession per process, started lazily, reused, replaced after a failure.

``SparkRuntime.run(job)`` hands ``job`` the session (starting it on first use: no JVM runs
before a Spark-backed component has work) and turns what can go wrong into two errors:

- ``SparkUnavailableError``: Spark could not run the job — the driver JVM died, the standalone
  master or the Spark Connect server cannot be reached, the SparkContext was shut down. The
  session is discarded (stopped best-effort, the JVM killed) and the next job starts a new one;
  the caller rolls its FlowFiles back and penalizes them.
- ``SparkQueryError``: the job itself is wrong (SQL syntax, an unknown column, an ANSI cast of a
  bad value, any error Spark reports while it stays healthy); the message is Spark's. The session
  stays; the caller routes the FlowFiles to failure.

Other exceptions (a bug in the job's own Python) pass through unchanged.

Data goes in with ``frame`` and out with ``collect``: tables up to ``arrow_limit`` through Arrow
in memory, larger ones as Parquet under the staging directory (``engine.spark.staging``); records
too many to hold go in and out a batch at a time with ``frame_batches`` and ``collect_batches``,
always staged. The executors (or the Connect server) must see the staging directory at the same
path. Masters: ``local[*]``,
``spark://host:port`` (the driver advertises the address on which it reaches the master, so a
cluster on the same machine or network reaches it back) and ``sc://host:port`` (Spark Connect:
the node needs no JVM; ``ui_url`` is None). A process holds one session: a second runtime that
starts takes the process's session over, stopping the first's (tests use this; a node has one
runtime, ``node_runtime()``). pyspark is imported only when a session starts.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import shutil
import socket
import tempfile
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, TypeVar
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.parquet as pq

from engine.spark.settings import SparkSettings
from engine.spark.staging import StagingArea

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["STAGING_DIR_NAME", "SparkQueryError", "SparkRuntime", "SparkUnavailableError",
           "configure_node_runtime", "node_runtime"]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: The staging directory under a node's data directory when ``staging_dir`` is not set.
STAGING_DIR_NAME = "spark-staging"
#: Staged Parquet is written as files of about this size, in parallel.
_STAGED_FILE_BYTES = 128 << 20
#: How Spark Connect calls retry an unreachable server before the job fails (about 3 s in all),
#: instead of pyspark's default of about 10 minutes.
_CONNECT_RETRIES = {"max_retries": 3, "initial_backoff": 200, "backoff_multiplier": 3.0, "max_backoff": 2000}
#: Messages of errors that mean the session is gone, whatever their type.
_GONE = ("SparkContext was shut down", "stopped SparkContext", "SparkContext has been shutdown",
         "ExecutorLostFailure", "INVALID_HANDLE.SESSION_NOT_FOUND", "INVALID_HANDLE.SESSION_CLOSED",
         "INVALID_HANDLE.SESSION_CHANGED", "Answer from Java side is empty")


class SparkUnavailableError(Exception):
    """Spark could not run the job (its JVM died, the master or Connect server is unreachable):
    the caller rolls back and penalizes; the runtime has discarded the session, so the next job
    starts a new one."""


class SparkQueryError(Exception):
    """The job itself is wrong (SQL syntax, an unknown column, a value a cast refuses): the caller
    routes the FlowFiles to failure. ``error_class`` is Spark's error condition when it gave one
    (e.g. ``UNRESOLVED_COLUMN.WITH_SUGGESTION``)."""

    def __init__(self, message: str, error_class: str | None = None) -> None:
        super().__init__(message)
        self.error_class = error_class


#: The runtime whose session the process holds (there can be one SparkContext, or one Connect
#: mode, per process).
_process_lock = threading.Lock()
_process_owner: SparkRuntime | None = None


class SparkRuntime:
    """A lazily started SparkSession with the settings of ``settings`` (see the module docstring).

    ``data_dir``: the node's data directory, under which ``spark-staging`` is the default staging
    directory (None: a temporary directory, removed by ``stop``). ``app_name`` names the Spark
    application (and this process's staging directory).
    """

    def __init__(self, settings: SparkSettings, data_dir: Path | None, app_name: str = "flowsite") -> None:
        self.settings = settings
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.app_name = app_name
        self._lock = threading.RLock()
        self._session: Any = None
        self._generation = 0
        self._ui_url: str | None = None
        self._staging: StagingArea | None = None
        self._temporary_root: Path | None = None
        self._set_connect_mode = False

    # -- the session ----------------------------------------------------------------------

    @property
    def started(self) -> bool:
        """True while a session is up (no JVM or Connect session exists before the first job)."""
        return self._session is not None

    @property
    def ui_url(self) -> str | None:
        """The Spark UI's address once the session started (None before, with the UI disabled, and
        under Spark Connect, whose UI is the server's)."""
        return self._ui_url if self._session is not None else None

    def session(self) -> SparkSession:
        """The SparkSession, started on first use and reused; raises SparkUnavailableError when
        Spark cannot be started or reached."""
        return self._acquire()[0]

    def run(self, job: Callable[[SparkSession], T]) -> T:
        """Run ``job(session)`` and return its result, mapping failures to SparkUnavailableError
        (the session is discarded; the next job starts a new one) or SparkQueryError.

        Jobs of several threads run at once on the one session; the lock only guards starting
        and discarding it, and a failure discards the session only if no other job has replaced
        it meanwhile.
        """
        session, generation = self._acquire()
        try:
            return job(session)
        except Exception as error:
            mapped = self._map_error(error)
            if isinstance(mapped, SparkUnavailableError):
                self._discard(generation, str(mapped))
            if mapped is None:
                raise
            raise mapped from error

    def stop(self) -> None:
        """Stop the session (if started) and remove this process's staging directory."""
        global _process_owner
        with self._lock:
            session, self._session = self._session, None
            self._generation += 1
            if session is not None:
                self._teardown(session, kill=False)
            with _process_lock:
                if _process_owner is self:
                    _process_owner = None
            self._close_staging()

    def _acquire(self) -> tuple[Any, int]:
        with self._lock:
            if self._session is not None:
                return self._session, self._generation
            global _process_owner
            with _process_lock:
                previous = _process_owner
                if previous is not None and previous is not self:
                    log.warning("Spark: %s takes over this process's session from %s", self.app_name,
                                previous.app_name)
                    previous._release_to_another()
                try:
                    session = self._start()
                except Exception as error:
                    raise SparkUnavailableError(f"Spark ({self.settings.master}) could not start: "
                                                f"{_first_line(error)}") from error
                _process_owner = self
            self._session = session
            self._generation += 1
            self._ui_url = self._read_ui_url(session)
            log.info("Spark: session started on %s%s", self.settings.master,
                     f"; UI at {self._ui_url}" if self._ui_url else "")
            return session, self._generation

    def _release_to_another(self) -> None:
        """Give the process's session up for another runtime (called under ``_process_lock``)."""
        session, self._session = self._session, None
        self._generation += 1
        self._ui_url = None
        if session is not None:
            self._teardown(session, kill=False)

    def _discard(self, generation: int, why: str) -> None:
        global _process_owner
        with self._lock:
            if self._generation != generation or self._session is None:
                return
            session, self._session = self._session, None
            self._generation += 1
            self._ui_url = None
            log.warning("Spark: discarding the session (%s); the next job starts a new one", why)
            with _process_lock:
                self._teardown(session, kill=True)
                if _process_owner is self:
                    _process_owner = None

    def _start(self) -> Any:
        from pyspark.logger import PySparkLogger
        from pyspark.sql import SparkSession

        # pyspark logs every query error with the JVM's stack trace on stderr; the error reaches
        # the caller as SparkQueryError, which reports it where it belongs.
        for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
            PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)
        logging.getLogger("py4j").setLevel(logging.WARNING)  # a line per connection closed, at INFO
        self._open_staging()
        settings = self.settings
        if settings.kind == "connect":
            session = SparkSession.builder.remote(settings.master).create()
            self._set_connect_mode = True
            from pyspark.sql.connect.client.retries import DefaultPolicy

            session.client.set_retry_policies([DefaultPolicy(**_CONNECT_RETRIES)])
            try:
                for key, value in self._sql_conf().items():
                    session.conf.set(key, value)
            except Exception:
                self._teardown(session, kill=True)
                raise
            return session
        builder = SparkSession.builder.master(settings.master).appName(self.app_name)
        for key, value in self._classic_conf().items():
            builder = builder.config(key, value)
        return builder.getOrCreate()

    def _sql_conf(self) -> dict[str, str]:
        """The session settings every kind of master gets (then ``settings.conf``'s own)."""
        cores = _local_cores(self.settings.master) if self.settings.kind == "local" else (os.cpu_count() or 1)
        conf = {
            "spark.sql.session.timeZone": "UTC",
            "spark.sql.shuffle.partitions": str(max(2, 2 * cores)),
            "spark.sql.execution.arrow.pyspark.enabled": "true",
            # Staged results read back by pyarrow as timestamp[us, UTC], as toArrow() gives them.
            "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
        }
        if self.settings.kind == "connect":
            conf["spark.sql.connect.serverStacktrace.enabled"] = "false"
            conf.update({key: value for key, value in self.settings.conf.items() if key.startswith("spark.sql.")})
        return conf

    def _classic_conf(self) -> dict[str, str]:
        settings = self.settings
        conf = {**self._sql_conf(), "spark.driver.memory": settings.driver_memory,
                "spark.ui.enabled": "true" if settings.ui_enabled else "false",
                "spark.ui.showConsoleProgress": "false",
                # Arrow handed over becomes one partition per batch, worked on by every core; below
                # this threshold Spark would convert it to rows on the driver first, in one thread
                # (2-3 times slower for a micro-batch of 100,000 records).
                "spark.sql.execution.arrow.localRelationThreshold": "0"}
        if settings.kind == "standalone":
            conf["spark.driver.host"] = _address_towards(settings.master)
        conf.update(settings.conf)
        return conf

    def _read_ui_url(self, session: Any) -> str | None:
        if self.settings.kind == "connect" or not self.settings.ui_enabled:
            return None
        try:
            return session.sparkContext.uiWebUrl
        except Exception as error:  # the UI is information only
            log.warning("Spark: cannot read the UI's address: %s", _first_line(error))
            return None

    def _teardown(self, session: Any, *, kill: bool) -> None:
        """Stop ``session`` best-effort; with ``kill`` (after a failure) also end its JVM, so the
        next session starts a new one."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with contextlib.suppress(Exception):
                session.stop()
        if self.settings.kind == "connect":
            if self._set_connect_mode:
                # pyspark marks the process as a Connect client for good; this runtime set it.
                os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
                self._set_connect_mode = False
            return
        from pyspark import SparkContext
        from pyspark.sql import SparkSession
        from pyspark.sql.context import SQLContext

        SparkSession._instantiatedSession = None
        SparkSession._activeSession = None
        SQLContext._instantiatedContext = None
        with SparkContext._lock:
            SparkContext._active_spark_context = None
            gateway = SparkContext._gateway
            process = getattr(gateway, "proc", None)
            dead = process is not None and process.poll() is not None
            if gateway is None or not (kill or dead):
                return
            SparkContext._gateway = None
            SparkContext._jvm = None
        with contextlib.suppress(Exception):
            gateway.shutdown()
        if process is not None and process.poll() is None:
            process.kill()
            with contextlib.suppress(Exception):
                process.wait(timeout=30)

    def _jvm_dead(self) -> bool:
        if self.settings.kind == "connect":
            return False
        from pyspark import SparkContext

        process = getattr(SparkContext._gateway, "proc", None)
        return SparkContext._gateway is None or (process is not None and process.poll() is not None)

    def _map_error(self, error: Exception) -> Exception | None:
        """The error to raise for ``error`` (None: raise it unchanged)."""
        from py4j.protocol import Py4JError, Py4JJavaError, Py4JNetworkError
        from pyspark.errors import PySparkException

        text = _first_line(error)
        if isinstance(error, (Py4JNetworkError, ConnectionError, EOFError)) or self._jvm_dead():
            return SparkUnavailableError(f"Spark's JVM is gone: {text}")
        if _connect_unavailable(error) or any(mark in str(error) for mark in _GONE):
            return SparkUnavailableError(f"Spark ({self.settings.master}) is unavailable: {text}")
        if isinstance(error, PySparkException):
            condition = error.getCondition() if hasattr(error, "getCondition") else error.getErrorClass()
            return SparkQueryError(_message(error), condition)
        if isinstance(error, Py4JJavaError):
            return SparkQueryError(_first_line(str(error.java_exception)))
        if isinstance(error, Py4JError):
            return SparkUnavailableError(f"Spark's JVM does not answer: {text}")
        return None

    # -- data in and out ------------------------------------------------------------------

    @contextlib.contextmanager
    def frame(self, session: SparkSession, table: pa.Table) -> Iterator[DataFrame]:
        """``table`` as a DataFrame of ``session``: through Arrow when ``table.nbytes`` is at most
        ``arrow_limit``, else written as Parquet under the staging directory and read by Spark —
        those files are removed on exit, so use the DataFrame (run every action on it) inside the
        ``with`` block."""
        if table.nbytes <= self.settings.arrow_limit_bytes:
            yield session.createDataFrame(table)
            return
        path = self._staging_area().new_path("in")
        try:
            _write_parquet(table, path)
            yield session.read.parquet(str(path))
        finally:
            shutil.rmtree(path, ignore_errors=True)

    def collect(self, frame: DataFrame, *, size_hint: int | None = None) -> pa.Table:
        """``frame``'s rows as an Arrow table. With ``size_hint`` (the bytes the caller expects,
        e.g. its input's ``nbytes``) above ``arrow_limit``, Spark writes the result as Parquet
        under the staging directory and the node reads it back (so the driver never holds it);
        otherwise through Arrow (``toArrow``). Both give the same Arrow schema."""
        if size_hint is None or size_hint <= self.settings.arrow_limit_bytes:
            return frame.toArrow()
        from pyspark.sql.pandas.types import to_arrow_schema

        schema = to_arrow_schema(frame.schema, error_on_duplicated_field_names_in_struct=True, timezone="UTC")
        path = self._staging_area().new_path("out")
        try:
            frame.write.parquet(str(path))
            files = sorted(str(p) for p in path.glob("*.parquet"))
            if not files:
                return schema.empty_table()
            return pq.ParquetDataset(files).read().select(schema.names).cast(schema)
        finally:
            shutil.rmtree(path, ignore_errors=True)

    @contextlib.contextmanager
    def frame_batches(self, session: SparkSession, schema: pa.Schema,
                      batches: Iterable[pa.RecordBatch]) -> Iterator[DataFrame]:
        """Records that come a batch at a time (a reader's) as a DataFrame of ``session``: written
        as Parquet under the staging directory as they come, so memory holds about one batch
        whatever their number; the files are removed on exit (use the DataFrame inside the
        ``with`` block)."""
        path = self._staging_area().new_path("in")
        path.mkdir()
        try:
            with pq.ParquetWriter(path / "part-00000.parquet", schema, coerce_timestamps="us",
                                  allow_truncated_timestamps=True) as writer:
                for batch in batches:
                    writer.write_batch(batch)
            yield session.read.parquet(str(path))
        finally:
            shutil.rmtree(path, ignore_errors=True)

    @contextlib.contextmanager
    def collect_batches(self, frame: DataFrame) -> Iterator[pa.RecordBatchReader]:
        """``frame``'s rows a batch at a time: Spark writes them as Parquet under the staging
        directory and the reader on entry reads them back a row group at a time, in order (the
        driver never holds them, the node about a row group). The files are removed on exit."""
        from pyspark.sql.pandas.types import to_arrow_schema

        schema = to_arrow_schema(frame.schema, error_on_duplicated_field_names_in_struct=True, timezone="UTC")
        path = self._staging_area().new_path("out")
        try:
            frame.write.parquet(str(path))
            files = sorted(path.glob("*.parquet"))

            def batches() -> Iterator[pa.RecordBatch]:
                for file in files:
                    # Column chunks through small buffers: memory holds pages, not a whole row group.
                    parquet = pq.ParquetFile(file, buffer_size=1 << 20, pre_buffer=False)
                    for batch in parquet.iter_batches():
                        yield from pa.Table.from_batches([batch]).select(schema.names).cast(schema).to_batches()

            yield pa.RecordBatchReader.from_batches(schema, batches())
        finally:
            shutil.rmtree(path, ignore_errors=True)

    @property
    def staging_root(self) -> Path | None:
        """Where this runtime stages (None until a session started)."""
        return self._staging.root if self._staging is not None else None

    def _staging_area(self) -> StagingArea:
        if self._staging is None:
            self._open_staging()
        assert self._staging is not None
        return self._staging

    def _open_staging(self) -> None:
        with self._lock:
            if self._staging is not None:
                return
            if self.settings.staging_dir:
                root = Path(self.settings.staging_dir)
            elif self.data_dir is not None:
                root = self.data_dir / STAGING_DIR_NAME
            else:
                self._temporary_root = root = Path(tempfile.mkdtemp(prefix="flowsite-spark-staging-"))
            self._staging = StagingArea(root, self.app_name)

    def _close_staging(self) -> None:
        staging, self._staging = self._staging, None
        if staging is not None:
            staging.close()
        temporary, self._temporary_root = self._temporary_root, None
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)


def _write_parquet(table: pa.Table, path: Path) -> None:
    """``table`` as Parquet files in the new directory ``path``, written in parallel (timestamps
    in microseconds, which Spark reads)."""
    path.mkdir()
    parts = max(1, min(os.cpu_count() or 1, math.ceil(table.nbytes / _STAGED_FILE_BYTES), table.num_rows))
    size = math.ceil(table.num_rows / parts) if table.num_rows else 0

    def write(index: int) -> None:
        pq.write_table(table.slice(index * size, size) if parts > 1 else table, path / f"part-{index:05d}.parquet",
                       coerce_timestamps="us", allow_truncated_timestamps=True)

    with ThreadPoolExecutor(max_workers=parts) as pool:
        list(pool.map(write, range(parts)))


def _local_cores(master: str) -> int:
    """The cores ``local[N]`` / ``local[*]`` / ``local`` uses."""
    inside = master.strip()[len("local["):-1] if master.strip().startswith("local[") else "1"
    count = inside.split(",")[0].strip()
    return (os.cpu_count() or 1) if count == "*" else max(1, int(count)) if count.isdigit() else 1


def _address_towards(master: str) -> str:
    """This machine's address on the route to the standalone master (what its executors reach
    the driver at); 127.0.0.1 for a master on this machine's loopback."""
    parts = urlsplit(master.split(",")[0])
    host, port = parts.hostname or "127.0.0.1", parts.port or 7077
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((host, port))  # no packet is sent: this only picks the route
            return probe.getsockname()[0]
    except OSError:
        return socket.gethostname()


def _connect_unavailable(error: Exception) -> bool:
    """True for a Spark Connect error that means the server cannot be reached."""
    import grpc

    if isinstance(error, grpc.RpcError) and callable(getattr(error, "code", None)):
        return error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
    code = getattr(error, "getGrpcStatusCode", None)
    if callable(code) and code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return True
    condition = getattr(error, "getCondition", None)
    return callable(condition) and (condition() or "") == "RETRIES_EXCEEDED"


def _message(error: Exception) -> str:
    """Spark's message of a pyspark error, without the query plan it may append."""
    text = str(error).strip().split("\n\nJVM stacktrace:")[0].rstrip()
    head, separator, _plan = text.partition(";\n")
    return head + (";" if separator else "")


def _first_line(error: object) -> str:
    if callable(getattr(error, "code", None)) and callable(getattr(error, "details", None)):  # a gRPC error
        return f"{error.code().name}: {error.details()}"
    text = str(error).strip()
    details = re.search(r'details = "([^"]*)"', text)  # a gRPC error as pyspark wraps it
    if details is not None and callable(getattr(error, "getGrpcStatusCode", None)):
        return f"{error.getGrpcStatusCode().name}: {details.group(1)}"
    return text.splitlines()[0] if text else type(error).__name__


_node_lock = threading.Lock()
_node_runtime: SparkRuntime | None = None


def node_runtime() -> SparkRuntime:
    """This process's runtime: the one ``configure_node_runtime`` set up, else one with the
    default settings (``local[*]``, staging in a temporary directory)."""
    global _node_runtime
    with _node_lock:
        if _node_runtime is None:
            _node_runtime = SparkRuntime(SparkSettings(), None)
        return _node_runtime


def configure_node_runtime(settings: SparkSettings, data_dir: Path | None, app_name: str = "flowsite") -> None:
    """Make ``node_runtime()`` a runtime of ``settings`` over ``data_dir`` (the node's data
    directory); a previous runtime is stopped. Nothing starts until a job runs."""
    global _node_runtime
    with _node_lock:
        previous, _node_runtime = _node_runtime, SparkRuntime(settings, data_dir, app_name)
    if previous is not None:
        previous.stop()
