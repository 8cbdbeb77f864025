"""The SQLite store's instance lock: ``flock`` on ``<database file>.lock``.

The kernel releases a ``flock`` when the last descriptor of its open file closes, that is when
the holder exits however it exits, so a lock that cannot be taken proves a live holder. The
descriptor is not inherited by child processes (agents the gateway starts), which would keep the
lock after the gateway died. The file holds the holder's description as JSON; it is rewritten
in place (a rename would put the description on a file nobody locks). Like every ``flock``, it
needs a local file system (NFS may not honour it).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import socket
from pathlib import Path

from clawline.errors import StoreUnavailable
from clawline.store.instance_lock import InstanceHolder, InstanceLock


def lock_path_for(database: Path) -> Path:
    return database.with_name(f"{database.name}.lock")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class SQLiteInstanceLock(InstanceLock):
    def __init__(self, database: Path) -> None:
        self.path = lock_path_for(database)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    async def _try_lock(self, holder: InstanceHolder) -> bool:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as error:
            raise StoreUnavailable(f"cannot open {self.path}: {error.strerror or error}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except OSError as error:
            os.close(fd)
            raise StoreUnavailable(f"cannot lock {self.path}: {error.strerror or error}") from None
        self._fd = fd
        await self.record(holder)
        return True

    async def _current_holder(self) -> InstanceHolder | None:
        try:
            text = self.path.read_bytes()
        except OSError:
            return None
        holder = InstanceHolder.decode(text)
        if holder is None:
            return None
        if holder.host == socket.gethostname() and not _alive(holder.pid):
            return None  # a dead holder's record, not yet replaced by the live one's
        return holder

    async def record(self, holder: InstanceHolder) -> None:
        if self._fd is None:
            raise StoreUnavailable(f"the instance lock {self.path} is not held")
        try:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, holder.encode() + b"\n", 0)
        except OSError as error:
            raise StoreUnavailable(f"cannot write {self.path}: {error.strerror or error}") from None

    async def watch(self) -> str:
        never: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        return await never

    async def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)  # nobody is named once it is free
        os.close(fd)  # closing the only descriptor releases the flock
