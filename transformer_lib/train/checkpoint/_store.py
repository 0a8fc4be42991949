"""Where a checkpoint lives on disk: one folder per save, and a pointer to the current one.

The folder ``path`` holds::

    LATEST                       the name of the current save (one line)
    save-<date>-<time>-<id>/     a save: model.safetensors, training.safetensors, checkpoint.json
    .lock                        held by a save while it runs: saves to one path take turns
                                 (where the file system keeps no locks, one writer at a time
                                 is up to the caller)

A save writes its files into a new folder, then points ``LATEST`` at it with ``os.replace``,
which replaces a *file* in one step on POSIX and on Windows alike (no folder is ever renamed
over another): an interrupt or a kill at any moment leaves ``LATEST`` naming the old save or
the new one, both complete. A folder is never changed once ``LATEST`` has named it. The save
then removes, by exact name, every save folder but the new one and the one it replaced (a
reader may still be reading that one), and whatever interrupted saves left. A reader whose
folder is removed under it follows ``LATEST`` again (``save_load._read``).

A folder without ``LATEST`` is read as one save: a save folder itself, or a checkpoint written
in the layout before this one (its files directly in ``path``); the next save to such a
checkpoint removes those files once ``LATEST`` names the new save.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from transformer_lib._checks import fail
from transformer_lib.train.checkpoint._files import DAMAGED, FILES

POINTER, LOCK = "LATEST", ".lock"
_SAVE = re.compile(r"save-\d{8}-\d{6}-[0-9a-f]{8}")
_POINTER_TEMP = ".LATEST-"  # + a save's name: the pointer to it, being written
# Windows refuses to replace or open a file while another process has it open or is replacing
# it; that PermissionError is tried again, for up to _TRIES × _PAUSE = 5 seconds.
_TRIES, _PAUSE = 50, 0.1
# what flock answers where the file system keeps no locks: saves then go on without one
_NO_LOCKS = {errno.ENOLCK, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP}


def is_save(folder: Path) -> bool:
    """Whether ``folder`` is one of the saves inside a checkpoint folder."""
    return bool(_SAVE.fullmatch(folder.name)) and (folder.parent / POINTER).is_file()


def current_folder(path: Path) -> Path:
    """The folder holding the checkpoint at ``path``: the save ``LATEST`` names, or ``path``
    itself when it has no ``LATEST``."""
    name = _pointer(path)
    if name is None:
        return path
    if not _SAVE.fullmatch(name):
        expected = "the name of a save folder beside it (save-<date>-<time>-<id>)"
        fail(str(path / POINTER), expected, repr(name[:40]), DAMAGED)
    return path / name


def _pointer(path: Path) -> str | None:
    """What ``path/LATEST`` says (a save's name, unless damaged); None where there is none."""
    try:
        return _patiently((path / POINTER).read_bytes).decode("utf-8", "replace").strip()
    except (FileNotFoundError, NotADirectoryError):
        return None


def publish(path: Path, files: dict[str, bytes]) -> Path:
    """Write ``files`` into a new save folder in ``path`` and make it the current save;
    returns that folder."""
    path.mkdir(parents=True, exist_ok=True)
    with _lock(path):
        replaced = _pointer(path)
        try:
            return _write_save(path, files)
        finally:  # after an interrupt too: LATEST names the old save or this one
            _remove_stale(path, replaced, _pointer(path))


def _write_save(path: Path, files: dict[str, bytes]) -> Path:
    """The save folder with ``files``, then ``LATEST`` naming it, each flushed to disk."""
    folder = path / f"save-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"
    folder.mkdir()
    for name, data in files.items():
        _write_file(folder / name, data)
    _sync_folder(folder)
    temp = path / (_POINTER_TEMP + folder.name)
    _write_file(temp, f"{folder.name}\n".encode())
    _patiently(os.replace, temp, path / POINTER)
    _sync_folder(path)
    return folder


def _remove_stale(path: Path, replaced: str | None, current: str | None) -> None:
    """Remove, by exact name, the save folders but the ``current`` one and the one it
    ``replaced``, pointers left half-written and, once ``LATEST`` exists, the files of the
    layout before it. What cannot be removed now (on Windows, a file that a reader has open)
    the next save removes."""
    with os.scandir(path) as items:
        for item in items:
            if _SAVE.fullmatch(item.name) and item.name not in (replaced, current):
                shutil.rmtree(item.path, ignore_errors=True)
            elif item.name.startswith(_POINTER_TEMP) or (current and item.name in FILES):
                with suppress(OSError):
                    os.remove(item.path)


@contextmanager
def _lock(path: Path) -> Iterator[None]:
    """Hold ``path/.lock`` exclusively; the system lets go when the process ends, however
    it ends."""
    fd = os.open(path / LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        if os.name == "nt":
            _lock_windows(fd)
        else:
            import fcntl

            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as error:
                if error.errno not in _NO_LOCKS:
                    raise
        yield
    finally:
        os.close(fd)


def _lock_windows(fd: int) -> None:
    """Wait for the lock on the file ``fd`` (its first byte) for as long as it takes."""
    import msvcrt

    while True:
        try:
            return msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # tries for 10 s, then raises
        except OSError as error:
            if error.errno != errno.EDEADLOCK:
                raise


def _patiently(action: Callable, *args):
    """``action(*args)``, tried again while it raises PermissionError (see ``_TRIES``)."""
    for _ in range(_TRIES - 1):
        try:
            return action(*args)
        except PermissionError:
            time.sleep(_PAUSE)
    return action(*args)


def _write_file(file: Path, data: bytes) -> None:
    """Write ``data`` to ``file`` and flush it to disk."""
    with open(file, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _sync_folder(folder: Path) -> None:
    """Flush a folder's entries (new files, the replaced pointer) to disk where the system
    allows it."""
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
