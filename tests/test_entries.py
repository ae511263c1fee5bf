"""The unix-port programs the host starts are named in one registry (tools.port.upy.ENTRIES),
not as path strings across the tools and tests: each entry is a file that the unix port
runs, and no other host module spells a unix-port program's path."""

import os
import re
import subprocess

from tools.port import upy


def test_every_entry_is_a_program_of_the_tree():
    for name, path in upy.ENTRIES.items():
        assert not os.path.isabs(path), name
        assert os.path.isfile(os.path.join(upy.ROOT, path)), (name, path)
        assert upy.entry(name) == path


def test_an_entry_runs_on_the_unix_port():
    # the replay runner answers a script read from stdin in batch mode
    proc = upy.run([os.path.join(upy.ROOT, upy.entry("replay")), "--batch"],
                   input="", timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_no_host_module_names_a_program_by_its_path():
    files = subprocess.run(["git", "ls-files", "tools", "tests"], cwd=upy.ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    programs = set(upy.ENTRIES.values())
    spelled = re.compile(r"""["'](%s)["']""" % "|".join(re.escape(p) for p in programs))
    offenders = []
    for path in files:
        # the registry itself, and the rules-table test, which reads files' text by path
        if not path.endswith(".py") or path in ("tools/port/upy.py", "tests/test_rules_table.py"):
            continue
        with open(os.path.join(upy.ROOT, path)) as f:
            for number, line in enumerate(f, 1):
                if spelled.search(line):
                    offenders.append("%s:%d" % (path, number))
    assert offenders == []
