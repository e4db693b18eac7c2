from __future__ import annotations

import gzip
import os

from diag.input.sources import MAX_LINE_BYTES, InputStats, MemorySource, Source, discover, read_blocks


def _lines(data: bytes, chunk: int = 7) -> list[bytes]:
    stats = InputStats("m")
    joined = b"".join(read_blocks(MemorySource("m", data), stats, chunk))
    return joined.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")


def test_directories_are_walked_for_log_files_only(tmp_path):
    (tmp_path / "a.out").write_text("x\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.err.gz").write_bytes(gzip.compress(b"y\n"))
    (tmp_path / "notes.md").write_text("z\n")
    found = discover([str(tmp_path)])
    assert sorted(os.path.basename(s.path) for s in found.sources) == ["a.out", "b.err.gz"]
    assert not found.problems


def test_unexpanded_glob_and_missing_paths(tmp_path):
    (tmp_path / "job-1.out").write_text("x\n")
    (tmp_path / "job-2.out").write_text("x\n")
    found = discover([str(tmp_path / "job-*.out"), str(tmp_path / "nope.err"), str(tmp_path / "zz-*.log")])
    assert len(found.sources) == 2
    reasons = sorted(p.reason for p in found.problems)
    assert reasons == ["no file matches this pattern", "no such file or directory"]


def test_links_that_lead_nowhere_say_so_instead_of_missing(tmp_path):
    (tmp_path / "dangling.err").symlink_to(tmp_path / "rotated-away.err")
    (tmp_path / "a.out").symlink_to(tmp_path / "b.out")
    (tmp_path / "b.out").symlink_to(tmp_path / "a.out")
    found = discover([str(tmp_path / "dangling.err"), str(tmp_path / "a.out")])
    assert not found.sources
    reasons = [p.reason for p in found.problems]
    assert reasons[0].startswith("broken symbolic link") and "rotated-away.err" in reasons[0]
    assert reasons[1] == "symbolic link loop"


def test_empty_directory_is_a_problem(tmp_path):
    found = discover([str(tmp_path)])
    assert not found.sources and "no *.out" in found.problems[0].reason


def test_gzip_is_read_transparently_and_truncation_is_reported(tmp_path):
    data = b"".join(b"line %d\n" % i for i in range(50_000))
    path = tmp_path / "big.log.gz"
    path.write_bytes(gzip.compress(data))
    stats = InputStats(str(path))
    assert b"".join(read_blocks(Source(str(path)), stats)) == data
    assert stats.error is None and stats.lines == 50_000
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(gzip.compress(data)[:-2000])
    stats = InputStats(str(cut))
    partial = b"".join(read_blocks(Source(str(cut)), stats))
    assert stats.error and "truncated" in stats.error
    assert partial and data.startswith(partial.rsplit(b"\n", 1)[0])


def test_not_gzip_with_gz_name(tmp_path):
    path = tmp_path / "x.log.gz"
    path.write_bytes(b"plain text\n")
    stats = InputStats(str(path))
    list(read_blocks(Source(str(path)), stats))
    assert "gzip" in stats.error


def test_line_endings_split_the_same(tmp_path):
    assert _lines(b"a\nb\nc\n") == _lines(b"a\r\nb\r\nc\r\n") == [b"a", b"b", b"c", b""]
    # tqdm redraws with a bare \r: each redraw is its own line for matching
    assert _lines(b"10%|#\r50%|##\r100%|###\n") == [b"10%|#", b"50%|##", b"100%|###", b""]


def test_endless_line_is_capped_and_counted():
    data = b"start\n" + b"x" * (MAX_LINE_BYTES * 5) + b"\nafter\n"
    stats = InputStats("m")
    blocks = list(read_blocks(MemorySource("m", data), stats, chunk_bytes=4096))
    assert max(len(b) for b in blocks) <= MAX_LINE_BYTES + 4096 + 1
    assert stats.truncated_lines == 1
    assert b"after\n" in b"".join(blocks)
    assert stats.bytes_read == len(data)


def test_files_are_never_modified(tmp_path):
    path = tmp_path / "job.err"
    path.write_bytes(b"srun: error: n1: task 1: Exited with exit code 1\n")
    before = (path.read_bytes(), os.stat(path).st_mtime_ns)
    list(read_blocks(Source(str(path)), InputStats(str(path))))
    assert (path.read_bytes(), os.stat(path).st_mtime_ns) == before
