"""The device code type-checks against the published ESP32 stubs, and the check bites.

The unix port and the simulator's fake pins accept calls an ESP32 does not have; these
tests make sure `make test` (tools.testing.typecheck, mypy with micropython-esp32-stubs) fails on
them and passes on the project's own device code.
"""

import textwrap

from tools.testing import typecheck


def _check(tmp_path, source):
    path = tmp_path / "device_code.py"
    path.write_text(textwrap.dedent(source))
    proc = typecheck.run([str(path)], capture=True)
    return proc.returncode, proc.stdout + proc.stderr


def test_the_device_code_is_clean():
    proc = typecheck.run(capture=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no issues found" in proc.stdout


def test_a_misspelt_pin_method_fails(tmp_path):
    code, out = _check(tmp_path, """\
        import machine


        def read():
            return machine.Pin(13).valu()
        """)
    assert code == 1, out
    assert 'device_code.py:5: error: "Pin" has no attribute "valu"' in out


def test_the_same_code_spelt_right_passes(tmp_path):
    code, out = _check(tmp_path, """\
        import machine


        def read():
            return machine.Pin(13).value()
        """)
    assert code == 0, out


def test_wrong_esp32_calls_fail(tmp_path):
    code, out = _check(tmp_path, """\
        import machine
        import time


        def start():
            machine.WDT(timout=8000)
            time.sleep_mss(5)
            return machine.Pin(13, machine.Pin.IN, machine.Pin.PULL_UPP)
        """)
    assert code == 1, out
    assert ':6: error: Unexpected keyword argument "timout" for "WDT"' in out
    assert ':7: error: Module has no attribute "sleep_mss"' in out
    assert ':8: error: "type[Pin]" has no attribute "PULL_UPP"' in out


def test_the_stubs_are_the_esp32_ones():
    stubs = typecheck.stub_tree()
    with open(stubs + "/esp32.pyi") as f:
        assert "class Partition" in f.read()
    with open(stubs + "/.versions") as f:
        pinned = f.read().split()
    with open(typecheck.ROOT + "/requirements.txt") as f:
        requirements = f.read().split()
    for pin in pinned:  # the versions in use are the ones requirements.txt pins
        assert pin in requirements
