// The live pages: every server-sent `tables` event fills the cards in place (no reload).
// Text only ever goes in through textContent: a player's name is never read as HTML.
// The event stream is closed when the page is left (pagehide) and opened again when it is
// shown from the browser's back/forward cache (pageshow): a left page holds no connection
// (a browser allows six per host). The words of a card are those of the server's first
// paint (tools/club/cardtext.py); the calls are spoken with the browser's speech synthesis.
"use strict";
(function () {
  const BREAK_S = 300;  // the board's break countdown (firmware/screens.py)
  const QUIET_S = 40;   // nothing heard (an event or the server's 15 s ping): stale
  const root = document.getElementById("tables");
  if (!root) return;
  const only = root.dataset.only || null;
  const tables = {};
  let clockOffset = 0;  // server time minus this browser's time, in seconds
  let source = null;
  let heard = Date.now();
  // Tests read these: the page was not reloaded, how many events it took in, the
  // connections it opened, and every call it made (spoken or not).
  window.clubLive = {loadedAt: Date.now() + Math.random(), events: 0, tables: tables,
    opened: 0, calls: []};

  function who(t, p) {
    const name = t.names && t.names[p - 1];
    return name ? name : "Player " + p;
  }

  function set(card, field, text) {
    const el = card.querySelector('[data-f="' + field + '"]');
    if (el && el.textContent !== text) el.textContent = text;
    return el;
  }

  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }
  function clock(s) {
    s = Math.max(0, Math.round(s));
    const m = Math.floor(s / 60), sec = s % 60;
    return m + ":" + (sec < 10 ? "0" : "") + sec;
  }

  // In rules where a lone carambole may pass the distance (russian), the game goes on.
  function past(t, p) {
    const s = t.state;
    return t.past && s.status !== "finished" && s.score[p - 1] >= s.distance[p - 1];
  }

  function remaining(t, p) {
    return past(t, p) ? "past the distance" : t.state.remaining[p - 1] + " to go";
  }

  function lastSet(t) {
    const r = t.set_results;
    return r && r.length ? r[r.length - 1] : null;
  }

  function announcement(t, now) {
    const s = t.state;
    if (s.status === "finished") {
      if (s.winner === "tie") return "Draw";
      if (!s.winner) return "Finished";
      return "Winner: " + who(t, s.winner)
        + (s.best_of > 1 ? ", " + s.sets[0] + " : " + s.sets[1] + " in sets" : "");
    }
    if (s.status === "break") {
      const since = t.break_since || t.updated;
      return "Break " + clock(BREAK_S - (now - since));
    }
    const said = [];
    for (const item of s.announce || []) {
      const [what, p] = item.split(":");
      const player = p ? who(t, Number(p)) : "";
      if (what === "20-remaining") said.push("20 remaining: " + player);
      else if (what === "distance") {
        if ((s.announce || []).includes("set:" + p)) continue;  // "Set to ..." says it
        said.push(past(t, Number(p))
          ? player + " is past the distance with a lone carambole: the game goes on"
          : player + " reached the distance");
      } else if (what === "last-series") said.push("Last series: " + player);
      else if (what === "set") {
        const r = lastSet(t);
        said.push("Set to " + player + (r ? ", " + r.score[0] + " : " + r.score[1] : ""));
      }
    }
    return said.join(" · ");
  }

  function setResults(t) {
    const r = t.set_results;
    return r && r.length ? "sets " + r.map((x) => x.score[0] + " : " + x.score[1]).join(" · ")
      : "";
  }

  function rulesName(t) { return t.rules_name || t.state.rules; }

  function pendingText(t, now) {
    const p = t.pending;
    if (!p) return "";
    const d = p.distance;
    let what = p.rules_name + " to " + (d[0] === d[1] ? d[0] : d[0] + " / " + d[1]);
    if (p.sets > 1) what += ", best of " + p.sets;
    return "New game waiting for ok on the board: " + what + " · " + clock(p.until - now)
      + " left";
  }

  function fill(card, t, now) {
    const s = t.state;
    const label = t.label || t.board;
    card.dataset.board = t.board;
    card.dataset.label = label;
    card.classList.remove("playing", "break", "finished");
    card.classList.add(s.status);
    const name = set(card, "table", "Table " + label);
    if (name && name.tagName === "A") name.setAttribute("href", "/table/" + label);
    const qr = card.querySelector('[data-f="qr"]');
    if (qr && !qr.getAttribute("src")) qr.setAttribute("src", "/qr/" + label + ".svg");
    set(card, "rules", rulesName(t));  // the rules core's name, from the server
    const d = s.distance;
    set(card, "distance", d[0] === d[1] ? "to " + d[0] : "to " + d[0] + " / " + d[1]);
    set(card, "bestof", s.best_of > 1 ? "best of " + s.best_of : "");
    for (const p of [1, 2]) {
      const i = p - 1;
      const row = card.querySelector('[data-player="' + p + '"]');
      const here = s.turn === p && s.status !== "finished";
      row.classList.toggle("at-table", here);
      row.classList.toggle("winner", s.winner === p);
      set(card, "turn" + p, here ? "▶" : "");
      set(card, "name" + p, who(t, p));
      set(card, "marked" + p, "●").hidden = s.marked !== p;
      set(card, "member" + p, s.members ? "player " + s.members[i] + " at the table"
        : "").hidden = !s.members;
      set(card, "score" + p, String(s.score[i]));
      set(card, "sets" + p, s.best_of > 1 ? String(s.sets[i]) : "").hidden = !(s.best_of > 1);
      set(card, "remaining" + p, remaining(t, p));
      set(card, "innings" + p, "innings " + s.innings[i]);
      set(card, "high" + p, "high " + s.high[i]);
    }
    const results = setResults(t);
    set(card, "setresults", results).hidden = !results;
    let last = "";
    if (s.last) {
      last = "last shot: " + who(t, s.last.player) + (s.last.foul ? ", foul" : "") + ", "
        + plural(s.last.points, "point")
        + (s.last.to !== s.last.player ? " to " + who(t, s.last.to) : "");
    }
    set(card, "last", last);
    set(card, "series", s.series ? "series " + s.series : "");
    const said = announcement(t, now);
    set(card, "announce", said).hidden = !said;
    const waiting = pendingText(t, now);
    set(card, "pending", waiting).hidden = !waiting;
  }

  function cardFor(board) {
    let card = root.querySelector('.card[data-board="' + CSS.escape(board) + '"]');
    if (card) return card;
    const template = document.getElementById("card-template");
    if (!template) return null;
    card = template.content.firstElementChild.cloneNode(true);
    const after = Array.from(root.querySelectorAll(".card")).find((c) => c.dataset.board > board);
    root.insertBefore(card, after || null);
    layout();
    const empty = document.getElementById("empty");
    if (empty) empty.hidden = true;
    return card;
  }

  // The TV: the grid is laid out for the number of tables (club.css, [data-count]).
  function layout() {
    const count = root.querySelectorAll(".card").length;
    root.dataset.count = String(count);
    root.classList.toggle("denser", count > 12);
    document.body.classList.toggle("many", count > 12);
  }

  function now() { return Date.now() / 1000 + clockOffset; }

  // -- the calls -----------------------------------------------------------------------
  // What a referee calls after a shot and at the milestones, in Danish, English and
  // Russian. Each language says: a shot (name, points, what is left), a foul, the 20
  // remaining, the distance, the last series, a set, the break and the game.
  function ru(n, one, few, many) {  // Russian plural: 1 очко, 2 очка, 5 очков
    const m10 = n % 10, m100 = n % 100;
    if (m10 === 1 && m100 !== 11) return n + " " + one;
    if (m10 >= 2 && m10 <= 4 && (m100 < 12 || m100 > 14)) return n + " " + few;
    return n + " " + many;
  }
  const PHRASES = {
    en: {lang: "en-GB",
      table: (l) => "Table " + l + ".",
      shot: (n, pts, left) => n + ", " + pts + (left === null ? "" : " — " + left + " to go"),
      nothing: (n) => n + ", no score",
      foul: (n, pts, to) => "Foul, " + n + (pts ? ": " + pts + " to " + to : ""),
      twenty: () => "20 remaining",
      distance: (n) => n + " reaches the distance",
      past: (n) => n + " is past the distance with a carambole: the game goes on",
      last: (n) => "Last series: " + n,
      set: (n, a, b) => "Set to " + n + (a === null ? "" : ", " + a + " to " + b),
      brk: () => "Break, five minutes",
      game: (n, a, b) => "Game. " + n + " wins, " + a + " to " + b,
      match: (n, a, b) => "Game and match. " + n + " wins, " + a + " sets to " + b,
      draw: () => "Game. A draw"},
    da: {lang: "da-DK",
      table: (l) => "Bord " + l + ".",
      shot: (n, pts, left) => n + ", " + pts + (left === null ? "" : " — " + left + " tilbage"),
      nothing: (n) => n + ", ingen points",
      foul: (n, pts, to) => "Fejl, " + n + (pts ? ": " + pts + " til " + to : ""),
      twenty: () => "20 tilbage",
      distance: (n) => n + " har nået distancen",
      past: (n) => n + " er over distancen på et rødt: partiet fortsætter",
      last: (n) => "Sidste serie: " + n,
      set: (n, a, b) => "Sættet til " + n + (a === null ? "" : ", " + a + " mod " + b),
      brk: () => "Pause, fem minutter",
      game: (n, a, b) => "Parti. " + n + " vinder " + a + " mod " + b,
      match: (n, a, b) => "Parti og kamp. " + n + " vinder " + a + " sæt mod " + b,
      draw: () => "Parti. Uafgjort"},
    ru: {lang: "ru-RU",
      table: (l) => "Стол " + l + ".",
      shot: (n, pts, left) => n + ", " + ru(pts, "очко", "очка", "очков")
        + (left === null ? "" : " — осталось " + left),
      nothing: (n) => n + ", без очков",
      foul: (n, pts, to) => "Штраф, " + n + (pts ? ": " + ru(pts, "очко", "очка", "очков")
        + " партнёру, " + to : ""),
      twenty: () => "Осталось 20",
      distance: (n) => n + " набирает партию",
      past: (n) => n + ": карамболь партию не кончает, игра продолжается",
      last: (n) => "Последняя серия: " + n,
      set: (n, a, b) => "Сет выигрывает " + n + (a === null ? "" : ", " + a + ":" + b),
      brk: () => "Перерыв пять минут",
      game: (n, a, b) => "Партия. Выигрывает " + n + ", " + a + ":" + b,
      match: (n, a, b) => "Партия. Матч выигрывает " + n + ", " + a + ":" + b + " по сетам",
      draw: () => "Партия. Ничья"},
  };

  const calls = {on: false, lang: "da"};
  try {
    calls.on = localStorage.getItem("club.calls") === "on";
    calls.lang = localStorage.getItem("club.calls.lang") || navigator.language.slice(0, 2);
  } catch (e) { /* storage switched off: the switch still works for this page */ }
  if (!PHRASES[calls.lang]) calls.lang = "en";

  // What is called for one table's new state (after `before`, the state last seen).
  function callsFor(t, before) {
    const s = t.state, w = PHRASES[calls.lang], out = [];
    if (!before || s.shots === before.shots || s.shots < before.shots) return out;
    if (s.last) {
      const p = s.last.player, n = who(t, p);
      if (s.last.foul) out.push(w.foul(n, s.last.points, who(t, s.last.to)));
      else if (!s.last.points) out.push(w.nothing(n));
      else {
        const gone = s.status === "finished" || (s.announce || []).some(
          (a) => a.startsWith("set:") || a.startsWith("distance:"));
        out.push(w.shot(n, s.last.points, gone || past(t, p) ? null : s.remaining[p - 1]));
      }
    }
    for (const item of s.announce || []) {
      const [what, q] = item.split(":");
      const n = q ? who(t, Number(q)) : "";
      if (what === "20-remaining") out.push(w.twenty(n));
      else if (what === "distance" && s.status !== "finished") {
        if (past(t, Number(q))) out.push(w.past(n));
        else if (!(s.announce || []).some((a) => a.startsWith("set:"))) out.push(w.distance(n));
      } else if (what === "last-series") out.push(w.last(n));
      else if (what === "set" && s.status !== "finished") {
        const r = lastSet(t);
        out.push(w.set(n, r ? r.score[0] : null, r ? r.score[1] : null));
      } else if (what === "break") out.push(w.brk());
    }
    if (s.status === "finished" && before.status !== "finished") {
      if (s.winner === "tie") out.push(w.draw());
      else if (s.best_of > 1) out.push(w.match(who(t, s.winner), s.sets[s.winner - 1],
        s.sets[2 - s.winner]));
      else out.push(w.game(who(t, s.winner), s.score[s.winner - 1], s.score[2 - s.winner]));
    }
    if (out.length && !only) out.unshift(w.table(t.label || t.board));
    return out;
  }

  function say(t, before) {
    if (!calls.on) return;
    const lines = callsFor(t, before);
    if (!lines.length) return;
    const text = lines.join(". ").replace(/\.\./g, ".");
    const lang = PHRASES[calls.lang].lang;
    window.clubLive.calls.push({board: t.board, lang: lang, text: text});
    if (window.speechSynthesis && window.SpeechSynthesisUtterance) {
      const u = new SpeechSynthesisUtterance(text);
      u.lang = lang;
      window.speechSynthesis.speak(u);
    }
  }

  function switches() {
    const box = document.getElementById("calls");
    const lang = document.getElementById("calls-lang");
    if (!box || !lang) return;
    box.checked = calls.on;
    lang.value = calls.lang;
    const keep = () => {
      calls.on = box.checked;
      calls.lang = lang.value;
      try {
        localStorage.setItem("club.calls", calls.on ? "on" : "off");
        localStorage.setItem("club.calls.lang", calls.lang);
      } catch (e) { /* kept for this page only */ }
      if (!calls.on && window.speechSynthesis) window.speechSynthesis.cancel();
    };
    box.addEventListener("change", keep);
    lang.addEventListener("change", keep);
  }

  // -- the event stream ------------------------------------------------------------------

  function take(message) {
    clockOffset = message.now - Date.now() / 1000;
    for (const t of message.tables) {
      if (only !== null && t.board !== only) continue;
      const before = tables[t.board];
      tables[t.board] = t;
      const card = cardFor(t.board);
      if (card) fill(card, t, now());
      if (!message.all) say(t, before && before.game === t.game ? before.state : null);
    }
    window.clubLive.events += 1;
  }

  function stale(yes) {
    document.body.classList.toggle("stale", yes);
    const lost = document.getElementById("connection");
    if (lost) lost.hidden = !yes;
  }

  function connect() {
    if (source) return;
    source = new EventSource("/events");
    window.clubLive.opened += 1;
    heard = Date.now();
    source.addEventListener("tables", (e) => { heard = Date.now(); stale(false);
      take(JSON.parse(e.data)); });
    source.addEventListener("ping", () => { heard = Date.now(); stale(false); });
    source.onopen = () => { heard = Date.now(); stale(false); };
    source.onerror = () => stale(true);  // EventSource retries by itself
  }

  function disconnect() {
    if (source) source.close();
    source = null;
  }

  // A page left for another closes its stream; shown again from the back/forward cache,
  // it opens a new one (and gets every table afresh).
  window.addEventListener("pagehide", disconnect);
  window.addEventListener("pageshow", (e) => { if (e.persisted || !source) connect(); });

  // Once a second: the countdowns run on between events, and a stream that has heard
  // nothing for QUIET_S is taken for lost.
  setInterval(() => {
    for (const board in tables) {
      const t = tables[board];
      if (t.state.status !== "break" && !t.pending) continue;
      const card = cardFor(board);
      if (card) fill(card, t, now());
    }
    if (source && Date.now() - heard > QUIET_S * 1000) stale(true);
  }, 1000);
  if (!only) layout();
  switches();
  connect();
})();
