"""Confined file access: opening, reading, writing and listing beneath one directory, race-free.

A :class:`ConfinedDir` holds a directory open and resolves relative paths beneath it one
component at a time: every directory is opened relative to the one before it (``dir_fd``)
with ``O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC``, the last component with ``O_NOFOLLOW``. No path
is resolved to a string first and opened later, so a process that swaps a directory for a
symlink while a path is being walked cannot redirect the access: the kernel never follows a
symlink on the way, the descriptors held are the check. (Linux's ``openat2`` with
``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`` does the same in one call, but Python's standard
library has no binding for it; the walk is portable and fast enough.) Where the kernel has
``O_PATH`` the walk uses it, so a directory that may be searched but not listed can still be
passed through, as with ordinary path lookup.

Paths (:func:`split_path`) are relative and ``/``-separated, without ``..``, NUL characters
or empty components; ``.`` components are dropped and one trailing ``/`` is allowed.

Symlinks, by the handle's policy:

- ``"refuse"``: a symlink anywhere on the way is refused (:class:`SymlinkRefused`). Replacing
  a file (:meth:`ConfinedDir.replace`) replaces a symlink found at its name, never its target.
- ``"within"``: a symlink is resolved here, not by the kernel: its target is read
  (``readlinkat``) and walked from the directories already held open, a ``..`` stepping back
  to the held parent. One that leads out of the directory is refused (:class:`PathEscapes`).

Hard links: a regular file whose link count is above 1 is refused (:class:`HardlinkRefused`)
unless the handle allows them — for reads and appends from ``fstat`` of the opened descriptor,
so it cannot race; an atomic replacement never writes into the old file, and refuses to
replace a hard-linked one all the same.

Limit: a directory already held open that another process *moves* elsewhere stays held
(``openat2`` behaves the same); moving it needs write access to both places, so it gives the
mover nothing it could not write anyway.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import secrets
import shutil
import stat
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Literal, TypeAlias

from clawline.errors import InvalidInput

Symlinks: TypeAlias = Literal["refuse", "within"]
DirStatus: TypeAlias = Literal["dir", "missing", "symlink", "not-dir"]
EntryKind: TypeAlias = Literal["dir", "file", "symlink", "other"]

HARDLINK_REFUSED = "file has more than one hard link"
MAX_SYMLINK_HOPS = 40
"""Symlinks followed for one path (policy ``within``), as the kernel's ``ELOOP`` limit."""

_O_PATH: int = getattr(os, "O_PATH", 0)
_DIR_FLAGS = (_O_PATH or os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LIST_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_FILE_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK
"""``O_NONBLOCK``: opening a FIFO must not wait for a writer (it is then refused by type)."""
_LINK_ERRNOS = frozenset({errno.ELOOP, errno.EMLINK, errno.ENOTDIR})
"""What ``O_NOFOLLOW`` answers for a symlink: Linux ``ELOOP`` (``ENOTDIR`` with
``O_DIRECTORY``), FreeBSD ``EMLINK``."""


class ConfinedPathError(InvalidInput):
    """A path cannot be used beneath the directory; ``str(error)`` is the user-facing text."""


class PathSyntaxError(ConfinedPathError):
    """Not a relative path: not a string, absolute, with ``..``, NUL or an empty component."""


class SymlinkRefused(ConfinedPathError):
    """A symlink on the way (policy ``refuse``, or one appearing while a path is opened), or
    more than :data:`MAX_SYMLINK_HOPS` of them."""


class PathEscapes(SymlinkRefused):
    """A symlink leads outside the directory (policy ``within``)."""


class HardlinkRefused(ConfinedPathError):
    """A regular file with more than one hard link, where they are not allowed."""


class NotRegularFile(ConfinedPathError):
    """Not a regular file: a directory (``is_directory``), FIFO, socket or device."""

    def __init__(self, message: str, *, is_directory: bool = False) -> None:
        super().__init__(message)
        self.is_directory = is_directory


def _is_drive(text: str) -> bool:
    return len(text) > 1 and text[0].isalpha() and text[1] == ":" and text[2:3] in ("", "\\", "/")


def split_path(raw: object, *, allow_root: bool = False) -> tuple[str, ...]:
    """The components of the relative path ``raw``; raises :class:`PathSyntaxError`.

    ``allow_root`` accepts an empty path or ``.`` as the directory itself (``()``).
    """
    if not isinstance(raw, str):
        raise PathSyntaxError("path must be a string")
    if "\x00" in raw:
        raise PathSyntaxError("path must not contain NUL characters")
    if raw.startswith(("/", "\\")) or _is_drive(raw):
        raise PathSyntaxError(f"path must be relative to the workspace: {raw}")
    parts = raw.removesuffix("/").split("/") if raw else []
    if ".." in parts or ".." in raw.split("\\"):
        raise PathSyntaxError(f"path must not contain '..': {raw}")
    if "" in parts:
        raise PathSyntaxError(f"path must not contain empty components: {raw}")
    kept = tuple(part for part in parts if part != ".")
    if not kept and not allow_root:
        raise PathSyntaxError("path must name a file inside the workspace")
    return kept


@dataclass(frozen=True, slots=True)
class Entry:
    """One directory entry, never followed; the numbers are those of a regular file."""

    name: str
    kind: EntryKind
    size: int = 0
    nlink: int = 1
    mtime_ns: int = 0
    ctime_ns: int = 0


def _entry(item: os.DirEntry[str]) -> Entry:
    if item.is_symlink():
        return Entry(item.name, "symlink")
    if item.is_dir(follow_symlinks=False):
        return Entry(item.name, "dir")
    if item.is_file(follow_symlinks=False):
        info = item.stat(follow_symlinks=False)
        return Entry(
            item.name, "file", info.st_size, info.st_nlink, info.st_mtime_ns, info.st_ctime_ns
        )
    return Entry(item.name, "other")


def _link_target(parent: int, name: str) -> str | None:
    """The target of the symlink ``name`` in ``parent``; ``None`` when it is none."""
    try:
        return os.readlink(name, dir_fd=parent)
    except OSError:
        return None


def _open_dir(parent: int, name: str) -> int | str:
    """The directory ``name`` of ``parent`` opened, or the target text when it is a symlink."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as error:
        if error.errno not in _LINK_ERRNOS:
            raise
        target = _link_target(parent, name)
        if target is None:
            raise
        return target


def _inside(root: Path, target: str) -> list[str] | None:
    """The components of the absolute symlink target ``target`` below ``root``, or ``None``
    when it names a place outside it (``..`` is not folded: it is walked)."""
    parts = [part for part in target.split("/") if part not in ("", ".")]
    prefix = list(root.parts[1:])
    if parts[: len(prefix)] != prefix:
        return None
    return parts[len(prefix) :]


class _Cursor:
    """The directories held open from the root down to the current one."""

    __slots__ = ("_fds", "names")

    def __init__(self, root_fd: int) -> None:
        self._fds = [root_fd]
        self.names: list[str] = []

    @property
    def fd(self) -> int:
        return self._fds[-1]

    def enter(self, fd: int, name: str) -> None:
        self._fds.append(fd)
        self.names.append(name)

    def up(self) -> bool:
        """Back to the parent; ``False`` at the root."""
        if not self.names:
            return False
        os.close(self._fds.pop())
        self.names.pop()
        return True

    def reset(self) -> None:
        while self.up():
            pass

    def take(self) -> int:
        """The current directory's descriptor, now owned by the caller."""
        if not self.names:
            return os.dup(self._fds[0])
        self.names.pop()
        return self._fds.pop()

    def relative(self, name: str | None = None) -> str:
        """The path walked (symlinks resolved), plus ``name``; ``.`` for the root."""
        return "/".join([*self.names, name] if name is not None else self.names) or "."

    def __enter__(self) -> _Cursor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.reset()


class ConfinedDir:
    """A directory held open (``fd``, owned); every path given is resolved beneath it.

    ``path`` is where it was opened (for results, and for absolute symlink targets under
    policy ``within``). Use as a context manager, or :meth:`close` it.
    """

    def __init__(
        self,
        fd: int,
        path: Path,
        *,
        symlinks: Symlinks = "refuse",
        allow_hardlinks: bool = False,
    ) -> None:
        self._fd = fd
        self.path = path
        self.symlinks: Symlinks = symlinks
        self.allow_hardlinks = allow_hardlinks

    @classmethod
    def open(
        cls,
        path: Path,
        *,
        create: bool = False,
        mode: int = 0o700,
        symlinks: Symlinks = "refuse",
        allow_hardlinks: bool = False,
    ) -> ConfinedDir:
        """The directory at the absolute ``path``, walked from ``/`` without following any
        symlink: ``path`` must be a real path — resolve it once where it is checked, and open
        what was checked. Missing directories are created (``mode``) when ``create``.

        Raises :class:`SymlinkRefused` (a symlink on the way), :class:`PathSyntaxError` (not
        absolute), ``FileNotFoundError``/``NotADirectoryError``.
        """
        if not path.is_absolute() or ".." in path.parts:
            raise PathSyntaxError(f"not an absolute real path: {path}")
        top = cls(os.open("/", _DIR_FLAGS), Path("/"))
        with top:
            try:
                cursor, _ = top._locate(
                    tuple(path.parts[1:]), str(path), create=create, mode=mode, directory=True
                )
            except SymlinkRefused:
                raise SymlinkRefused(f"directory is reached through a symlink: {path}") from None
            with cursor:
                fd = cursor.take()
        return cls(fd, path, symlinks=symlinks, allow_hardlinks=allow_hardlinks)

    def fileno(self) -> int:
        return self._fd

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> ConfinedDir:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- walking

    def _locate(
        self,
        parts: Sequence[str],
        shown: str,
        *,
        create: bool = False,
        mode: int = 0o777,
        directory: bool = False,
        follow_last: bool = True,
    ) -> tuple[_Cursor, str | None]:
        """Walk ``parts``: the cursor holds the directory of the last component, returned by
        name (``None``: the path is that directory itself). ``directory``: every component
        is a directory, walked into. Missing directories are made (``mode``) when
        ``create``. Under policy ``within`` a symlink at the last component is followed too
        unless ``not follow_last``. The caller closes the cursor."""
        pending = deque(parts)
        cursor = _Cursor(self._fd)
        hops = 0
        try:
            while pending:
                name = pending.popleft()
                if name == "..":  # only ever from a symlink target
                    if not cursor.up():
                        raise PathEscapes(f"path resolves outside the workspace: {shown}")
                    continue
                if name in ("", "."):
                    continue
                if not pending and not directory:
                    target = None
                    if self.symlinks == "within" and follow_last:
                        target = _link_target(cursor.fd, name)
                    if target is None:
                        return cursor, name
                    hops = self._follow(cursor, pending, target, hops, shown)
                    continue
                try:
                    opened = _open_dir(cursor.fd, name)
                except FileNotFoundError:
                    if not create:
                        raise
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, mode, dir_fd=cursor.fd)
                    opened = _open_dir(cursor.fd, name)
                if isinstance(opened, str):
                    hops = self._follow(cursor, pending, opened, hops, shown)
                else:
                    cursor.enter(opened, name)
            return cursor, None
        except BaseException:
            cursor.reset()
            raise

    def _follow(
        self, cursor: _Cursor, pending: deque[str], target: str, hops: int, shown: str
    ) -> int:
        """Put a symlink's target in front of what is left to walk (policy ``within``)."""
        if self.symlinks != "within":
            raise SymlinkRefused(f"path must not pass through a symlink: {shown}")
        hops += 1
        if hops > MAX_SYMLINK_HOPS:
            raise SymlinkRefused(f"too many levels of symbolic links: {shown}")
        if target.startswith("/"):
            inner = _inside(self.path, target)
            if inner is None:
                raise PathEscapes(f"path resolves outside the workspace: {shown}")
            cursor.reset()
            pending.extendleft(reversed(inner))
        else:
            pending.extendleft(reversed(target.split("/")))
        return hops

    def _open_last(
        self, cursor: _Cursor, name: str, flags: int, shown: str, mode: int = 0o666
    ) -> int:
        try:
            return os.open(name, flags | _FILE_FLAGS, mode, dir_fd=cursor.fd)
        except IsADirectoryError:
            raise NotRegularFile(f"is a directory: {shown}", is_directory=True) from None
        except OSError as error:
            if error.errno in _LINK_ERRNOS and _link_target(cursor.fd, name) is not None:
                raise SymlinkRefused(f"path must not pass through a symlink: {shown}") from None
            raise

    def _check_file(self, info: os.stat_result, shown: str) -> None:
        if stat.S_ISDIR(info.st_mode):
            raise NotRegularFile(f"is a directory: {shown}", is_directory=True)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(f"not a regular file: {shown}")
        if info.st_nlink > 1 and not self.allow_hardlinks:
            raise HardlinkRefused(f"{HARDLINK_REFUSED}: {shown}")

    # -- directories

    def opendir(
        self,
        rel: str,
        *,
        create: bool = False,
        mode: int = 0o700,
        symlinks: Symlinks | None = None,
    ) -> ConfinedDir:
        """The directory ``rel`` as a handle of its own (this one's policies unless
        ``symlinks`` is given); missing directories are made (``mode``) when ``create``."""
        parts = split_path(rel, allow_root=True)
        cursor, _ = self._locate(parts, rel, create=create, mode=mode, directory=True)
        with cursor:
            path = self.path.joinpath(*cursor.names)
            fd = cursor.take()
        return ConfinedDir(
            fd,
            path,
            symlinks=self.symlinks if symlinks is None else symlinks,
            allow_hardlinks=self.allow_hardlinks,
        )

    def make_new_dir(self, rel: str, *, mode: int = 0o700) -> str:
        """Create the directory ``rel``, which must not exist (``FileExistsError``); its
        missing parents are made too. Returns its path beneath this directory."""
        cursor, name = self._locate(split_path(rel), rel, create=True, mode=mode, follow_last=False)
        with cursor:
            assert name is not None  # split_path gave at least one component
            os.mkdir(name, mode, dir_fd=cursor.fd)
            return cursor.relative(name)

    def status(self, rel: str) -> DirStatus:
        """Whether ``rel`` is a directory reached without a symlink (under policy
        ``refuse``; one leading outside under ``within``)."""
        try:
            cursor, _ = self._locate(split_path(rel, allow_root=True), rel, directory=True)
        except SymlinkRefused:
            return "symlink"
        except NotADirectoryError:
            return "not-dir"
        except OSError:
            return "missing"
        cursor.reset()
        return "dir"

    def lstat(self, rel: str) -> os.stat_result:
        """``rel``'s own status (a symlink at its name is not followed)."""
        cursor, name = self._locate(split_path(rel, allow_root=True), rel, follow_last=False)
        with cursor:
            if name is None:
                return os.fstat(cursor.fd)
            return os.stat(name, dir_fd=cursor.fd, follow_symlinks=False)

    def entries(self, rel: str = "", *, limit: int | None = None) -> tuple[str, list[Entry]]:
        """The entries of the directory ``rel`` (at most ``limit``, in directory order) and
        its path beneath this directory."""
        cursor, _ = self._locate(split_path(rel, allow_root=True), rel, directory=True)
        with cursor:
            fd = os.open(".", _LIST_FLAGS, dir_fd=cursor.fd)  # the walk may hold O_PATH ones
            try:
                with os.scandir(fd) as listing:
                    items = listing if limit is None else itertools.islice(listing, limit)
                    found = [_entry(item) for item in items]
            finally:
                os.close(fd)
            return cursor.relative(), found

    def remove_tree(self, rel: str) -> None:
        """Remove ``rel`` and everything below it; a symlink at its name is an error
        (``shutil.rmtree`` with ``dir_fd`` never follows one)."""
        cursor, name = self._locate(split_path(rel), rel, follow_last=False)
        with cursor:
            assert name is not None
            shutil.rmtree(name, dir_fd=cursor.fd)

    # -- files

    def open_file(self, rel: str) -> tuple[BinaryIO, str]:
        """``rel`` opened for reading, and its path beneath this directory (symlinks
        resolved). Raises :class:`NotRegularFile`, :class:`HardlinkRefused`,
        :class:`SymlinkRefused` (:class:`PathEscapes`), ``FileNotFoundError``/
        ``NotADirectoryError``."""
        cursor, name = self._locate(split_path(rel), rel)
        with cursor:
            if name is None:
                raise NotRegularFile(f"is a directory: {rel}", is_directory=True)
            fd = self._open_last(cursor, name, os.O_RDONLY, rel)
            try:
                self._check_file(os.fstat(fd), rel)
                handle = os.fdopen(fd, "rb")
            except BaseException:
                os.close(fd)
                raise
            return handle, cursor.relative(name)

    def replace(
        self,
        rel: str,
        content: bytes | Iterable[bytes],
        *,
        parents: bool = True,
        mode: int = 0o644,
        dir_mode: int = 0o777,
        durable: bool = True,
    ) -> str:
        """Write ``rel`` atomically: into a new file of the same directory, renamed over the
        old one (whose permission bits it keeps), so a reader sees the old content or the new
        and a hard link to the old file is never written through. ``durable``: the data is
        on disk (``fsync``) before the rename. Missing parents are made (``dir_mode``) when
        ``parents``. Returns the path beneath this directory."""
        cursor, name = self._locate(split_path(rel), rel, create=parents, mode=dir_mode)
        with cursor:
            if name is None:
                raise NotRegularFile(f"is a directory: {rel}", is_directory=True)
            kept_mode = self._replaced_mode(cursor.fd, name, rel)
            temp = f".clawline-{secrets.token_hex(8)}.tmp"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(temp, flags, mode, dir_fd=cursor.fd)
            try:
                with os.fdopen(fd, "wb") as handle:
                    for chunk in [content] if isinstance(content, bytes) else content:
                        handle.write(chunk)
                    handle.flush()
                    if kept_mode is not None:
                        os.fchmod(handle.fileno(), kept_mode)
                    if durable:
                        os.fsync(handle.fileno())
                os.rename(temp, name, src_dir_fd=cursor.fd, dst_dir_fd=cursor.fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=cursor.fd)
                raise
            return cursor.relative(name)

    def _replaced_mode(self, parent: int, name: str, shown: str) -> int | None:
        """The permission bits of the file a replacement takes the place of (``None``: no
        file, or a symlink, which is replaced itself)."""
        try:
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(info.st_mode):
            return None
        self._check_file(info, shown)
        return stat.S_IMODE(info.st_mode)

    def append(
        self,
        rel: str,
        data: bytes,
        *,
        parents: bool = True,
        mode: int = 0o644,
        dir_mode: int = 0o777,
    ) -> str:
        """Append ``data`` to ``rel`` (created when missing). Returns its path."""
        cursor, name = self._locate(split_path(rel), rel, create=parents, mode=dir_mode)
        with cursor:
            if name is None:
                raise NotRegularFile(f"is a directory: {rel}", is_directory=True)
            fd = self._open_last(cursor, name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, rel, mode)
            with os.fdopen(fd, "wb") as handle:
                self._check_file(os.fstat(fd), rel)
                handle.write(data)
            return cursor.relative(name)

    def create(self, rel: str, data: bytes, *, mode: int = 0o600) -> str:
        """Write the new file ``rel`` (``FileExistsError`` when anything is at its name);
        its directory must exist. Returns its path."""
        cursor, name = self._locate(split_path(rel), rel, follow_last=False)
        with cursor:
            assert name is not None
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
            fd = self._open_last(cursor, name, flags, rel, mode)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            return cursor.relative(name)
