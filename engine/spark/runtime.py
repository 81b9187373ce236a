"""The node's SparkSession (stand-in of the runtime contract: local mode, Arrow hand-over)."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Callable, TypeVar

import pyarrow as pa

from engine.spark.settings import SparkSettings

__all__ = ["SparkQueryError", "SparkRuntime", "SparkUnavailableError", "configure_node_runtime", "node_runtime"]

T = TypeVar("T")


class SparkUnavailableError(Exception):
    """Spark could not run the job (its JVM died, its master is unreachable)."""


class SparkQueryError(Exception):
    """The job itself is wrong (SQL syntax, unknown column)."""


class SparkRuntime:
    """One lazily created SparkSession, restarted after a failure."""

    def __init__(self, settings: SparkSettings, data_dir: Path | None = None, app_name: str = "flowsite") -> None:
        self.settings = settings
        self.data_dir = data_dir
        self.app_name = app_name
        self._lock = threading.RLock()
        self._session = None

    def session(self):
        """The SparkSession, created on first use."""
        with self._lock:
            if self._session is None:
                from pyspark.sql import SparkSession

                builder = SparkSession.builder.master(self.settings.master).appName(self.app_name)
                builder = builder.config("spark.ui.enabled", str(self.settings.ui_enabled).lower())
                builder = builder.config("spark.driver.memory", self.settings.driver_memory)
                builder = builder.config("spark.sql.session.timeZone", "UTC")
                for key, value in self.settings.conf.items():
                    builder = builder.config(key, value)
                self._session = builder.getOrCreate()
            return self._session

    def run(self, job: Callable[..., T]) -> T:
        """``job(session)``, its failures mapped to SparkUnavailableError or SparkQueryError."""
        with self._lock:
            try:
                session = self.session()
                return job(session)
            except (SparkQueryError, SparkUnavailableError):
                raise
            except Exception as error:
                if _is_query_error(error):
                    raise SparkQueryError(str(error).split("\n")[0]) from error
                self._discard()
                raise SparkUnavailableError(f"{type(error).__name__}: {error}") from error

    @contextlib.contextmanager
    def frame(self, session, table: pa.Table):
        """A DataFrame over ``table``."""
        yield session.createDataFrame(table)

    def collect(self, frame, *, size_hint: int | None = None) -> pa.Table:
        """The rows of ``frame`` as an Arrow table."""
        return frame.toArrow()

    @property
    def ui_url(self) -> str | None:
        """None: the stand-in has no UI."""
        return None

    def stop(self) -> None:
        """Stop the session."""
        with self._lock:
            if self._session is not None:
                try:
                    self._session.stop()
                finally:
                    self._session = None

    def _discard(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            with contextlib.suppress(Exception):
                session.stop()
            with contextlib.suppress(Exception):
                from pyspark import SparkContext

                SparkContext._active_spark_context = None
                SparkContext._gateway = None
                SparkContext._jvm = None


def _is_query_error(error: BaseException) -> bool:
    try:
        from pyspark.errors import AnalysisException, ParseException, PythonException
        from pyspark.errors.exceptions.base import ArithmeticException, NumberFormatException
    except ImportError:
        return False
    known = (AnalysisException, ParseException, PythonException, ArithmeticException, NumberFormatException)
    if isinstance(error, known):
        return True
    name = type(error).__name__
    return name in ("SparkRuntimeException", "IllegalArgumentException", "DateTimeException",
                    "SparkUpgradeException", "ArrayIndexOutOfBoundsException")


_runtime: SparkRuntime | None = None
_runtime_lock = threading.Lock()


def configure_node_runtime(settings: SparkSettings, data_dir: Path | None = None, app_name: str = "flowsite") -> None:
    """Set up the process's runtime (stopping one set up before)."""
    global _runtime
    with _runtime_lock:
        if _runtime is not None:
            _runtime.stop()
        _runtime = SparkRuntime(settings, data_dir, app_name)


def node_runtime() -> SparkRuntime:
    """The process's runtime (a local[*] one unless configured)."""
    global _runtime
    with _runtime_lock:
        if _runtime is None:
            _runtime = SparkRuntime(SparkSettings())
        return _runtime
