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


# -- the 32-bit interpreter with TLS (interpreter32_tls) ------------------------------------------

def fake_port(path, bits=32, version="1.29", tls=True):
    """A stand-in for a unix port at `path`: it answers interpreter32's probe with its word
    size and release line, and `import tls` with success or an ImportError's exit."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('#!/bin/sh\n[ "$2" = "import tls" ] && exit %d\necho %d %s\n'
                    % (0 if tls else 1, 2**(bits - 1) - 1, version))
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def ports(fresh, tmp_path):
    """build/upy and the shared folder in tmp_path, the pinned interpreter a 64-bit 1.29."""
    fresh.delenv(upy.UPY32_TLS_ENV, raising=False)
    fresh.setattr(upy, "BUILT_DIR", str(tmp_path / "built"))
    fresh.setattr(upy, "UPY_DIR", str(tmp_path / "shared"))
    pinned = fake_port(tmp_path / "venv" / "micropython", bits=64)
    fresh.setattr(upy, "binary", lambda: pinned)
    return tmp_path


def test_the_tls_port_is_the_first_32_bit_build_with_tls(ports):
    # make upy32's build of a tree without lib/mbedtls, then a shared one with TLS
    fake_port(ports / "built" / "micropython-1.29.0-preview-32bit", tls=False)
    shared = fake_port(ports / "shared" / "micropython-1.29.0-preview-32bit")
    assert upy.interpreter32_tls() == (shared, None)


def test_a_tls_port_of_another_release_line_or_word_size_is_not_taken(ports, fresh):
    fake_port(ports / "built" / "micropython-1.29.0-preview-32bit", tls=False)
    fake_port(ports / "shared" / "micropython-1.28.0-32bit", version="1.28")
    path, why = upy.interpreter32_tls()
    assert path is None and why.startswith("no 32-bit interpreter with TLS")
    assert "has no tls module" in why and upy.UPY32_TLS_ENV in why
    upy._found32.clear()
    fresh.setenv(upy.UPY32_TLS_ENV, fake_port(ports / "elsewhere" / "mp64", bits=64))
    path, why = upy.interpreter32_tls()
    assert path is None and "mp64 is a 64-bit build" in why


def test_a_named_tls_port_is_the_only_one_tried(ports, fresh):
    fake_port(ports / "built" / "micropython-1.29.0-preview-32bit")
    named = fake_port(ports / "elsewhere" / "micropython")
    fresh.setenv(upy.UPY32_TLS_ENV, named)
    assert upy.interpreter32_tls() == (named, None)
    upy._found32.clear()
    fresh.setenv(upy.UPY32_TLS_ENV, fake_port(ports / "elsewhere" / "plain", tls=False))
    path, why = upy.interpreter32_tls()
    assert path is None and "plain has no tls module" in why
