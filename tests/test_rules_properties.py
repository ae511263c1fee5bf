"""Property tests over random event sequences for every rules id (hypothesis).

The strategies here (game_settings, events, playable_script, script_text) are also used
by test_replay_upy.py."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rules_core import Game, GameError, resume, snapshot

FOUL_CODES = ["foul", "quilles", "rouge", "stop30", "dehors", "wrongball"]


@st.composite
def game_settings(draw):
    rules = draw(st.sampled_from(["ddbu", "ceb", "russian"]))
    d1 = draw(st.integers(1, 60))
    d2 = draw(st.one_of(st.just(d1), st.integers(1, 60)))
    sets = draw(st.sampled_from([1, 3, 5])) if rules == "ceb" else 1
    first = draw(st.sampled_from([1, 2]))
    teams = draw(st.sampled_from([0, 1])) if rules == "ceb" else 0
    return rules, (d1, d2), sets, first, teams


shot = st.tuples(
    st.just("shot"),
    st.integers(0, 31),
    st.sampled_from([0, 0, 0, 1, 2]),
    st.one_of(st.just(()), st.just(()), st.lists(st.sampled_from(FOUL_CODES), min_size=1,
                                                  max_size=3, unique=True).map(tuple)),
)
adjust = st.tuples(st.just("adjust"), st.sampled_from([1, 2]),
                   st.integers(-20, 20).filter(lambda d: d != 0))
undo = st.just(("undo",))
event = st.one_of(shot, shot, shot, shot, adjust, undo)
events = st.lists(event, max_size=60)


def apply(game, ev):
    if ev[0] == "shot":
        game.shot(pins=ev[1], carom=ev[2], fouls=ev[3])
    elif ev[0] == "adjust":
        game.adjust(ev[1], ev[2])
    else:
        game.undo()


def line(ev):
    if ev[0] == "undo":
        return "undo"
    if ev[0] == "adjust":
        return "adjust %d %d" % (ev[1], ev[2])
    words = ["shot"]
    if ev[1]:
        words.append("pins=" + ",".join(str(k + 1) for k in range(5) if ev[1] >> k & 1))
    if ev[2]:
        words.append(("carom", "casino")[ev[2] - 1])
    if ev[3]:
        words.append("foul=" + ",".join(ev[3]))
    return " ".join(words)


def script_text(setting, evs):
    rules, (d1, d2), sets, first, teams = setting
    head = ["rules " + rules, "distance %d %d" % (d1, d2), "sets %d" % sets,
            "first %d" % first, "teams %d" % teams, "# random game"]
    return "\n".join(head + [line(ev) for ev in evs]) + "\n"


@st.composite
def playable_script(draw):
    """Script text whose events the game accepts, so every line gets traced."""
    setting = draw(game_settings())
    game = Game(*setting)
    kept = []
    for ev in draw(events):
        try:
            apply(game, ev)
        except GameError:
            continue
        kept.append(ev)
    return script_text(setting, kept)


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_invariants(game):
    s = game.state()
    for p in range(2):
        assert s["score"][p] >= 0
        assert s["remaining"][p] == max(0, s["distance"][p] - s["score"][p])
        if s["rules"] != "russian":
            assert s["score"][p] <= s["distance"][p]
    assert s["turn"] in (1, 2)
    assert s["innings"][s["turn"] - 1] >= 1
    assert (s["winner"] is None) == (s["status"] != "finished")
    assert len(game.history) == 4 * (len(game.history) // 4)


@FAST
@given(game_settings(), events)
def test_random_games_keep_the_invariants_and_undo_to_the_start(setting, evs):
    game = Game(*setting)
    initial = game.state_json()
    for ev in evs:
        before = (game.state_json(), game.history.tobytes())
        try:
            apply(game, ev)
        except GameError:
            assert (game.state_json(), game.history.tobytes()) == before
        check_invariants(game)
    while len(game.history):
        game.undo()
        check_invariants(game)
    assert game.state_json() == initial


@FAST
@given(game_settings(), events, events)
def test_pack_unpack_round_trip_and_undo_after_resume(setting, evs, more):
    game = Game(*setting)
    for ev in evs:
        try:
            apply(game, ev)
        except GameError:
            pass
    resumed = resume.unpack(snapshot.pack(game))
    assert resumed.state() == game.state()
    assert resumed.history.tobytes() == game.history.tobytes()
    payload = snapshot.pack_state(game)
    assert len(payload) <= 60
    assert snapshot.unpack_state(payload) == game.state()
    for ev in more:
        results = []
        for g in (game, resumed):
            try:
                apply(g, ev)
                results.append("ok")
            except GameError as e:
                results.append(str(e))
        assert results[0] == results[1]
        assert resumed.state_json() == game.state_json()


def expected_members(before, after):
    """members after a shot, from RULES.md section 2 alone (CEB 28.3, CEB 21 rulings)."""
    members = list(before["members"])
    last = after["last"]
    if last["to"] == last["player"] and last["points"] > 0:
        members[2 - last["player"]] = 3 - members[2 - last["player"]]
    if sum(after["sets"]) > sum(before["sets"]) and after["status"] != "finished":
        members = [1, 1]  # a new set: each team's first player
    return members


@FAST
@given(st.builds(lambda d, s, f: ("ceb", (d, d), s, f, 1), st.integers(1, 40),
                 st.sampled_from([1, 3, 5]), st.sampled_from([1, 2])), events)
def test_team_members_follow_the_rule_and_undo_restores_them_exactly(setting, evs):
    game = Game(*setting)
    states = [game.state()]  # the state after each event still standing
    for ev in evs:
        try:
            apply(game, ev)
        except GameError:
            continue
        now = game.state()
        if ev[0] == "undo":
            states.pop()
            assert now == states[-1]
            continue
        if ev[0] == "shot":
            assert now["members"] == expected_members(states[-1], now)
        else:
            assert now["members"] == states[-1]["members"]  # an adjust is not a shot
        played = sum(now["sets"]) - (1 if now["status"] == "finished" else 0)
        opener = setting[3] if played % 2 == 0 else 3 - setting[3]
        assert now["marked"] == 3 - opener
        states.append(now)
    resumed = resume.unpack(snapshot.pack(game))
    while len(game.history):
        game.undo()
        resumed.undo()
        states.pop()
        assert game.state() == resumed.state() == states[-1]
