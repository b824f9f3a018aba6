"""The llama.cpp build helper refuses an sdist that is not the pinned one, and archive members that escape."""

from __future__ import annotations

import io
import tarfile

import pytest

from orchlog.llama.build import SDIST_SHA256, BuildError, check_sha256, safe_members

PREFIX = "pkg/vendor/llama.cpp/"


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, mode
    return info


def test_a_download_with_another_sha256_is_refused_with_both_digests(tmp_path):
    sdist = tmp_path / "llama_cpp_python.tar.gz"
    sdist.write_bytes(b"not the sdist")
    with pytest.raises(BuildError, match=f"not the pinned {SDIST_SHA256}.*delete it"):
        check_sha256(sdist)


def test_plain_files_and_directories_are_kept_relative_to_the_vendored_tree_without_special_bits():
    members = safe_members(
        [_member("pkg/setup.py"), _member(PREFIX + "src", tarfile.DIRTYPE), _member(PREFIX + "src/a.c", mode=0o4777)],
        PREFIX,
    )
    assert [(m.name, m.mode) for m in members] == [("src", 0o644), ("src/a.c", 0o755)]


@pytest.mark.parametrize(
    "member",
    [
        _member(PREFIX + "evil", tarfile.SYMTYPE, "/etc/passwd"),
        _member(PREFIX + "hard", tarfile.LNKTYPE, "../../outside"),
        _member(PREFIX + "../../../escape.txt"),
        _member(PREFIX + "dev", tarfile.CHRTYPE),
        _member(PREFIX + "fifo", tarfile.FIFOTYPE),
    ],
    ids=["symlink", "hardlink", "dot-dot", "device", "fifo"],
)
def test_links_devices_and_paths_that_climb_out_are_refused_on_every_python(member):
    with pytest.raises(BuildError, match="refusing to extract"):
        safe_members([member], PREFIX)


def test_a_real_archive_with_a_link_out_of_the_tree_is_refused_before_anything_is_written(tmp_path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.addfile(_member(PREFIX + "escape", tarfile.SYMTYPE, "/tmp"))
    buffer.seek(0)
    with tarfile.open(fileobj=buffer) as archive, pytest.raises(BuildError):
        safe_members(archive.getmembers(), PREFIX)
