"""Putting a finished checkpoint folder in place in one step no interrupt can split.

A save writes the new checkpoint into ``.<name>.tmp-<id>`` beside ``path`` and then
*exchanges* the two folders with one system call (``renameat2(RENAME_EXCHANGE)`` on
Linux, ``renamex_np(RENAME_SWAP)`` on macOS): before the call ``path`` is the old
checkpoint, after it the new one, and never anything else. The temporary name then
holds the old checkpoint, so deleting it can never delete the only complete copy.

Where the system has no exchange (Windows, some network file systems) ``path`` is
moved to ``.<name>.old-<id>`` and the new folder renamed into place; an exception or
``KeyboardInterrupt`` between the two renames moves the old one back, and after a hard
kill in that window :func:`current_folder` (used by loading) and the next save find it
there. Leftovers of killed saves are removed by the next save. One writer per path.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import sys
import uuid
from pathlib import Path

_AT_FDCWD, _RENAME_EXCHANGE, _RENAME_SWAP = -100, 2, 2
# what the call answers where the file system cannot exchange (EINVAL on Linux)
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP}


def _exchange_call():
    """The C function that swaps two paths atomically, or None on this system."""
    try:
        if sys.platform.startswith("linux"):
            rename = ctypes.CDLL(None, use_errno=True).renameat2
            return lambda a, b: rename(_AT_FDCWD, a, _AT_FDCWD, b, _RENAME_EXCHANGE)
        if sys.platform == "darwin":
            rename = ctypes.CDLL(None, use_errno=True).renamex_np
            return lambda a, b: rename(a, b, _RENAME_SWAP)
    except (OSError, AttributeError):  # no libc symbol (old glibc, musl)
        pass
    return None


_CALL = _exchange_call()


def exchange(a: Path, b: Path) -> bool:
    """Swap the folders ``a`` and ``b`` in one atomic step; False where that is unsupported."""
    if _CALL is None:
        return False
    if _CALL(os.fsencode(a), os.fsencode(b)) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), str(b))


def leftovers(path: Path, kind: str) -> list[Path]:
    """Folders ``.<name>.<kind>-*`` that saves to ``path`` left beside it, newest first."""
    found = path.parent.glob(f".{path.name}.{kind}-*") if path.parent.is_dir() else []
    return sorted(found, key=lambda p: p.stat().st_mtime_ns, reverse=True)


def current_folder(path: Path) -> Path:
    """``path``, or, where a kill between two fallback renames left none, the old copy."""
    if path.exists():
        return path
    old = leftovers(path, "old")
    return old[0] if old else path


def clean(path: Path) -> None:
    """Remove what killed saves left beside ``path``, after restoring a displaced checkpoint."""
    if not path.exists() and leftovers(path, "old"):
        os.rename(leftovers(path, "old")[0], path)
    for folder in leftovers(path, "tmp") + leftovers(path, "old"):
        shutil.rmtree(folder, ignore_errors=True)


def publish(temp: Path, path: Path) -> None:
    """Make the complete folder ``temp`` the checkpoint at ``path``.

    Afterwards ``temp`` holds the previous checkpoint or nothing; the caller deletes it.
    """
    if not path.exists():
        os.rename(temp, path)
    elif not exchange(temp, path):
        old = path.parent / f".{path.name}.old-{uuid.uuid4().hex[:8]}"
        os.rename(path, old)
        try:
            os.rename(temp, path)
        except BaseException:
            if not path.exists():
                os.rename(old, path)  # roll back: the old checkpoint stays the current one
            raise
        shutil.rmtree(old, ignore_errors=True)
    sync_folder(path.parent)


def sync_folder(folder: Path) -> None:
    """Flush a folder's entries (the renames) to disk where the system allows it."""
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
