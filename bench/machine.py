"""The line every benchmark prints first: what machine and disk the figures come from."""

from __future__ import annotations

import os
import platform
import shutil
from pathlib import Path

import psutil


def _partition(directory: Path):
    return max(
        (p for p in psutil.disk_partitions(all=True) if str(directory.resolve()).startswith(p.mountpoint)),
        key=lambda p: len(p.mountpoint),
        default=None,
    )


def file_system_type(directory: Path) -> str:
    """The type of the file system that holds ``directory`` (``ext4``, ``tmpfs``, ...), or ""."""
    partition = _partition(directory)
    return partition.fstype if partition else ""


def describe_machine(directory: Path) -> str:
    """CPU count, memory, Python, load and the file system that holds ``directory``."""
    disk = shutil.disk_usage(directory)
    partition = _partition(directory)
    fs = f"{partition.fstype} on {partition.device}" if partition else "unknown file system"
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    return (
        f"machine: {os.cpu_count()} CPU(s) ({platform.processor() or platform.machine()}), "
        f"{psutil.virtual_memory().total / 2**30:.1f} GiB RAM, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}; disk: {fs}, {disk.free / 2**30:.0f} GiB free; "
        f"load average {load}"
    )
