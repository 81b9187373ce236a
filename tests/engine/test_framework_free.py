"""The engine imports and runs with no web framework installed, and importing it starts no Spark."""

import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"django", "rest_framework", "channels", "celery", "guardian"}:
            raise ImportError(f"{name} must not be imported by the engine")
sys.meta_path.insert(0, Refuse())
import pkgutil, importlib, engine
for module in pkgutil.walk_packages(engine.__path__, "engine."):
    importlib.import_module(module.name)
print("ok")
"""

#: Every engine module imports without pyspark (nor py4j, its JVM bridge): only engine/spark
#: may use it, and only inside functions run when a Spark-backed component works.
NO_SPARK_PROBE = """
import sys
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"pyspark", "py4j"}:
            raise ImportError(f"{name} must not be imported when the engine's modules are")
sys.meta_path.insert(0, Refuse())
import pkgutil, importlib, engine
modules = [module.name for module in pkgutil.walk_packages(engine.__path__, "engine.")]
for name in modules:
    importlib.import_module(name)
assert "engine.spark.runtime" in modules
print("ok")
"""


def test_every_engine_module_imports_without_django():
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_every_engine_module_imports_without_pyspark():
    result = subprocess.run([sys.executable, "-c", NO_SPARK_PROBE], cwd=REPO_ROOT, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
