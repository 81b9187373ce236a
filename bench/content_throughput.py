"""Content repository throughput beside bare sequential file I/O of the same bytes.

Run with ``python -m bench.content_throughput``. For each content size the repository writes
the contents (then fdatasyncs its files) and reads them back; the bare side writes the same
chunks with ``os.write`` to one file (then fdatasyncs it) and reads them with ``os.readv``.
Both sides read what they just wrote, so both read from the page cache; a read figure is
the best of three passes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from bench.machine import describe_machine
from engine.content.claims import ResourceClaimManager
from engine.content.config import ContentConfig
from engine.content.repository import ContentRepository
from engine.flowfile import ContentClaim

CHUNK = 1 << 20
READ_PASSES = 3
SIZE_CLASSES = ((1 << 10, 512 << 20), (1 << 20, 1 << 30), (256 << 20, 1 << 30))


@dataclass(frozen=True)
class Figures:
    """Seconds spent writing (data plus final sync) and reading one size class."""

    write: float
    read: float


def _chunks(size: int, block: bytes) -> list[memoryview]:
    """``size`` bytes as pieces of at most one chunk, all cut from ``block``."""
    view = memoryview(block)
    whole, rest = divmod(size, CHUNK)
    return [view] * whole + ([view[:rest]] if rest else [])


def bench_repository(directory: Path, size: int, count: int, block: bytes) -> Figures:
    """Write ``count`` contents of ``size`` bytes through the repository and read them back."""
    claims = ResourceClaimManager()
    repository = ContentRepository({"bench": directory}, claims, ContentConfig())
    pieces = _chunks(size, block)
    written: list[ContentClaim] = []
    start = time.perf_counter()
    for _ in range(count):
        writer = repository.open_writer()
        for piece in pieces:
            writer.write(piece)
        written.append(writer.close())
    repository.sync({claim.resource_claim for claim in written})
    write_seconds = time.perf_counter() - start

    buffer = memoryview(bytearray(min(size, CHUNK)))
    read_seconds = float("inf")
    for _ in range(READ_PASSES):
        start = time.perf_counter()
        for claim in written:
            if size <= CHUNK:
                repository.read_bytes(claim)
                continue
            with repository.open_reader(claim) as reader:
                while reader.readinto(buffer):
                    pass
        read_seconds = min(read_seconds, time.perf_counter() - start)
    repository.close()
    return Figures(write_seconds, read_seconds)


def bench_bare(directory: Path, size: int, count: int, block: bytes) -> Figures:
    """The same bytes written sequentially to one file with os.write and read with os.readv."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "bare"
    pieces = _chunks(size, block)
    start = time.perf_counter()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
    try:
        for _ in range(count):
            for piece in pieces:
                os.write(fd, piece)
        os.fdatasync(fd)
    finally:
        os.close(fd)
    write_seconds = time.perf_counter() - start

    buffer = memoryview(bytearray(min(size, CHUNK)))
    read_seconds = float("inf")
    for _ in range(READ_PASSES):
        start = time.perf_counter()
        fd = os.open(path, os.O_RDONLY)
        try:
            for _ in range(count):
                if size <= CHUNK:
                    os.read(fd, size)
                    continue
                remaining = size
                while remaining:
                    got = os.readv(fd, [buffer[: min(remaining, CHUNK)]])
                    if not got:
                        raise EOFError(f"{path} ended {remaining} bytes early")
                    remaining -= got
        finally:
            os.close(fd)
        read_seconds = min(read_seconds, time.perf_counter() - start)
    return Figures(write_seconds, read_seconds)


def _rate(total: int, seconds: float) -> float:
    return total / seconds / (1 << 20)


def _label(size: int) -> str:
    return f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"


def main(argv: list[str] | None = None) -> None:
    """Run every size class and print repository, bare and ratio figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dir", type=Path, default=Path(f".data/content-bench-{os.getpid()}"), help="scratch directory (deleted)"
    )
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the default totals")
    options = parser.parse_args(argv)

    print(describe_machine(Path(".")))
    print(
        "writes include a final fdatasync on both sides; reads come from the page cache on both sides "
        f"(best of {READ_PASSES} passes)"
    )
    print(f"{'content':>8} {'total':>9} | {'write MB/s':>10} {'bare':>8} {'ratio':>6} | "
          f"{'read MB/s':>10} {'bare':>8} {'ratio':>6}")
    block = os.urandom(CHUNK)
    root = options.dir
    try:
        for size, total in SIZE_CLASSES:
            count = max(1, int(total * options.scale) // size)
            data = size * count
            shutil.rmtree(root, ignore_errors=True)
            repository = bench_repository(root / "repository", size, count, block)
            bare = bench_bare(root / "bare", size, count, block)
            write, bare_write = _rate(data, repository.write), _rate(data, bare.write)
            read, bare_read = _rate(data, repository.read), _rate(data, bare.read)
            print(
                f"{_label(size):>8} {data >> 20:>5} MiB | {write:>10.0f} {bare_write:>8.0f} "
                f"{write / bare_write:>6.0%} | {read:>10.0f} {bare_read:>8.0f} {read / bare_read:>6.0%}",
                flush=True,
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
