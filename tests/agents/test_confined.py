"""The confined file access API on real directories: path syntax, symlinks under both
policies, hard links, atomic replacement, listings, special files."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from clawline.agents.confined import (
    HARDLINK_REFUSED,
    ConfinedDir,
    ConfinedPathError,
    HardlinkRefused,
    NotRegularFile,
    PathEscapes,
    PathSyntaxError,
    SymlinkRefused,
    Symlinks,
    split_path,
)
from clawline.agents.workspace import ensure_workspace


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """``ws/sub/inner.txt`` and ``outside/secret.txt`` next to it."""
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "inner.txt").write_text("inner")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret")
    return root


def read(root: ConfinedDir, rel: str) -> tuple[str, bytes]:
    handle, path = root.open_file(rel)
    with handle:
        return path, handle.read()


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (5, "path must be a string"),
        ("a\x00b", "path must not contain NUL characters"),
        ("/etc/passwd", "path must be relative to the workspace: /etc/passwd"),
        ("\\share", "path must be relative to the workspace: \\share"),
        ("C:/x", "path must be relative to the workspace: C:/x"),
        ("..", "path must not contain '..': .."),
        ("sub/../sub/inner.txt", "path must not contain '..': sub/../sub/inner.txt"),
        ("a\\..\\b", "path must not contain '..': a\\..\\b"),
        ("sub//inner.txt", "path must not contain empty components: sub//inner.txt"),
        ("", "path must name a file inside the workspace"),
        ("./", "path must name a file inside the workspace"),
    ],
)
def test_path_syntax_is_refused_with_a_typed_error(raw: object, message: str) -> None:
    with pytest.raises(PathSyntaxError) as caught:
        split_path(raw)
    assert str(caught.value) == message


def test_accepted_path_forms() -> None:
    assert split_path("./sub/inner.txt") == ("sub", "inner.txt")
    assert split_path("sub/") == ("sub",)
    assert split_path("a:b.txt") == ("a:b.txt",)
    assert split_path("", allow_root=True) == ()
    assert split_path(".", allow_root=True) == ()


def test_a_refused_path_changes_nothing(ws: Path, tmp_path: Path) -> None:
    before = sorted(p.name for p in tmp_path.iterdir())
    with ConfinedDir.open(ws) as root:
        for raw in ("../escape.txt", "/tmp/escape.txt", "x//y.txt"):
            with pytest.raises(PathSyntaxError):
                root.replace(raw, b"x")
            with pytest.raises(PathSyntaxError):
                root.append(raw, b"x")
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert sorted(p.name for p in ws.iterdir()) == ["sub"]


@pytest.mark.parametrize("link_at", ["first", "middle", "last"])
def test_policy_refuse_refuses_a_symlink_anywhere_in_the_path(ws: Path, link_at: str) -> None:
    (ws / "sub" / "deeper").mkdir()
    (ws / "sub" / "deeper" / "f.txt").write_text("f")
    paths = {
        "first": ("alias", ws / "sub", "alias/deeper/f.txt"),
        "middle": ("sub/alias", ws / "sub" / "deeper", "sub/alias/f.txt"),
        "last": ("sub/deeper/alias.txt", ws / "sub" / "deeper" / "f.txt", "sub/deeper/alias.txt"),
    }
    link, target, rel = paths[link_at]
    os.symlink(target, ws / link)  # a link that stays inside is refused all the same
    with ConfinedDir.open(ws) as root:
        with pytest.raises(SymlinkRefused) as caught:
            read(root, rel)
        assert str(caught.value) == f"path must not pass through a symlink: {rel}"
        with pytest.raises(SymlinkRefused):
            root.append(rel, b"x")
        if link_at != "last":
            with pytest.raises(SymlinkRefused):
                root.replace(rel, b"x")
            with pytest.raises(SymlinkRefused):
                root.entries(rel.rsplit("/", 1)[0])
            assert root.status(rel.rsplit("/", 1)[0]) == "symlink"
    assert (ws / "sub" / "deeper" / "f.txt").read_text() == "f"


def test_replacing_a_symlink_replaces_the_link_never_its_target(ws: Path, tmp_path: Path) -> None:
    secret = tmp_path / "outside" / "secret.txt"
    os.symlink(secret, ws / "planted.txt")
    with ConfinedDir.open(ws) as root:
        assert root.replace("planted.txt", b"mine") == "planted.txt"
    assert not (ws / "planted.txt").is_symlink()
    assert (ws / "planted.txt").read_bytes() == b"mine"
    assert secret.read_text() == "secret"


def test_policy_within_follows_links_that_stay_inside(ws: Path) -> None:
    os.symlink(ws / "sub", ws / "abs_link")
    os.symlink("sub/inner.txt", ws / "rel_link.txt")
    os.symlink("..", ws / "sub" / "up")
    os.symlink("rel_link.txt", ws / "chain.txt")
    with ConfinedDir.open(ws, symlinks="within") as root:
        assert read(root, "abs_link/inner.txt") == ("sub/inner.txt", b"inner")
        assert read(root, "rel_link.txt") == ("sub/inner.txt", b"inner")
        assert read(root, "sub/up/sub/inner.txt") == ("sub/inner.txt", b"inner")
        assert read(root, "chain.txt") == ("sub/inner.txt", b"inner")
        assert root.replace("abs_link/new.txt", b"n") == "sub/new.txt"
        assert root.entries("sub/up")[0] == "."
    assert (ws / "sub" / "new.txt").read_bytes() == b"n"


def test_policy_within_refuses_links_that_lead_outside(ws: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "outside", ws / "abs_out")
    os.symlink("../outside/secret.txt", ws / "rel_out.txt")
    os.symlink("../../outside", ws / "sub" / "deep_out")
    os.symlink(tmp_path / "ws" / ".." / "outside", ws / "dotted_out")
    os.symlink("loop_b", ws / "loop_a")
    os.symlink("loop_a", ws / "loop_b")
    with ConfinedDir.open(ws, symlinks="within") as root:
        for rel in ("abs_out/secret.txt", "rel_out.txt", "sub/deep_out/secret.txt"):
            with pytest.raises(PathEscapes) as caught:
                read(root, rel)
            assert str(caught.value) == f"path resolves outside the workspace: {rel}"
            with pytest.raises(PathEscapes):
                root.replace(rel, b"x")
        with pytest.raises(PathEscapes):
            read(root, "dotted_out/secret.txt")
        with pytest.raises(PathEscapes):
            root.replace("abs_out/new/file.txt", b"x")  # no directory is made outside
        with pytest.raises(SymlinkRefused) as loop:
            read(root, "loop_a")
        assert str(loop.value) == "too many levels of symbolic links: loop_a"
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["secret.txt"]
    assert (tmp_path / "outside" / "secret.txt").read_text() == "secret"


def test_the_root_itself_is_opened_without_following_a_symlink(ws: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "outside", tmp_path / "ws_link")
    with pytest.raises(SymlinkRefused) as caught:
        ConfinedDir.open(tmp_path / "ws_link")
    assert str(caught.value) == f"directory is reached through a symlink: {tmp_path / 'ws_link'}"
    with pytest.raises(SymlinkRefused):
        ConfinedDir.open(tmp_path / "ws_link" / "new", create=True)
    assert not (tmp_path / "outside" / "new").exists()
    with pytest.raises(SymlinkRefused):
        ensure_workspace(tmp_path / "ws_link")
    with pytest.raises(PathSyntaxError):
        ConfinedDir.open(Path("relative/ws"))
    made = ensure_workspace(tmp_path / "fresh" / "ws")
    assert made == tmp_path / "fresh" / "ws"
    assert stat.S_IMODE(made.stat().st_mode) == 0o700


@pytest.mark.parametrize("policy", ["refuse", "within"])
def test_hard_links_are_refused_unless_allowed(ws: Path, tmp_path: Path, policy: Symlinks) -> None:
    secret = tmp_path / "outside" / "secret.txt"
    os.link(secret, ws / "hard.txt")
    with ConfinedDir.open(ws, symlinks=policy) as root:
        for attempt in (
            lambda: read(root, "hard.txt"),
            lambda: root.append("hard.txt", b"pwned"),
            lambda: root.replace("hard.txt", b"pwned"),
        ):
            with pytest.raises(HardlinkRefused) as caught:
                attempt()
            assert str(caught.value) == f"{HARDLINK_REFUSED}: hard.txt"
    assert secret.read_text() == "secret"
    assert (ws / "hard.txt").stat().st_nlink == 2
    with ConfinedDir.open(ws, allow_hardlinks=True) as allowed:
        assert read(allowed, "hard.txt") == ("hard.txt", b"secret")
        allowed.replace("hard.txt", b"replaced")
    # A replacement is a new file: the other name keeps the old content.
    assert (ws / "hard.txt").read_bytes() == b"replaced"
    assert secret.read_text() == "secret"


def test_replace_is_atomic_and_keeps_the_permission_bits(ws: Path) -> None:
    target = ws / "sub" / "inner.txt"
    target.chmod(0o640)
    with ConfinedDir.open(ws) as root:
        assert root.replace("sub/inner.txt", [b"new ", b"content"]) == "sub/inner.txt"
        assert root.replace("made/on/the/way.txt", b"x") == "made/on/the/way.txt"
        with pytest.raises(FileNotFoundError):
            root.replace("missing/dir.txt", b"x", parents=False)
        with pytest.raises(NotRegularFile) as caught:
            root.replace("sub", b"x")
        assert caught.value.is_directory
    assert target.read_bytes() == b"new content"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in (ws / "sub").iterdir()) == ["inner.txt"]  # no temp file left


def test_a_failed_replacement_leaves_the_old_file_and_no_temp_file(ws: Path) -> None:
    def broken() -> Iterator[bytes]:
        yield b"half"
        raise RuntimeError("source broke")

    with ConfinedDir.open(ws) as root, pytest.raises(RuntimeError):
        root.replace("sub/inner.txt", broken())
    assert (ws / "sub" / "inner.txt").read_text() == "inner"
    assert sorted(p.name for p in (ws / "sub").iterdir()) == ["inner.txt"]


def test_special_files_are_not_opened_for_reading(ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    done = threading.Event()
    errors: list[BaseException] = []

    def attempt() -> None:
        try:
            with ConfinedDir.open(ws) as root:
                read(root, "pipe")
        except BaseException as error:
            errors.append(error)
        done.set()

    threading.Thread(target=attempt, daemon=True).start()
    assert done.wait(10), "opening a FIFO blocked"
    assert isinstance(errors[0], NotRegularFile)
    assert str(errors[0]) == "not a regular file: pipe"
    with ConfinedDir.open(ws) as root, pytest.raises(NotRegularFile) as caught:
        read(root, "sub")
    assert caught.value.is_directory


def test_listings_never_follow_and_report_kinds(ws: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "outside", ws / "out")
    os.mkfifo(ws / "pipe")
    with ConfinedDir.open(ws) as root:
        path, entries = root.entries("")
        kinds = {e.name: e.kind for e in entries}
        assert path == "."
        assert kinds == {"sub": "dir", "out": "symlink", "pipe": "other"}
        _, inner = root.entries("sub/")
        assert [(e.name, e.kind, e.size, e.nlink) for e in inner] == [("inner.txt", "file", 5, 1)]
        assert len(root.entries("", limit=2)[1]) == 2
        with pytest.raises(NotADirectoryError):
            root.entries("sub/inner.txt")
        assert root.status("sub") == "dir"
        assert root.status("missing") == "missing"
        assert root.status("sub/inner.txt") == "not-dir"


def test_new_directories_files_and_removal_never_follow(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    with ConfinedDir.open(ws) as root:
        assert root.make_new_dir("drop/box") == "drop/box"
        with pytest.raises(FileExistsError):
            root.make_new_dir("drop/box")
        assert root.create("drop/box/a.bin", b"a") == "drop/box/a.bin"
        with pytest.raises(FileExistsError):
            root.create("drop/box/a.bin", b"again")
        os.symlink(outside, ws / "drop" / "link")
        with pytest.raises(SymlinkRefused):
            root.create("drop/link/b.bin", b"b")
        with pytest.raises(OSError, match="symbolic link"):
            root.remove_tree("drop/link")
        root.remove_tree("drop")
        with ConfinedDir.open(ws / "sub") as sub:
            assert sub.path == ws / "sub"
        with root.opendir("sub", symlinks="within") as sub:
            assert (sub.path, sub.symlinks) == (ws / "sub", "within")
            assert read(sub, "inner.txt") == ("inner.txt", b"inner")
    assert not (ws / "drop").exists()
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def _try_everything(root: ConfinedDir, rel: str) -> int:
    """Every operation on ``rel``; how many were refused."""
    refused = 0
    for name, args in (
        ("open_file", ()),
        ("append", (b"",)),
        ("replace", (b"r",)),
        ("entries", ()),
        ("status", ()),
        ("opendir", ()),
    ):
        try:
            result = getattr(root, name)(rel, *args)
        except (OSError, ConfinedPathError):
            refused += 1
            continue
        if isinstance(result, ConfinedDir):
            result.close()
        elif isinstance(result, tuple) and hasattr(result[0], "close"):
            result[0].close()
    return refused


def test_no_descriptor_is_left_open(ws: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "outside", ws / "out")
    os.link(tmp_path / "outside" / "secret.txt", ws / "hard.txt")
    policies: tuple[Symlinks, ...] = ("refuse", "within")
    before = len(os.listdir("/dev/fd"))
    refused = 0
    for policy in policies:
        with ConfinedDir.open(ws, symlinks=policy) as root:
            for rel in ("sub/inner.txt", "out/secret.txt", "hard.txt", "missing/x", "sub", "a//b"):
                refused += _try_everything(root, rel)
    assert len(os.listdir("/dev/fd")) == before
    assert refused > 30  # the error paths were taken
