"""tools.port.upy.interpreter32: the one place that finds the 32-bit interpreter the bench (and
the twin) measure memory with, named by $PINBOARD_UPY32 or found relative to the tree."""

import os
import shutil
import stat

import pytest

from tools.port import upy


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(upy, "_found32", {})
    return monkeypatch


def test_a_named_interpreter_that_is_not_there_is_refused_and_says_so(fresh):
    fresh.setenv(upy.UPY32_ENV, "build/nothing-here/micropython")
    path, why = upy.interpreter32()
    assert path is None
    assert "build/nothing-here/micropython is not there" in why and upy.UPY32_ENV in why


def test_a_64_bit_interpreter_is_not_taken_for_a_32_bit_one(fresh, tmp_path):
    # the pinned interpreter's launcher runs, but its words are 64 bits wide
    fresh.setenv(upy.UPY32_ENV, upy.binary())
    path, why = upy.interpreter32()
    assert path is None and "64-bit build" in why


def test_a_relative_name_is_relative_to_the_tree(fresh, tmp_path):
    found, _ = upy.interpreter32()
    if found is None:
        pytest.skip("no 32-bit interpreter here (../shared/upy)")
    # the same file under another name, named relative to the repository
    local = os.path.join(upy.ROOT, "build", "test-upy32", "micropython")
    os.makedirs(os.path.dirname(local), exist_ok=True)
    try:
        shutil.copyfile(found, local)
        os.chmod(local, os.stat(local).st_mode | stat.S_IXUSR)
        fresh.setattr(upy, "_found32", {})
        fresh.setenv(upy.UPY32_ENV, os.path.join("build", "test-upy32", "micropython"))
        path, why = upy.interpreter32()
        assert why is None and os.path.samefile(path, local)
    finally:
        shutil.rmtree(os.path.dirname(local), ignore_errors=True)


def test_make_upy32s_build_is_found_first(fresh, tmp_path):
    found, _ = upy.interpreter32()
    if found is None:
        pytest.skip("no 32-bit interpreter here (../shared/upy)")
    # a tools.port.upybuild output of the pinned release line in build/upy, and nothing in
    # the shared folder
    fresh.delenv(upy.UPY32_ENV, raising=False)
    fresh.setattr(upy, "UPY_DIR", str(tmp_path / "empty"))
    built = tmp_path / "built"
    built.mkdir()
    fresh.setattr(upy, "BUILT_DIR", str(built))
    name = os.path.basename(found)
    shutil.copyfile(found, built / name)
    os.chmod(built / name, 0o755)
    fresh.setattr(upy, "_found32", {})
    path, why = upy.interpreter32()
    assert why is None and path == str(built / name)


def test_no_32_bit_build_is_said_plainly(fresh, tmp_path):
    fresh.delenv(upy.UPY32_ENV, raising=False)
    fresh.setattr(upy, "UPY_DIR", str(tmp_path))
    fresh.setattr(upy, "BUILT_DIR", str(tmp_path))
    path, why = upy.interpreter32()
    assert path is None and "no micropython-" in why and "-32bit in build/upy" in why
