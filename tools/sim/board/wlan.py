"""The simulated club WiFi: a station interface shaped like the ESP32's network.WLAN.

    wlan = FakeWLAN(clock, ap=("club", "secret"))   # clock() -> the board's ms
    wlan.up = False                                 # the access point goes away
    wlan.active(True); wlan.connect("club", "secret"); wlan.isconnected()

Joining takes JOIN_MS of board time, as a real join takes a second or more; a wrong
SSID or password fails after that time with the ESP32's reason codes (status() below
1000, ports/esp32/modnetwork_globals.h: STAT_NO_AP_FOUND 201, STAT_WRONG_PASSWORD 202).
While `up` is False the station is disconnected and cannot join. The sockets that the
firmware then opens are the unix port's real ones, to a broker on 127.0.0.1.
"""

STAT_IDLE = 1000
STAT_CONNECTING = 1001
STAT_GOT_IP = 1010
STAT_NO_AP_FOUND = 201
STAT_WRONG_PASSWORD = 202
JOIN_MS = 1500


class FakeWLAN:
    PM_NONE = 0  # network.WLAN's power-save settings (ESP-IDF's WIFI_PS_*)
    PM_PERFORMANCE = 1
    PM_POWERSAVE = 2
    # The simulated station's addresses; its DNS server is on the loopback, where nothing
    # answers: a broker given by name is for the ESP32 twin, whose radio has a DNS.
    IFCONFIG = ("192.168.4.23", "255.255.255.0", "192.168.4.1", "127.0.0.1")

    def __init__(self, clock, ap=("club", "pinboard")):
        self.clock = clock
        self.ap = ap
        self.up = True
        self._active = False
        self._wanted = None
        self._started = 0
        self._joined = False
        self.joins = 0
        self.pm = self.PM_PERFORMANCE  # ESP-IDF's default: modem sleep

    def config(self, pm=None):
        if pm is not None:
            self.pm = pm

    def ifconfig(self):
        return self.IFCONFIG

    def active(self, flag=None):
        if flag is not None:
            self._active = bool(flag)
        return self._active

    def connect(self, ssid, password):
        if not self._active:
            raise OSError("WiFi Internal Error")  # as the ESP32 says for an inactive STA
        self._wanted = (ssid, password)
        self._started = self.clock()
        self._joined = False
        self.joins += 1

    def disconnect(self):
        self._wanted = None
        self._joined = False

    def _settled(self):
        return self._wanted is not None and self.clock() - self._started >= JOIN_MS

    def status(self):
        if self._wanted is None:
            return STAT_IDLE
        if not self._settled():
            return STAT_CONNECTING
        if not self.up or self._wanted[0] != self.ap[0]:
            return STAT_NO_AP_FOUND
        if self._wanted[1] != self.ap[1]:
            return STAT_WRONG_PASSWORD
        return STAT_GOT_IP

    def isconnected(self):
        if not self.up:
            self._joined = False
            if self._wanted is not None and self._settled():
                self._started = self.clock()  # a lost station keeps trying
            return False
        if not self._joined and self.status() == STAT_GOT_IP:
            self._joined = True
        return self._joined
