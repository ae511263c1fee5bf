// The live pages: every server-sent `tables` event fills the cards in place (no reload).
// Text only ever goes in through textContent: a player's name is never read as HTML.
"use strict";
(function () {
  const BREAK_S = 300;  // the board's break countdown (firmware/screens.py)
  const root = document.getElementById("tables");
  if (!root) return;
  const only = root.dataset.only || null;
  const tables = {};
  let clockOffset = 0;  // server time minus this browser's time, in seconds
  // Tests read these: the page was not reloaded, and how many events it took in.
  window.clubLive = {loadedAt: Date.now() + Math.random(), events: 0, tables: tables};

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

  function announcement(t, now) {
    const s = t.state;
    if (s.status === "finished") {
      if (s.winner === "tie") return "Draw";
      return s.winner ? "Winner: " + who(t, s.winner) : "Finished";
    }
    if (s.status === "break") {
      const since = t.break_since || t.updated;
      const left = Math.max(0, Math.round(BREAK_S - (now - since)));
      const m = Math.floor(left / 60), sec = left % 60;
      return "Break " + m + ":" + (sec < 10 ? "0" : "") + sec;
    }
    const said = [];
    for (const item of s.announce || []) {
      const [what, p] = item.split(":");
      const player = p ? who(t, Number(p)) : "";
      if (what === "20-remaining") said.push("20 remaining: " + player);
      else if (what === "distance") said.push(player + " reached the distance");
      else if (what === "last-series") said.push("Last series: " + player);
      else if (what === "set") said.push("Set to " + player);
    }
    return said.join(" · ");
  }

  function fill(card, t, now) {
    const s = t.state;
    card.dataset.board = t.board;
    card.classList.remove("playing", "break", "finished");
    card.classList.add(s.status);
    set(card, "table", "Table " + (t.label || t.board));
    set(card, "rules", t.rules_name || s.rules);  // the rules core's name, from the server
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
      set(card, "member" + p, s.members ? "#" + s.members[i] + " at the table" : "");
      set(card, "score" + p, String(s.score[i]));
      set(card, "remaining" + p, s.remaining[i] + " to go");
      set(card, "sets" + p, s.best_of > 1 ? "sets " + s.sets[i] : "");
      set(card, "innings" + p, "innings " + s.innings[i]);
      set(card, "high" + p, "high " + s.high[i]);
    }
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
  }

  function cardFor(board) {
    let card = root.querySelector('.card[data-board="' + CSS.escape(board) + '"]');
    if (card) return card;
    const template = document.getElementById("card-template");
    if (!template) return null;
    card = template.content.firstElementChild.cloneNode(true);
    const after = Array.from(root.querySelectorAll(".card")).find((c) => c.dataset.board > board);
    root.insertBefore(card, after || null);
    density();
    const empty = document.getElementById("empty");
    if (empty) empty.hidden = true;
    return card;
  }

  // Many tables on one TV: smaller cards, more of them a row (club.css .dense, .denser).
  function density() {
    const count = root.querySelectorAll(".card").length;
    root.classList.toggle("dense", count > 6 && count <= 12);
    root.classList.toggle("denser", count > 12);
  }

  function now() { return Date.now() / 1000 + clockOffset; }

  function take(message) {
    clockOffset = message.now - Date.now() / 1000;
    for (const t of message.tables) {
      if (only !== null && t.board !== only) continue;
      tables[t.board] = t;
      const card = cardFor(t.board);
      if (card) fill(card, t, now());
    }
    window.clubLive.events += 1;
  }

  function connect() {
    const source = new EventSource("/events");
    const lost = document.getElementById("connection");
    source.addEventListener("tables", (e) => take(JSON.parse(e.data)));
    source.onopen = () => { if (lost) lost.hidden = true; };
    source.onerror = () => { if (lost) lost.hidden = false; };  // EventSource retries itself
  }

  // The break countdown runs on between events.
  setInterval(() => {
    for (const board in tables) {
      const t = tables[board];
      if (t.state.status !== "break") continue;
      const card = cardFor(board);
      if (card) set(card, "announce", announcement(t, now()));
    }
  }, 1000);
  if (!only) density();
  connect();
})();
