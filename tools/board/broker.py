"""The club's Mosquitto broker: its configuration (users, per-board ACL, TLS) and, for tests
and the bench, a broker process on 127.0.0.1.

    python -m tools.broker DIR --board table1 --board table2 --tls 192.168.1.10
        # writes DIR/mosquitto.conf, DIR/acl, DIR/passwd, the club's CA (DIR/ca.der for each
        # board's flash, ca.crt for the logger) and the broker's certificate for the
        # address the boards use; a TLS listener on 0.0.0.0:8883; a systemd unit
        # DIR/pinboard-broker.service. Asks nothing: the passwords are made up and printed
        # once, with each board's command key.
    python -m tools.broker DIR --board table1 --plain      # plain MQTT, on 127.0.0.1:1883 only
    python -m tools.broker DIR --board table1 --plain --bind 0.0.0.0   # ... said explicitly

    from tools.board.broker import Mosquitto, available
    with Mosquitto(tmp_dir, users={"t1": "pw"}, boards=["t1"], logger=("logger", "pw")) as b:
        b.port; b.kill(); b.start(); b.pause(); b.resume()

Passwords never cross the club's WiFi in clear unless the club says so: without --tls or
--plain nothing is written, and a plain listener listens on 127.0.0.1 unless --bind names
another address. Every packet is at most MAX_PACKET_BYTES (a board's largest message is a
few hundred bytes). Run as root, the files the broker reads are made readable by the user
Mosquitto drops to (`mosquitto`), and a folder that user cannot reach is refused.

The ACL gives each board (MQTT user = board id) write access to its own pinboard/<id>/state,
events and status and read access to its own pinboard/<id>/cmd, nothing else; the logger
user reads every board's state, events and status and writes every board's cmd. Anonymous
clients are refused. docs/network.md explains each line.
"""

import argparse
import grp
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
MOSQUITTO_PASSWD = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
# Mosquitto started as root drops to this user (its `user` option; the Debian package
# makes it), before it reads the password and ACL files.
BROKER_USER = "mosquitto"
# The largest MQTT packet the broker takes (Mosquitto 2.0's `max_packet_size`, man
# mosquitto.conf(5)): a bigger one disconnects its client before the broker reads it. A
# board sends one frame a message (at most 94 bytes on the wire, docs/protocol.md) under a
# topic of at most 48 bytes, its will and login in one CONNECT; the logger's commands are
# smaller still. 4 KB leaves room for frames grown by signatures.
MAX_PACKET_BYTES = 4096
UNIT_NAME = "pinboard-broker.service"


def available():
    """None when a broker can be started here, else why not (for a test's skip)."""
    if not os.access(MOSQUITTO, os.X_OK):
        return ("no MQTT broker: %s is not installed (Debian package mosquitto; "
                ".ci/run installs it)" % MOSQUITTO)
    if not os.access(MOSQUITTO_PASSWD, os.X_OK):
        return "no %s (Debian package mosquitto)" % MOSQUITTO_PASSWD
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def acl_text(boards, logger="logger"):
    lines = ["# The logger reads every board and sends commands to every board.",
             "user %s" % logger,
             "topic read pinboard/+/state",
             "topic read pinboard/+/events",
             "topic read pinboard/+/status",
             "topic write pinboard/+/cmd", ""]
    for board in boards:
        lines += ["# Board %s: its own topics only." % board,
                  "user %s" % board,
                  "topic write pinboard/%s/state" % board,
                  "topic write pinboard/%s/events" % board,
                  "topic write pinboard/%s/status" % board,
                  "topic read pinboard/%s/cmd" % board, ""]
    return "\n".join(lines)


def bridge_text(club, address, user, password, prefix=None):
    """The lines that bridge a club's broker to a federation's central broker: the boards'
    state, events and status go out under `clubs/<club>/`; nothing comes in, so commands
    stay with the club's own host."""
    prefix = prefix or "clubs/%s/" % club
    lines = ["# Bridge to the federation's central broker (docs/scaling.md).",
             "connection federation-%s" % club,
             "address %s" % address,
             "remote_clientid bridge-%s" % club,
             "remote_username %s" % user,
             "remote_password %s" % password,
             "bridge_protocol_version mqttv311",
             "try_private false",
             "cleansession false",
             "start_type automatic",
             "restart_timeout 2 30"]
    for what in ("state", "events", "status"):
        lines.append('topic pinboard/+/%s out 1 "" %s' % (what, prefix))
    return "\n".join(lines) + "\n"


def central_acl_text(clubs, logger="central"):
    """The central broker's ACL: each club's bridge writes under its own prefix only."""
    lines = ["user %s" % logger, "topic read clubs/+/pinboard/#", ""]
    for club in clubs:
        lines += ["user %s" % club, "topic write clubs/%s/pinboard/#" % club, ""]
    return "\n".join(lines)


def conf_text(directory, port, bind="127.0.0.1", run_as=None, plain=True):
    """mosquitto.conf's text: users, ACL, the packet limit; a plain listener on
    ``bind``:``port`` when ``plain`` (the TLS listener comes as tls_listener_text)."""
    return "\n".join([
        "# Mosquitto for the club's scoreboards (docs/network.md).",
        *(["user %s" % run_as] if run_as else []),
        "per_listener_settings false",
        *(["listener %d %s" % (port, bind)] if plain else []),
        "allow_anonymous false",
        "max_packet_size %d" % MAX_PACKET_BYTES,
        "password_file %s" % os.path.join(directory, "passwd"),
        "acl_file %s" % os.path.join(directory, "acl"),
        "persistence false",
        "max_queued_messages 10000",
        "log_dest file %s" % os.path.join(directory, "mosquitto.log"),
        "log_type error",
        "log_type warning",
        "log_type notice",
        # Not a line per connection: anyone on the network could fill the disk with
        # logins (two lines each, some 800 a second).
        "connection_messages false",
        "",
    ])


def write_config(directory, port, users, boards, logger="logger", bind="127.0.0.1",
                 run_as=None, acl=None, extra="", plain=True):
    """mosquitto.conf, acl and passwd in `directory`; users: {name: password}. ``plain``:
    a plain listener on ``bind``:``port`` (the tests' brokers, on 127.0.0.1); ``extra``:
    more lines (a TLS listener, a bridge)."""
    os.makedirs(directory, exist_ok=True)
    passwd = os.path.join(directory, "passwd")
    if os.path.exists(passwd):
        os.unlink(passwd)
    open(passwd, "w").close()
    os.chmod(passwd, 0o600)
    for name, password in users.items():
        subprocess.run([MOSQUITTO_PASSWD, "-b", passwd, name, password], check=True,
                       capture_output=True)
    with open(os.path.join(directory, "acl"), "w") as f:
        f.write(acl_text(boards, logger) if acl is None else acl)
    conf = os.path.join(directory, "mosquitto.conf")
    with open(conf, "w") as f:
        f.write(conf_text(directory, port, bind, run_as, plain) + extra)
    return conf


def unit_text(conf):
    """A systemd unit that runs the broker of ``conf`` (an absolute path) as a service."""
    return "\n".join([
        "# The club's MQTT broker for the scoreboards (docs/network.md). Install:",
        "#   cp %s /etc/systemd/system/" % UNIT_NAME,
        "#   systemctl daemon-reload && systemctl enable --now %s" % UNIT_NAME.split(".")[0],
        "[Unit]",
        "Description=Mosquitto for the club's scoreboards",
        "Documentation=man:mosquitto.conf(5)",
        "After=network-online.target",
        "Wants=network-online.target",
        "",
        "[Service]",
        "ExecStart=%s -c %s" % (MOSQUITTO, conf),
        "ExecReload=/bin/kill -HUP $MAINPID",
        "Restart=on-failure",
        "RestartSec=2",
        # Mosquitto 2.0 keeps a connection that never logs in: a high descriptor limit
        # makes filling it take tens of thousands of them.
        "LimitNOFILE=65536",
        "",
        "[Install]",
        "WantedBy=multi-user.target",
        ""])


def broker_user():
    """(uid, gid) of the user Mosquitto drops to when started as root, or None when there
    is none here (then it keeps root, and says so in its log)."""
    try:
        entry = pwd.getpwnam(BROKER_USER)
    except KeyError:
        return None
    return entry.pw_uid, entry.pw_gid


def unreachable(directory, uid, gid):
    """The first folder on the way to ``directory`` that user ``uid`` (group ``gid``) cannot
    pass through, or None."""
    groups = {gid} | {g.gr_gid for g in grp.getgrall() if BROKER_USER in g.gr_mem}
    path = os.path.abspath(directory)
    chain = []
    while True:
        chain.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for folder in reversed(chain):
        st = os.stat(folder)
        if st.st_uid == uid:
            ok = st.st_mode & stat.S_IXUSR
        elif st.st_gid in groups:
            ok = st.st_mode & stat.S_IXGRP
        else:
            ok = st.st_mode & stat.S_IXOTH
        if not ok:
            return folder
    return None


def hand_to_broker(directory, uid, gid, secret=("passwd", "acl", "server.key")):
    """Run as root: the folder and the files the broker reads become readable by its user
    (group ``gid``, no access for others); the log file is the broker's own."""
    os.chown(directory, -1, gid)
    os.chmod(directory, 0o750)
    for name in secret:
        path = os.path.join(directory, name)
        if os.path.exists(path):
            os.chown(path, 0, gid)
            os.chmod(path, 0o640)
    for name in ("mosquitto.conf", "server.crt", "ca.crt", "ca.der", UNIT_NAME):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            os.chmod(path, 0o644)
    log = os.path.join(directory, "mosquitto.log")
    open(log, "a").close()
    os.chown(log, uid, gid)
    os.chmod(log, 0o640)
    work = os.path.join(directory, "ca-work")  # the CA's papers: root's alone
    if os.path.isdir(work):
        os.chmod(work, 0o700)
    key = os.path.join(directory, "ca.key")
    if os.path.exists(key):
        os.chmod(key, 0o600)


class Mosquitto:
    """A broker on 127.0.0.1 on a free port, with users and the per-board ACL."""

    def __init__(self, directory, users, boards, logger="logger", port=None, acl=None,
                 extra=""):
        self.directory = directory
        self.port = port or free_port()
        # Started as root (CI), mosquitto would drop to its own user, which cannot read
        # the files of a test's folder: it keeps the user that started it.
        run_as = "root" if os.geteuid() == 0 else None
        self.conf = write_config(directory, self.port, users, boards, logger, run_as=run_as,
                                 acl=acl, extra=extra)
        self.proc = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self, timeout=10.0):
        self.proc = subprocess.Popen([MOSQUITTO, "-c", self.conf], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("mosquitto exited: %s" % self.proc.stderr.read().decode())
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not listen on port %d" % self.port)

    def kill(self):
        """The broker dies at once (no goodbye to anyone)."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGCONT)
                self.proc.kill()
            self.proc.wait(5)
            self.proc.stderr.close()
            self.proc = None

    def pause(self):
        """Freeze the broker: connections stay open, nothing is answered (a slow broker)."""
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self):
        self.proc.send_signal(signal.SIGCONT)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.proc is not None:
            self.proc.stderr.close()
        self.proc = None

    def log(self):
        try:
            with open(os.path.join(self.directory, "mosquitto.log")) as f:
                return f.read()
        except OSError:
            return ""


# The certificates of a club's TLS listener (docs/network.md, "TLS"): a CA of the club's
# own, whose certificate goes to each board's flash as ca.der, and the broker's RSA 2048
# certificate (the key exchange the boards use is RSA), issued for the broker's address.
# Both are valid from 1999: an ESP32 whose clock was never set thinks it is 2000, and
# mbedtls refuses a certificate that is not valid yet.
VALID_FROM = "19991231000000Z"
VALID_UNTIL = "20991231000000Z"
_CA_CONF = """[ca]
default_ca = club
[club]
dir = {dir}
database = {dir}/index.txt
new_certs_dir = {dir}
serial = {dir}/serial
default_md = sha256
policy = anything
copy_extensions = copy
[anything]
commonName = supplied
[ca_cert]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[broker_cert]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment, keyAgreement
extendedKeyUsage = serverAuth
authorityKeyIdentifier = keyid
"""


def make_certificates(directory, address="127.0.0.1", openssl=None, key="rsa"):
    """ca.der, ca.crt, server.crt and server.key in `directory`, made by `openssl`; the
    broker's certificate names `address` (an IP address or a host name). key "ec": P-256
    keys instead of RSA 2048 (for tools.bench.tls's comparison; boards use RSA)."""
    openssl = openssl or shutil.which("openssl") or "openssl"
    newkey = (["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"] if key == "ec"
              else ["-newkey", "rsa:2048"])
    work = os.path.join(directory, "ca-work")
    os.makedirs(work, exist_ok=True)
    conf = os.path.join(work, "ca.cnf")
    with open(conf, "w") as f:
        f.write(_CA_CONF.format(dir=work))
    open(os.path.join(work, "index.txt"), "w").close()
    with open(os.path.join(work, "serial"), "w") as f:
        f.write("%016x\n" % secrets.randbits(63))
    path = {name: os.path.join(directory, name)
            for name in ("ca.key", "ca.crt", "ca.der", "server.key", "server.crt")}
    is_ip = all(part.isdigit() for part in address.split(".")) and address.count(".") == 3
    san = ("IP:" if is_ip else "DNS:") + address

    def run(*args):
        subprocess.run([openssl, *args], check=True, capture_output=True)

    dates = ["-startdate", VALID_FROM, "-enddate", VALID_UNTIL]
    run("req", "-new", *newkey, "-nodes", "-keyout", path["ca.key"],
        "-out", os.path.join(work, "ca.csr"), "-subj", "/CN=pinboard club CA")
    run("ca", "-batch", "-config", conf, "-selfsign", "-keyfile", path["ca.key"],
        "-in", os.path.join(work, "ca.csr"), "-out", path["ca.crt"], "-extensions", "ca_cert",
        "-notext", *dates)
    run("req", "-new", *newkey, "-nodes", "-keyout", path["server.key"],
        "-out", os.path.join(work, "server.csr"), "-subj", "/CN=" + address,
        "-addext", "subjectAltName=" + san)
    run("ca", "-batch", "-config", conf, "-cert", path["ca.crt"], "-keyfile", path["ca.key"],
        "-in", os.path.join(work, "server.csr"), "-out", path["server.crt"],
        "-extensions", "broker_cert", "-notext", *dates)
    run("x509", "-in", path["ca.crt"], "-outform", "der", "-out", path["ca.der"])
    os.chmod(path["server.key"], 0o600)
    return path


def tls_listener_text(directory, port, bind="127.0.0.1"):
    """Mosquitto's lines for a TLS 1.2 listener with the certificates of make_certificates
    (the users, passwords and ACL of the plain listener hold for it too)."""
    return "\n".join([
        "listener %d %s" % (port, bind),
        "certfile %s" % os.path.join(directory, "server.crt"),
        "keyfile %s" % os.path.join(directory, "server.key"),
        "tls_version tlsv1.2",
        "",
    ])


def _port(text):
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError("%r: a port is 1 to 65535" % text)
    return int(text)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m tools.broker",
        description="Write a Mosquitto configuration for the club: TLS (--tls ADDRESS), or "
        "plain MQTT on this computer only (--plain).")
    ap.add_argument("directory")
    ap.add_argument("--board", action="append", required=True, metavar="ID",
                    help="a board's id (its MQTT user name); repeatable")
    ap.add_argument("--logger", default="logger", help="the logger's user name")
    ap.add_argument("--tls", metavar="ADDRESS",
                    help="a TLS listener on --tls-port (8883); its certificate names "
                         "ADDRESS, the broker's address as the boards' net.host gives it")
    ap.add_argument("--tls-port", type=_port, default=8883)
    ap.add_argument("--plain", action="store_true",
                    help="a plain listener on --port (1883): passwords in clear, so on "
                         "127.0.0.1 unless --bind says otherwise")
    ap.add_argument("--port", type=_port, default=1883)
    ap.add_argument("--bind", metavar="ADDRESS",
                    help="the address to listen on (default: 0.0.0.0 for TLS, 127.0.0.1 "
                         "for --plain)")
    args = ap.parse_args(argv)
    if not args.tls and not args.plain:
        ap.error("give --tls ADDRESS (the broker's address as the boards reach it: TLS, "
                 "the default a club should use) or --plain (plain MQTT on 127.0.0.1)")
    if available():
        print(available(), file=sys.stderr)
        return 2
    directory = os.path.abspath(args.directory)
    owner = broker_user() if os.geteuid() == 0 else None
    if owner is not None:
        above = os.path.dirname(directory)  # DIR itself is made reachable below
        while not os.path.exists(above):
            above = os.path.dirname(above)  # folders made here are (umask 022)
        blocked = unreachable(above, *owner)
        if blocked is not None:
            ap.error("%s: Mosquitto started as root drops to user %s, which cannot enter %s "
                     "(mode %s): choose a folder it can reach, e.g. /etc/mosquitto/club"
                     % (directory, BROKER_USER, blocked,
                        stat.filemode(os.stat(blocked).st_mode)))
    os.makedirs(directory, exist_ok=True)
    users = {name: secrets.token_urlsafe(12) for name in [args.logger, *args.board]}
    extra = ""
    if args.tls:
        make_certificates(directory, args.tls)
        extra = tls_listener_text(directory, args.tls_port, args.bind or "0.0.0.0")
    plain_bind = args.bind or "127.0.0.1"
    conf = write_config(directory, args.port, users, args.board, args.logger, plain_bind,
                        extra=extra, plain=args.plain)
    with open(os.path.join(directory, UNIT_NAME), "w") as f:
        f.write(unit_text(conf))
    if owner is not None:
        hand_to_broker(directory, *owner)
    listening = []
    if args.tls:
        listening.append("TLS on %s:%d" % (args.bind or "0.0.0.0", args.tls_port))
    if args.plain:
        listening.append("plain MQTT on %s:%d" % (plain_bind, args.port))
        if plain_bind not in ("127.0.0.1", "::1", "localhost"):
            print("tools.broker: the plain listener on %s sends the boards' passwords in "
                  "clear over the network" % plain_bind, file=sys.stderr)
    print("wrote %s (mosquitto.conf, acl, passwd, %s%s): %s; start it with mosquitto -c %s "
          "or as a service (docs/network.md)" % (
              directory, UNIT_NAME, ", ca.der for each board's flash, ca.crt for the "
              "logger, server.crt, server.key" if args.tls else "", ", ".join(listening),
              conf))
    for name, password in users.items():
        if name == args.logger:
            print("logger %s password %s" % (name, password))
        else:
            print("board %s password %s key %s" % (name, password, secrets.token_hex(32)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
