// The new-game form of a table's page: a distance each (handicap), and the distances the
// two players' averages suggest (docs/club.md, "A fair distance").
//
// The club practice it follows: each player may play to a distance of their own (the DDBU
// rules, §4.1, speak of a player's "own distance"), set from the player's average: the
// average times a number of innings that is the same for both, as carom leagues set a
// player's distance (docs/club.md, "A fair distance", cites one). Here
// the number of innings is the one in which the stronger player (the higher average) makes
// the distance typed in the form:
//     innings = distance / max(average 1, average 2)
//     distance of player P = round(average P x innings), at least 1, at most the largest
// so both players need about the same number of innings. Averages are points per inning in
// the rules chosen, over the finished games where the player's name was set; a player with
// no such game gets no suggestion.
"use strict";
(function () {
  const form = document.getElementById("new-game");
  if (!form) return;
  const data = document.getElementById("averages");
  const averages = data ? JSON.parse(data.textContent) : {};
  const handicap = document.getElementById("handicap");
  const field = (name) => form.querySelector('[name="' + name + '"]');
  const hint = document.getElementById("suggestion");
  const use = document.getElementById("use-suggestion");
  let suggested = null;

  function average(rules, name) {
    const table = averages[rules] || {};
    const key = (text) => text.trim().normalize("NFC").toLowerCase();  // as names are one player
    const want = key(name);
    for (const known in table) if (key(known) === want) return table[known];
    return null;
  }

  function rulesText() {
    const select = field("rules");
    return select.options[select.selectedIndex].text;
  }

  function suggest() {
    suggested = null;
    const rules = field("rules").value;
    const names = [field("name1").value.trim(), field("name2").value.trim()];
    const distance = parseInt(field("distance").value, 10);
    const top = parseInt(field("distance").max, 10);
    const got = names.map((n) => (n ? average(rules, n) : null));
    if (!names[0] || !names[1] || !(distance > 0)) {
      hint.textContent = "";
    } else if (!got[0] || !got[1] || !(got[0][0] > 0) || !(got[1][0] > 0)) {
      const none = names.filter((n, i) => !got[i] || !(got[i][0] > 0));
      hint.textContent = "No suggested distance: " + none.join(" and ") + " "
        + (none.length > 1 ? "have" : "has") + " no average in " + rulesText() + " yet.";
    } else {
      const innings = distance / Math.max(got[0][0], got[1][0]);
      suggested = got.map((g) => Math.max(1, Math.min(top, Math.round(g[0] * innings))));
      hint.textContent = "Suggested from the averages in " + rulesText() + " ("
        + names[0] + " " + got[0][0].toFixed(2) + ", " + names[1] + " "
        + got[1][0].toFixed(2) + ": about " + Math.round(innings) + " innings each): "
        + names[0] + " " + suggested[0] + ", " + names[1] + " " + suggested[1] + ".";
    }
    use.hidden = !suggested;
    window.clubSuggested = suggested;  // the tests read it
  }

  function each() {
    for (const name of ["distance1", "distance2"]) field(name).disabled = !handicap.checked;
    if (!handicap.checked) {
      field("distance1").value = field("distance").value;
      field("distance2").value = field("distance").value;
    }
  }

  use.addEventListener("click", () => {
    if (!suggested) return;
    handicap.checked = true;
    each();
    field("distance1").value = suggested[0];
    field("distance2").value = suggested[1];
  });
  handicap.addEventListener("change", each);
  for (const name of ["rules", "name1", "name2", "distance"]) {
    field(name).addEventListener("input", () => { if (name === "distance") each(); suggest(); });
    field(name).addEventListener("change", suggest);
  }
  suggest();
})();
