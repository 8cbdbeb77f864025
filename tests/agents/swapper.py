"""A process that swaps a directory and a symlink to outside, as fast as it can (race tests).

Run as ``python swapper.py <directory> <stop file>``: in ``<directory>``, ``d`` (a directory)
and ``d_link`` (a symlink to a directory outside) trade names atomically
(``renameat2(RENAME_EXCHANGE)``) until ``<stop file>`` exists; where the kernel lacks that,
by plain renames (``d`` is then missing for a moment). Prints the number of swaps on exit.
Tests start it with :func:`start_swapper`.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

AT_FDCWD = -100
RENAME_EXCHANGE = 2
_LIMIT_S = 60.0
"""Never outlive a test that forgot to stop it by more than this."""


@dataclass
class Swapper:
    process: subprocess.Popen[str]
    stop_file: Path

    def stop(self) -> int:
        """Stop it (killed if it does not stop in time); the number of swaps it made."""
        self.stop_file.touch()
        try:
            out, _ = self.process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()
            raise
        return int(out.split()[0])


def start_swapper(directory: Path, stop_file: Path) -> Swapper:
    """The swapper running on ``directory``, once it has swapped ``d`` at least once."""
    process = subprocess.Popen(
        [sys.executable, __file__, str(directory), str(stop_file)],
        stdout=subprocess.PIPE,
        text=True,
    )
    swapper = Swapper(process, stop_file)
    deadline = time.monotonic() + 10
    while not (directory / "d").is_symlink():
        if time.monotonic() > deadline or process.poll() is not None:
            swapper.stop()
            raise AssertionError("the swapper never swapped")
        time.sleep(0.001)
    return swapper


def _exchange(libc: ctypes.CDLL, parent: int) -> bool:
    result = libc.renameat2(parent, b"d", parent, b"d_link", RENAME_EXCHANGE)
    return bool(result == 0)


def _renames(parent: int) -> None:
    os.rename("d", "d_parked", src_dir_fd=parent, dst_dir_fd=parent)
    os.rename("d_link", "d", src_dir_fd=parent, dst_dir_fd=parent)
    os.rename("d", "d_link", src_dir_fd=parent, dst_dir_fd=parent)
    os.rename("d_parked", "d", src_dir_fd=parent, dst_dir_fd=parent)


def main(workspace: str, stop: str) -> int:
    parent = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY)
    libc = ctypes.CDLL(None, use_errno=True)
    exchange = getattr(libc, "renameat2", None) is not None and _exchange(libc, parent)
    swaps = 1 if exchange else 0
    deadline = time.monotonic() + _LIMIT_S
    while True:
        for _ in range(256):
            if exchange:
                _exchange(libc, parent)
            else:
                _renames(parent)
            swaps += 1
        if os.path.exists(stop) or time.monotonic() > deadline:
            break
    print(swaps, "exchange" if exchange else "renames", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
