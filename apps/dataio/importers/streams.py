"""An import file as a stream of bytes or UTF-8 text, never held whole.

A file arrives as bytes (tests, the archive's members) or as a binary file object (an upload,
which Django keeps on disk above FILE_UPLOAD_MAX_MEMORY_SIZE; the command's open file). Either way
it is read as a stream: decoded chunk by chunk while the parser reads it (issue 21.2: a 100 MB
file used to cost the bytes, their decoded text and a StringIO of it before the frame).
"""

from __future__ import annotations

import codecs
import io
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

from apps.core.errors import ApplicationError, FieldError

# What an importer reads: the whole file, or a binary file object positioned anywhere (it is
# rewound before each read).
ImportContent = bytes | IO[bytes]

# Bytes read at a time when scanning a stream (blank check, locating a bad UTF-8 byte).
STREAM_CHUNK = 1 << 16
BOM = codecs.BOM_UTF8


def as_stream(content: ImportContent) -> IO[bytes]:
    """A seekable binary stream over `content`; bytes are wrapped without a copy (BytesIO shares
    an immutable bytes object until it is written to)."""
    return io.BytesIO(content) if isinstance(content, bytes | bytearray) else content


def is_empty(content: ImportContent) -> bool:
    stream = as_stream(content)
    stream.seek(0)
    empty = not stream.read(1)
    stream.seek(0)
    return empty


def read_all(content: ImportContent) -> bytes:
    """The whole file, for the formats parsed whole (a rubric: small, YAML or JSON)."""
    if isinstance(content, bytes):
        return content
    content.seek(0)
    return content.read()


@contextmanager
def text_stream(content: ImportContent, *, newline: str | None) -> Iterator[IO[str]]:
    """The file as UTF-8 text (BOM dropped), decoded as it is read. A byte that is not UTF-8
    raises an ApplicationError naming its byte and line (`utf8_error`). The caller's file object
    is left open (the wrapper is detached, not closed)."""
    stream = as_stream(content)
    stream.seek(0)
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", newline=newline)
    try:
        yield text
    except UnicodeDecodeError as exc:
        raise utf8_error(stream) from exc
    finally:
        text.detach()


def utf8_error(stream: IO[bytes]) -> ApplicationError:
    """Find the first byte that is not UTF-8 by scanning the stream again in chunks, and name
    it: its position counted after any BOM (as Python's utf-8-sig codec counts), its line and
    the 4 bytes from it."""
    stream.seek(0)
    decoder = codecs.getincrementaldecoder("utf-8")()
    first = stream.read(STREAM_CHUNK)
    bom = len(BOM) if first.startswith(BOM) else 0
    chunk, end, lines = first[bom:], len(first), 0
    while True:
        try:
            decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as exc:
            # exc.object is the decoder's pending bytes plus this chunk; it ends at `end`.
            at = end - len(exc.object) + exc.start
            stream.seek(at)
            bad = stream.read(4)
            line = lines + exc.object[: exc.start].count(b"\n") + 1
            return _utf8_refusal(position=at - bom, line=line, bad=bad)
        if not chunk:
            break
        lines += chunk.count(b"\n")
        chunk = stream.read(STREAM_CHUNK)
        end += len(chunk)
    # Unreachable for a stream that raised while decoding; kept so the caller always has an error.
    return _utf8_refusal(position=0, line=1, bad=b"")


def _utf8_refusal(*, position: int, line: int, bad: bytes) -> ApplicationError:
    return ApplicationError(
        "The file is not UTF-8 text; save it as UTF-8 and import it again.",
        errors=[
            FieldError(
                field="file",
                message=f"byte {position + 1} (line {line}) is not valid UTF-8",
                row=line,
                value=repr(bad),
            )
        ],
    )
