"""Imports read their file as a stream, never whole (issue 21.2): the same results and the same
errors as from bytes, from a file object that refuses to be read in one piece."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile, TemporaryUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.catalog.models import Domain, Idea, Patent
from apps.core.errors import ApplicationError
from apps.dataio.services.imports import import_file, import_upload
from apps.screening.models import Rating
from tests.dataio.conftest import example
from tests.factories import IdeaFactory, PatentFactory, ReviewerFactory

pytestmark = pytest.mark.django_db


class NoWholeReads(io.BytesIO):
    """A file that fails the test when anything reads all of it at once."""

    def read(self, size: int | None = -1, /) -> bytes:
        assert size is not None and size >= 0, "the whole file was read at once"
        return super().read(size)

    def read1(self, size: int = -1, /) -> bytes:
        assert size >= 0, "the whole file was read at once"
        return super().read1(size)

    def readall(self) -> bytes:  # pragma: no cover - the assertion is the point
        raise AssertionError("the whole file was read at once")


def errors_of(content, filename: str, kind: str = "patents") -> list[tuple]:
    with pytest.raises(ApplicationError) as info:
        import_file(kind=kind, content=content, filename=filename)
    return [(e.row, e.field, e.message, e.value) for e in info.value.errors]


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_every_kind_imports_from_a_stream_that_is_never_read_whole(admin, suffix):
    for kind in ("patents", "ideas", "reviewers", "ratings"):
        name = f"{kind}.{suffix}"
        result = import_file(
            kind=kind, content=NoWholeReads(example(name)), filename=name, actor=admin
        )
        assert result.created, (kind, result.summary())
    assert Patent.objects.count() and Idea.objects.count() and Rating.objects.count()


def test_a_bad_byte_far_into_a_stream_is_named_as_from_bytes():
    # Past the first 64 KiB block the decoder reads, with a BOM, in a 3-byte character's middle.
    head = b"external_id,domain,title\n"
    rows = b"".join(f"US{i},nlp,Caf\u00e9 {i}\n".encode() for i in range(6000))
    content = b"\xef\xbb\xbf" + head + rows + "US-x,nlp,\u20ac".encode()[:-1] + b"X\n"
    streamed = errors_of(NoWholeReads(content), "p.csv")
    expected_line = (head + rows).count(b"\n") + 1
    assert streamed[0][0] == expected_line and streamed[0][1] == "file"
    with pytest.raises(UnicodeDecodeError) as whole:
        content.decode("utf-8-sig")  # how Python counts it when decoding all at once
    assert whole.value.start == len(head + rows) + 9
    message = f"byte {whole.value.start + 1} (line {expected_line}) is not valid UTF-8"
    assert streamed[0][2:] == (message, repr(b"\xe2\x82X\n"))
    assert streamed == errors_of(content, "p.csv")
    jsonl = b'{"external_id": "US1", "domain": "nlp", "title": "A"}\n' * 3000 + b'{"t": "\xff"}\n'
    assert errors_of(NoWholeReads(jsonl), "p.jsonl")[0][:3] == (
        3001,
        "file",
        f"byte {len(jsonl) - 3} (line 3001) is not valid UTF-8",
    )


def test_json_lines_keep_the_first_seen_column_order_and_fill_missing_keys():
    content = (
        b'{"external_id": "US1", "domain": "nlp", "title": "One"}\n\n'
        b'{"title": "Two", "external_id": "US2", "domain": "nlp", "abstract": "Only here"}\n'
    )
    result = import_file(kind="patents", content=NoWholeReads(content), filename="p.jsonl")
    assert result.created == 2
    assert Patent.objects.get(external_id="US1").abstract == ""
    assert Patent.objects.get(external_id="US2").abstract == "Only here"
    assert errors_of(NoWholeReads(b"\n  \n"), "p.jsonl") == [
        (None, "file", "holds no records", None)
    ]
    no_header = [(None, "file", "has no header row", None)]
    assert errors_of(NoWholeReads(b"  \n\n"), "p.csv") == no_header


def test_an_upload_on_disk_is_imported_from_its_file(admin, settings):
    """Above FILE_UPLOAD_MAX_MEMORY_SIZE Django keeps the upload in a temporary file; the import
    reads that file and leaves it open for Django to clean up."""
    content = example("patents.csv")
    upload = TemporaryUploadedFile("patents.csv", "text/csv", len(content), "utf-8")
    upload.write(content)
    upload.seek(0)
    outcome = import_upload(kind="patents", upload=upload, actor=admin)
    assert outcome.ok, outcome.errors
    assert outcome.result and outcome.result.created == Patent.objects.count() > 0
    assert not upload.closed
    upload.close()
    small = import_upload(
        kind="patents", upload=SimpleUploadedFile("p.csv", b"external_id\n"), actor=admin
    )
    assert not small.ok and small.errors[0].field in {"domain", "title"}


def test_the_command_reads_its_file_as_a_stream(tmp_path: Path, capsys):
    path = tmp_path / "patents.csv"
    path.write_bytes(example("patents.csv"))
    call_command("import_patents", str(path))
    assert Patent.objects.count() > 0
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"external_id,domain,title\nUS1,nlp,Caf\xe9\n")
    with pytest.raises(CommandError, match="not UTF-8"):
        call_command("import_patents", str(bad))
    assert "row 2, file: byte 37 (line 2) is not valid UTF-8" in capsys.readouterr().err


STORIES = """
key: stories
name: Story quality
domains: [fiction]
dimensions:
  - key: style
    scale: {min: 1, max: 4}
    optional: true
  - key: plot
    scale: {min: 1, max: 4}
    optional: true
"""


def test_a_bulk_import_written_to_copy_block_by_block_keeps_every_row(run_import, monkeypatch):
    """The staging COPY gets the rows in blocks, not as one string: blocks of 7 rows here, with
    rationales holding commas, quotes, line breaks and accents across the block edges."""
    from apps.screening.services import rating_store

    monkeypatch.setattr(rating_store, "COPY_BLOCK_ROWS", 7)
    run_import("rubric", STORIES, "stories.yaml", create_domains=True)
    fiction = Domain.objects.get(key="fiction")
    for i in range(110):
        IdeaFactory(
            external_id=f"s-{i}", patent=PatentFactory(external_id=f"p-{i}", domain=fiction)
        )
    ReviewerFactory(username="rita", profile=[fiction])
    lines = ["idea,reviewer,dimension,score,rationale"]
    expected = {}
    for i in range(110):
        for dim in ("style", "plot"):
            text = f'Row {i}, "{dim}"\nnaïve {"é" * (i % 3)}'
            expected[(f"s-{i}", dim)] = (1 + i % 4, text.strip())  # cells are stripped
            quoted = text.replace('"', '""')
            lines.append(f's-{i},rita,{dim},{1 + i % 4},"{quoted}"')
    result = run_import("ratings", "\n".join(lines) + "\n", "r.csv")
    assert result.created == 220 > rating_store.COPY_FROM_ROWS
    stored = {
        (idea, dim): (score, rationale)
        for idea, dim, score, rationale in Rating.objects.values_list(
            "idea__external_id", "dimension__key", "score", "rationale"
        )
    }
    assert stored == expected
