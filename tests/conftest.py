import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# Counts recorded by hostile-conditions tests, printed at the end of the run:
#     def test_x(hostile_report):
#         hostile_report("link: duplicated frames", sent=40, refused=40)
# A name recorded again (a parametrized test) adds its counts to the first record's.
_HOSTILE_COUNTS = pytest.StashKey[dict]()


def pytest_configure(config):
    config.stash[_HOSTILE_COUNTS] = {}


@pytest.fixture
def hostile_report(request):
    """record(name, **counts): keep whole-number counts for the end-of-run summary."""
    table = request.config.stash[_HOSTILE_COUNTS]

    def record(name, **counts):
        if not counts:
            raise ValueError("hostile_report(%r) needs at least one count" % name)
        for key, value in counts.items():
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError("hostile_report count %s=%r is not a whole number" % (key, value))
        kept = table.setdefault(name, {})
        for key, value in counts.items():
            kept[key] = kept.get(key, 0) + value

    return record


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    table = config.stash.get(_HOSTILE_COUNTS, {})
    if not table:
        return
    terminalreporter.section("hostile conditions: counts")
    for name, counts in table.items():
        shown = " ".join("%s=%d" % (key, value) for key, value in counts.items())
        terminalreporter.write_line("%s: %s" % (name, shown))
