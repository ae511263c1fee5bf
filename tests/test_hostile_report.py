"""The hostile_report fixture: counts recorded by tests appear at the end of the run."""

import os

import pytest

pytest_plugins = ["pytester"]

CONFTEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conftest.py")


def _with_project_conftest(pytester):
    with open(CONFTEST) as f:
        pytester.makeconftest(f.read())


def test_counts_are_printed_and_summed_by_name(pytester):
    _with_project_conftest(pytester)
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("n", [3, 4])
        def test_storm(hostile_report, n):
            hostile_report("link: duplicated frames", sent=n, refused=n - 1)

        def test_other(hostile_report):
            hostile_report("logger: locked database", waits=7)
        """
    )
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "*hostile conditions: counts*",
            "link: duplicated frames: sent=7 refused=5",
            "logger: locked database: waits=7",
        ]
    )


def test_no_section_without_counts(pytester):
    _with_project_conftest(pytester)
    pytester.makepyfile("def test_quiet():\n    pass\n")
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=1)
    assert "hostile conditions" not in result.stdout.str()


@pytest.mark.parametrize("bad", [{}, {"sent": 1.5}, {"sent": True}])
def test_counts_must_be_whole_numbers(hostile_report, bad):
    with pytest.raises((TypeError, ValueError)):
        hostile_report("bad", **bad)
