"""Reading an uploaded zip archive within bounds, before anything is decompressed in full.

A 1 MB zip can hold a 1 GiB member; reading every member first took 2 GB. Here the directory is
checked first (member count, declared sizes, compression ratio), then the manifest alone is read
and validated, and then only the members it lists are read, each with a hard cap that does not
trust the sizes the directory declares.
"""

from __future__ import annotations

import io
import zipfile
from typing import IO, Any

from django.conf import settings

from apps.core import untrusted
from apps.core.errors import ApplicationError, FieldError

MAX_MEMBERS = 200
# A member larger than this that compresses better than MAX_RATIO:1 is refused (CSV compresses
# about 5-15:1; a zip bomb 1000:1 and more).
MAX_RATIO = 200
RATIO_CHECKED_ABOVE = 1024 * 1024
MANIFEST = "manifest.json"


def _refuse(field: str, message: str, value: Any = None) -> ApplicationError:
    return ApplicationError(
        "The archive cannot be read; nothing was imported.",
        errors=[FieldError(field=field, message=message, value=value)],
    )


def _member_limit() -> int:
    return int(settings.IMPORT_MAX_BYTES)


def open_archive(content: bytes | IO[bytes]) -> zipfile.ZipFile:
    """The zip (bytes, or a seekable file such as an upload kept on disk), its directory
    checked (count, sizes, ratios); raises ApplicationError."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(content) if isinstance(content, bytes) else content)
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise _refuse("file", "is not a zip archive", value=str(exc)) from exc
    if len(infos) > MAX_MEMBERS:
        raise _refuse("file", f"holds {len(infos)} files; at most {MAX_MEMBERS}")
    total = 0
    for info in infos:
        if info.file_size > _member_limit():
            raise _refuse(
                info.filename,
                f"unpacks to {info.file_size} bytes; at most {_member_limit()} (IMPORT_MAX_BYTES)",
            )
        if info.file_size > RATIO_CHECKED_ABOVE and info.file_size > MAX_RATIO * max(
            1, info.compress_size
        ):
            raise _refuse(
                info.filename,
                f"is compressed more than {MAX_RATIO}:1, like a zip bomb",
                value=f"{info.compress_size} -> {info.file_size} bytes",
            )
        total += info.file_size
    if total > int(settings.ARCHIVE_MAX_BYTES):
        raise _refuse(
            "file", f"unpacks to {total} bytes; at most {settings.ARCHIVE_MAX_BYTES}", value=total
        )
    return archive


def read_member(archive: zipfile.ZipFile, name: str) -> bytes:
    """One member, refused past IMPORT_MAX_BYTES whatever its header declares."""
    limit = _member_limit()
    try:
        with archive.open(name) as handle:
            data = handle.read(limit + 1)
    except KeyError as exc:
        raise _refuse(name, "is listed in the manifest but missing") from exc
    except (zipfile.BadZipFile, OSError, ValueError, RuntimeError) as exc:
        raise _refuse(name, "cannot be unpacked", value=str(exc)) from exc
    if len(data) > limit:
        raise _refuse(name, f"unpacks to more than {limit} bytes (IMPORT_MAX_BYTES)")
    return data


class _Capped(io.RawIOBase):
    """A member's stream that refuses to give more than `limit` bytes (the cap of read_member,
    for a member read as a stream)."""

    def __init__(self, handle: IO[bytes], name: str, limit: int) -> None:
        self.handle, self.name, self.limit, self.read_so_far = handle, name, limit, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            data = self.handle.read(len(buffer))
        except (zipfile.BadZipFile, OSError, ValueError, RuntimeError) as exc:
            raise _refuse(self.name, "cannot be unpacked", value=str(exc)) from exc
        self.read_so_far += len(data)
        if self.read_so_far > self.limit:
            raise _refuse(self.name, f"unpacks to more than {self.limit} bytes (IMPORT_MAX_BYTES)")
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.handle.close()
        super().close()


def open_member(archive: zipfile.ZipFile, name: str) -> IO[bytes]:
    """One member as a binary stream, refused past IMPORT_MAX_BYTES as it is read."""
    try:
        handle = archive.open(name)
    except KeyError as exc:
        raise _refuse(name, "is listed in the manifest but missing") from exc
    except (zipfile.BadZipFile, OSError, ValueError, RuntimeError) as exc:
        raise _refuse(name, "cannot be unpacked", value=str(exc)) from exc
    return io.BufferedReader(_Capped(handle, name, _member_limit()), buffer_size=1 << 16)


def read_manifest(archive: zipfile.ZipFile) -> dict[str, Any]:
    """manifest.json, parsed with bounds, with `load_order` and `restored` lists of names."""
    try:
        manifest = untrusted.json_loads(read_member(archive, MANIFEST).decode("utf-8"))
    except ApplicationError as exc:
        raise _refuse(MANIFEST, "is missing or cannot be unpacked") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise _refuse(MANIFEST, f"is not JSON: {exc}") from exc
    if not isinstance(manifest, dict):
        raise _refuse(MANIFEST, "must be a JSON object")
    for key in ("load_order", "restored"):
        names = manifest.get(key)
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise _refuse(f"{MANIFEST}: {key}", "must be a list of file names", value=names)
    # Version 4: the members of each file split into parts (apps.dataio.services.archive.members).
    parts = manifest.setdefault("parts", {})
    if not isinstance(parts, dict) or not all(
        isinstance(members, list) and members and all(isinstance(m, str) for m in members)
        for members in parts.values()
    ):
        raise _refuse(
            f"{MANIFEST}: parts", "must map file names to lists of member names", value=str(parts)
        )
    return manifest
