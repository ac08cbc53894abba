"""The card's PNGs: valid images, byte-identical for equal data, free of version/date chunks."""

import io
import struct
from collections import Counter

from PIL import Image

from builder.core.pipeline import StageStats
from builder.release.figures import (
    FIGURES,
    funnel_figure,
    issue_words_figure,
    repos_figure,
    write_figures,
)
from tests.support.instances import LONG_ISSUE, make_instance

FUNNEL = [
    StageStats("source", 9, 8, 0, Counter(malformed_record=1)),
    StageStats("validate", 8, 2, 0, Counter(timeout=3, no_fail_to_pass=3)),
]


def _chunks(data: bytes) -> list[bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        chunks.append(data[offset + 4 : offset + 8])
        offset += 12 + length
    return chunks


def _instances(repos: int = 3):
    return [
        make_instance(n, repo=f"owner/repo{n % repos}", problem_statement=LONG_ISSUE * (1 + n % 4))
        for n in range(12)
    ]


def test_figures_are_written_as_valid_pngs(tmp_path):
    paths = write_figures(tmp_path, _instances(), FUNNEL)
    assert paths == FIGURES
    for relative in paths.values():
        image = Image.open(tmp_path / relative)
        image.load()
        assert image.format == "PNG" and image.width == 700 and image.height > 100


def test_same_data_same_bytes_without_software_or_time_chunks():
    for render in (
        lambda: repos_figure(_instances()),
        lambda: issue_words_figure(_instances()),
        lambda: funnel_figure(FUNNEL),
    ):
        first, second = render(), render()
        assert first == second
        chunks = _chunks(first)
        assert b"tIME" not in chunks
        assert b"matplotlib" not in first and b"Software" not in first


def test_different_data_different_pictures():
    assert repos_figure(_instances(3)) != repos_figure(_instances(4))
    assert issue_words_figure(_instances()[:6]) != issue_words_figure(_instances())
    assert funnel_figure(FUNNEL[:1]) != funnel_figure(FUNNEL)


def test_empty_data_and_many_repositories_still_render():
    for data in (repos_figure([]), issue_words_figure([])):
        assert Image.open(io.BytesIO(data)).format == "PNG"
    many = [make_instance(n, repo=f"owner/r{n:02d}") for n in range(40)]
    capped = [make_instance(n, repo=f"owner/r{n:02d}") for n in range(25)]
    height = Image.open(io.BytesIO(repos_figure(many))).height
    assert height == Image.open(io.BytesIO(repos_figure(capped))).height  # at most 25 bars
