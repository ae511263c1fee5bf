"""Numbers the board holds as private constants are the ones of their one table.

The board keeps the link's frame kinds, command kinds, flags and error codes, and the
error codes boardlib's modules report, as `_NAME = const(N)`, folded into the bytecode (no
name in its heap), so no other module can import them. The link's table is the host's,
tools/linkcodes.py; the "Err NN" codes' is firmware/errors.py. These tests read the
constants out of the board's sources, as mpy-cross compiles them, and hold each to its
table. What the numbers do on the wire is tested by the protocol tests
(tests/test_protocol.py runs the board's Link on MicroPython against the host's numbers);
the error codes by the network tests (tests/test_net_units.py and the twin's).
"""

import ast
from pathlib import Path

import pytest

from rules_core.settings import RULES_IDS
from tools import linkcodes

ROOT = Path(__file__).resolve().parent.parent
# The modules that hold the link's numbers.
HOLDERS = ("boardlib/link.py", "firmware/app.py", "boardlib/mqttlink.py")
TABLE = {name: value for name, value in vars(linkcodes).items()
         if name.isupper() and isinstance(value, int)}


def board_constants(relpath):
    return constants_in((ROOT / relpath).read_text(), relpath)


def constants_in(source, relpath):
    """The module-level private constants of a board module: {NAME: value} for `_NAME =
    const(N)` (N a number, or a sum of earlier constants)."""
    found = {}
    for node in ast.parse(source).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id.startswith("_")
                and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", None) == "const"):
            expr = ast.Expression(node.value.args[0])
            names = {"_" + key: value for key, value in found.items()}
            found[node.targets[0].id[1:]] = eval(compile(expr, relpath, "eval"), {}, names)
    return found


def test_the_link_holds_every_number_of_the_hosts_table():
    board = board_constants("boardlib/link.py")
    assert {name: board.get(name) for name in TABLE} == TABLE


@pytest.mark.parametrize("relpath", HOLDERS)
def test_a_board_modules_link_numbers_are_the_hosts(relpath):
    board = board_constants(relpath)
    shared = {name: value for name, value in board.items() if name in TABLE}
    assert shared, relpath + " holds none of the link's numbers"
    assert shared == {name: TABLE[name] for name in shared}


@pytest.mark.parametrize("relpath", HOLDERS)
def test_no_board_module_holds_a_command_or_error_number_the_host_lacks(relpath):
    for name, value in board_constants(relpath).items():
        if name.startswith(("CMD_", "ERR_")):
            assert TABLE.get(name) == value, (relpath, name, value)


def test_the_rules_numbers_are_the_rules_table_order():
    assert linkcodes.RULES is RULES_IDS


def test_a_number_changed_on_the_board_alone_is_seen():
    source = (ROOT / "firmware/app.py").read_text()
    assert "_CMD_UNDO = const(0x82)" in source
    changed = constants_in(source.replace("_CMD_UNDO = const(0x82)", "_CMD_UNDO = const(0x83)"),
                           "firmware/app.py")
    assert changed["CMD_UNDO"] == 0x83 != TABLE["CMD_UNDO"]


# The "Err NN" codes: firmware/errors.py names every one (boardlib's privately).
ERROR_HOLDERS = ("boardlib/netdial.py", "boardlib/netlogin.py", "boardlib/nettls.py",
                 "boardlib/mqttlink.py")


def error_table():
    from firmware import errors

    table = {name: value for name, value in vars(errors).items()
             if name.isupper() and not name.startswith("_") and isinstance(value, int)}
    table.update(board_constants("firmware/errors.py"))
    return table


def test_the_error_table_gives_each_code_one_name():
    table = error_table()
    assert len(set(table.values())) == len(table)


@pytest.mark.parametrize("relpath", ERROR_HOLDERS)
def test_a_board_modules_error_codes_are_the_error_tables(relpath):
    table = error_table()
    board = board_constants(relpath)
    held = {name: value for name, value in board.items() if name in table}
    assert held, relpath + " holds none of the error codes"
    assert held == {name: table[name] for name in held}


def test_the_configurations_codes_are_the_error_tables():
    from boardlib import config

    table = error_table()
    assert (config.ERR_CONFIG_CORRUPT, config.ERR_CONFIG_VALUE) == (
        table["CONFIG_BAD"], table["CONFIG_VALUE"])


# The network link's states and its stream's modes: boardlib/netstream.py's, held privately
# by the modules that use them.
STATE_HOLDERS = ("boardlib/mqttlink.py", "boardlib/netconfig.py", "boardlib/netdial.py",
                 "boardlib/netlogin.py", "boardlib/nettls.py")


def netstream_numbers():
    from boardlib import netstream

    table = {name: value for name, value in vars(netstream).items()
             if name.isupper() and isinstance(value, int)}
    table.update(board_constants("boardlib/netstream.py"))
    return table


@pytest.mark.parametrize("relpath", STATE_HOLDERS)
def test_a_board_modules_link_states_are_the_streams(relpath):
    table = netstream_numbers()
    held = {name: value for name, value in board_constants(relpath).items()
            if name in table}
    assert held, relpath + " holds none of the link's states"
    assert held == {name: table[name] for name in held}
