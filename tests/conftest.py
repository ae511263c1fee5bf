import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# `make test` runs the modules on two workers (pytest-xdist, `-n 2 --dist loadfile
# --no-loadscope-reorder`). Each module goes to one worker whole, so that its module-scoped
# set-ups (a broker, the bench's smoke run, the one unix-port process of a device module)
# are made once. The longest modules are handed out first, so that no long one starts when
# the other worker has run out of work; a plain `pytest` runs them in that order too.
LONGEST_FIRST = (
    "test_net_versions", "test_bench_smoke", "test_firmware_fuzz", "test_deploy_twin",
    "test_killpower", "test_mqtt", "test_mqtt_outage", "test_mqtt_proof", "test_club_hostile",
    "test_club_web_hostile", "test_club_web", "test_club_web_app", "test_sim_children",
    "test_powercut", "test_replay_inputs", "test_journal", "test_sim", "test_twin",
    "test_mqtt_newgame", "test_hostile_link", "test_protocol", "test_hostile_claims",
    "test_logger", "test_frozen_twin", "test_logger_cli", "test_link_faults", "test_app",
    "test_sim_inputs", "test_make_check", "test_typecheck",
)


# Modules whose tests race real time on the ESP32 twin (a board booting while deploy or
# mpremote knocks; test_net_versions: a dozen twins at once on a slow radio, whose load
# would also slow the other worker's real-time tests): a second worker's load makes them
# miss. `make test` runs them after the others, in one process (`-m realtime`).
REALTIME = (
    "test_net_versions", "test_deploy_twin", "test_frozen_twin", "test_deploy_net",
    "test_twin", "test_check_twin",
)


def pytest_configure(config):
    config.addinivalue_line("markers", "realtime: races real time; run without a second worker")


def _module_name(item):
    return os.path.splitext(os.path.basename(str(item.path)))[0]


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    # before the other plugins', so that -m sees the realtime marks
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(_module_name(item), len(rank)))  # stable
    for item in items:
        if _module_name(item) in REALTIME:
            item.add_marker(pytest.mark.realtime)
    return (yield)


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
