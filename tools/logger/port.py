"""What the logger knows of one board's link: its serial port (or its place on the broker),
the frames read and waiting, the requests in flight and the counts of what was refused.

    port = Port("/dev/ttyUSB1")      # or Port("mqtt:t1") for a board on the broker
    port.counters["gaps"]            # the link's counts, stored with the board's link stats
"""

import random

from tools.logger import frames


class Port:
    """One board's serial port and what the logger knows about its link."""

    def __init__(self, path):
        self.path = path
        self.serial = None
        self.reader = frames.FrameReader()
        self.expect = None
        self.seq_mask = 0xFFFF  # serial frames count in 16 bits; sealed MQTT ones in 32
        self.last_frame_at = None
        self.mark = None  # MQTT: (nonce, Proof) of the last frame taken, to be stored
        self.board_key = None
        self.board = None
        self.boot_id = None
        self.hello_asked_at = None
        self.waiting = []  # game frames that came before the board said who it is
        self.backlog = []  # frames read but not yet stored (the database was busy)
        self.read_since_flush = False
        # A random start: a restarted logger's commands are never taken by the board for
        # repeats of the last logger's (the board answers a repeat without running it).
        self.cmd_seq = random.randrange(0x10000)
        self.state_wanted_at = None
        self.events_asked_at = {}  # (game row, number) -> when
        self.incomplete = {}  # game row -> when its events were last checked
        self.current_game = None  # the game row of the board's latest state
        self.logged = set()  # game rows the board was told are logged
        self.event_requests = {}  # seq of a CMD_EVENT -> game row it asked about
        self.given_up = set()  # game rows whose missing events the board no longer has
        self.disputed_said = set()  # game rows whose disputed claim was said on stderr
        self.restoring = set()  # game rows whose lost events are being handed back
        self.restore_sent = {}  # (game row, number) -> when CMD_RESTORE was sent
        self.last_open_try = 0.0
        self.opened_once = False
        self.open_error = None  # the last reason the port could not be opened
        # (first missing seq, seq that showed the gap or ended a silence), most recent last
        self.gap_log = []
        self.trace = None  # set to a list to record every accepted (seq, kind, payload)
        self.answers = []  # (kind, fields) of ACK and ERROR frames, most recent last
        self.counters = dict.fromkeys(
            ("gaps", "missing", "state_requests", "reconnects", "device_rx_frames",
             "device_rx_bad", "device_tx_frames", "replayed", "stale", "unknown_protocol",
             "events_requested", "db_busy", "silences", "no_key", "unsigned", "wrong_board",
             "repeated", "old_boot", "disputed"), 0)
