import os
import shutil
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# `make test` runs the modules on pytest-xdist workers (`-n 6 --dist loadgroup
# --no-loadscope-reorder`, scheduled by `ModulesAndGroups` below). Each module goes to one
# worker whole, so that its module-scoped set-ups (a broker, the bench's smoke run, the one
# unix-port process of a device module) are made once. A module says in its own
# `pytestmark` how long it runs and how it must run:
#
#     pytestmark = [pytest.mark.long(80), pytest.mark.realtime]
#
# `long(seconds)`: about how long the module takes on one worker; the longest are handed
# out first, so that no long one starts when the other workers have run out of work (a
# plain `pytest` runs them in that order too). Two kinds of module mostly wait rather than
# compute, and their modules run one after another in units (GROUPS), each unit on a worker
# of its own and handed out first, as one piece of its summed `long` seconds, beside the
# two workers that compute on the two cores:
#
# - `realtime`: its tests race real time on the ESP32 twin (a board booting while deploy
#   or mpremote knocks): two units, "realtime" and "realtime2";
# - `waits`: its tests wait on real time elsewhere (a broker and a logger taking a board's
#   frames, a link unplugged for seconds, the board's own pace at `--speed`): two units,
#   "waits" and "waits2".
#
# So at most two modules compute at once beside them, and a test that races real time
# never shares the cores with more computing ones. Once its unit is done, a worker takes
# modules like the others.


def pytest_configure(config):
    config.addinivalue_line("markers", "realtime: races real time on the ESP32 twin; runs "
                            "with the other realtime modules, one after another")
    config.addinivalue_line("markers", "waits: mostly waits on real time (a broker, a link); "
                            "runs with the other waiting modules, one after another")
    config.addinivalue_line("markers", "long(seconds): the module runs about this long on one "
                            "worker; the longest are handed out first")


def _seconds(item):
    marker = item.get_closest_marker("long")
    return marker.args[0] if marker is not None else 0


# The markers of the modules run one after another, by kind, and in how many units each
# kind is split (its modules shared out by their `long` seconds, the longest first), each
# unit on a worker of its own: they mostly wait.
GROUPS = {"realtime": 2, "waits": 2}
_GROUP_LIST = "group_modules_file"  # workerinput key: where a worker names them
_UNITS = {}  # module -> its unit ("waits", "waits2"), made once the modules are collected


def _kind(item):
    for name in GROUPS:
        if item.get_closest_marker(name) is not None:
            return name
    return None


def _group(item):
    return _UNITS.get(item.module.__name__)


def _share_out(modules):
    """Each grouped module's unit: a kind's modules, the longest first, each to the unit of
    that kind with the fewest seconds so far."""
    units = {}
    for module, kind, seconds in sorted(modules, key=lambda m: (-m[2], m[0])):
        names = [kind] + ["%s%d" % (kind, n) for n in range(2, GROUPS[kind] + 1)]
        unit = min(names, key=lambda name: (units.get(name, 0), names.index(name)))
        units[unit] = units.get(unit, 0) + seconds
        _UNITS[module] = unit


def pytest_collection_modifyitems(config, items):
    firsts = {item.module: item for item in items}.values()
    _share_out([(item.module.__name__, _kind(item), _seconds(item))
                for item in firsts if _kind(item) is not None])
    together = {}  # each unit is handed out whole
    for item in firsts:
        group = _group(item)
        if group is not None:
            together[group] = together.get(group, 0) + _seconds(item)

    def order(item):  # the longest first; in a group too
        group = _group(item)
        if group is None:
            return (-_seconds(item), "", 0)
        return (-together[group], group, -_seconds(item))

    items.sort(key=order)  # stable: the rest keep their order
    path = getattr(config, "workerinput", {}).get(_GROUP_LIST)
    if path is not None:
        # xdist schedules from node ids alone (its `xdist_group` suffix on them is lost on
        # pytest 9.2, pytest-dev/pytest-xdist#1386): the worker names each group's modules
        # in a file the scheduler reads, before it sends its collection
        names = sorted({"%s %s" % (item.nodeid.split("::", 1)[0], _group(item))
                        for item in items if _group(item) is not None})
        mine = "%s.%s" % (path, config.workerinput["workerid"])
        with open(mine, "w") as f:
            f.write("\n".join(names))
        os.replace(mine, path)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """Each xdist worker is told where to name the grouped modules."""
    config = node.config
    if getattr(config, "_group_list", None) is None:
        folder = tempfile.mkdtemp(prefix="pytest-groups-")
        config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
        config._group_list = os.path.join(folder, "modules")
    node.workerinput[_GROUP_LIST] = config._group_list


@pytest.hookimpl(optionalhook=True, tryfirst=True)  # before xdist's own, which would answer
def pytest_xdist_make_scheduler(config, log):
    """A module per work unit (as `--dist loadfile`), except each group's modules, which
    are one unit together: `--dist loadgroup`, the way this suite uses it."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadFileScheduling

    class ModulesAndGroups(LoadFileScheduling):
        groups = None

        def _split_scope(self, nodeid):
            if self.groups is None:  # every worker has collected by the first call
                with open(config._group_list) as f:
                    self.groups = dict(line.split() for line in f.read().splitlines())
            module = super()._split_scope(nodeid)
            return self.groups.get(module, module)

    return ModulesAndGroups(config, log)


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
