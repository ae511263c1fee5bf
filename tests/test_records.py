"""The database's one writer: the threads of one process (the logger's, the club app's
pages) share it, and a transaction stays whole whoever else writes meanwhile."""

import threading
import time

from tools.logger.store import Store
from tools.records import Records


def test_a_transaction_of_one_thread_is_never_cut_by_another_threads_write(tmp_path):
    path = str(tmp_path / "games.db")
    store = Store(path)  # the logger's side
    with store.transaction():
        board = store.board("b1", "port")
        game = store.game(board, {"game_id": "00" * 8, "game": 1})
    records = Records.open(store.database)  # the club's side, the same Database
    inside = threading.Event()
    named = []

    def name_it():
        inside.wait(5)
        named.append(records.set_names(game, ["Anna", "Ben"]))

    other = threading.Thread(target=name_it)
    other.start()
    with store.transaction() as s:  # a logger's burst: two rows, a while apart
        s.db.execute("INSERT INTO errors (board, port, code) VALUES (?, 'port', 1)", (board,))
        inside.set()
        time.sleep(0.3)  # the other thread tries to write now
        s.db.execute("INSERT INTO errors (board, port, code) VALUES (?, 'port', 2)", (board,))
        assert named == []  # it waits for this transaction to end
    other.join(5)
    assert named == [["Anna", "Ben"]]
    con = records.con
    assert [r[0] for r in con.execute("SELECT code FROM errors ORDER BY id")] == [1, 2]
    assert con.execute("SELECT COUNT(*) FROM club_name_log").fetchone()[0] == 2
    store.close()


def test_a_failed_transaction_leaves_nothing_and_the_writer_goes_on(tmp_path):
    path = str(tmp_path / "games.db")
    store = Store(path)
    with store.transaction():
        board = store.board("b1", "port")
        store.game(board, {"game_id": "00" * 8, "game": 1})
    records = Records.open(store.database)
    try:
        records.set_names(1, ["Anna", "anna"])  # one player on both sides: refused
    except ValueError:
        pass
    assert records.players() == [] and records.names(1) == [None, None]
    assert records.set_names(1, ["Anna", "Ben"]) == ["Anna", "Ben"]
    store.close()
