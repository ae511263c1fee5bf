import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# `make test` runs the modules on two workers (pytest-xdist, `-n 2 --dist loadfile
# --no-loadscope-reorder`). Each module goes to one worker whole, so that its module-scoped
# set-ups (a broker, the bench's smoke run, the one unix-port process of a device module)
# are made once. A module says in its own `pytestmark` how long it runs and how it must
# run:
#
#     pytestmark = [pytest.mark.long(80), pytest.mark.realtime]
#
# `long(seconds)`: about how long the module takes on one worker; the longest are handed
# out first, so that no long one starts when the other worker has run out of work (a
# plain `pytest` runs them in that order too). `realtime`: its tests race real time on
# the ESP32 twin (a board booting while deploy or mpremote knocks), so a second worker's
# load makes them miss; `make test` runs them after the others, in one process
# (`-m realtime`).


def pytest_configure(config):
    config.addinivalue_line("markers", "realtime: races real time; run without a second worker")
    config.addinivalue_line("markers", "long(seconds): the module runs about this long on one "
                            "worker; the longest are handed out first")


def _seconds(item):
    marker = item.get_closest_marker("long")
    return marker.args[0] if marker is not None else 0


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: -_seconds(item))  # stable: the rest keep their order


# Counts recorded by hostile-conditions tests, printed at the end of the run:
#     def test_x(hostile_report):
#         hostile_report("link: duplicated frames", sent=40, refused=40)
# A name recorded again (a parametrized test) adds its counts to the first record's.
# The counts travel on the test's report (its user_properties), so that those made in a
# pytest-xdist worker reach the process that prints the summary.
_HOSTILE_PROPERTY = "hostile_report"


@pytest.fixture
def hostile_report(request):
    """record(name, **counts): keep whole-number counts for the end-of-run summary."""

    def record(name, **counts):
        if not counts:
            raise ValueError("hostile_report(%r) needs at least one count" % name)
        for key, value in counts.items():
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError("hostile_report count %s=%r is not a whole number" % (key, value))
        request.node.user_properties.append((_HOSTILE_PROPERTY, (name, dict(counts))))

    return record


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    table = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            # a test's teardown report carries every count it recorded, once
            if getattr(report, "when", None) != "teardown":
                continue
            for key, value in report.user_properties:
                if key == _HOSTILE_PROPERTY:
                    name, counts = value
                    kept = table.setdefault(name, {})
                    for count, number in counts.items():
                        kept[count] = kept.get(count, 0) + number
    if not table:
        return
    terminalreporter.section("hostile conditions: counts")
    for name, counts in table.items():
        shown = " ".join("%s=%d" % (key, value) for key, value in counts.items())
        terminalreporter.write_line("%s: %s" % (name, shown))
