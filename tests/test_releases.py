"""The MicroPython releases the firmware supports, and what each stock ESP32 build freezes
(tools/sim/board/esp32/releases.py, tools/sim/board/frozen.py, docs/esp32.md "Releases")."""

import os

import pytest

from firmware import errors
from tools.board import deploy
from tools.port import upy
from tools.sim.board import frozen, portfrozen
from tools.sim.board.esp32 import releases

DOC = os.path.join(upy.ROOT, "docs", "esp32.md")


def test_the_docs_print_the_table_the_twin_plays():
    with open(DOC) as f:
        assert releases.markdown() in f.read()


def test_one_oldest_release_for_the_firmware_deploy_and_the_twin():
    assert errors.MICROPYTHON_OLDEST == releases.OLDEST
    assert deploy.SUPPORTED == (releases.OLDEST[:2], releases.NEWEST)
    assert releases.SUPPORTED[0] == releases.OLDEST[:2] == (1, 22)
    assert set(releases.LATEST) == set(releases.SUPPORTED)
    # what makes 1.20 and 1.21 too old: TLS without the context the link needs
    for line in ((1, 20), (1, 21)):
        assert releases.row(line)["context"] in (None, "wrap")
        assert not releases.supported(line + (0,))


@pytest.mark.parametrize("line", releases.SUPPORTED)
def test_the_frozen_build_freezes_each_module_once(line):
    version = releases.LATEST[line]
    modules = frozen.check(version=version)
    targets = [target for _, target, _ in modules]
    assert len(targets) == len(set(targets))
    # umqtt comes from the port's manifest alone (the release's own micropython-lib)
    assert [src for src, target, _ in modules if target == "umqtt/simple.py"] == [None]
    assert "firmware/run.py" in targets and "main.py" in targets


def test_umqtt_frozen_again_is_refused_as_the_real_build_fails(tmp_path):
    # firmware/manifest.py as it was: the pinned umqtt beside the port's manifest
    manifest = tmp_path / "manifest.py"
    manifest.write_text('include(%r)\npackage("umqtt", base_path=%r)\n'
                        % (frozen.MANIFEST, upy.UPYLIB))
    with pytest.raises(frozen.BuildError, match="umqtt/simple.py is frozen twice"):
        frozen.check(str(manifest), version=(1, 29, 0))


def test_the_port_lists_agree_with_the_releases_port_manifests():
    """Where tools.sim.board.portfrozen made a release's frozen modules (from MicroPython's
    git history), their list is the table's, and umqtt is the release the table names."""
    missing = []
    for line in releases.SUPPORTED:
        version = releases.LATEST[line]
        listed = portfrozen.modules(version)
        if listed is None:
            missing.append(portfrozen.name(version))
            continue
        assert sorted(t for t, _ in listed) == sorted(releases.port_frozen(version))
        assert dict(listed)["umqtt/simple.py"] == releases.row(version)["umqtt"]
    if missing:
        pytest.skip("no frozen modules of MicroPython %s were made here (python -m "
                    "tools.sim.board.portfrozen --src MICROPYTHON_GIT): the twin plays those "
                    "releases with umqtt 1.3.4" % ", ".join(missing))
