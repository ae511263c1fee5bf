"""Both players' scores over a game's shots, as an inline SVG picture.

    svg = score_chart(record.scores, names=["Anna", "Ben"], distance=[40, 40],
                      new_sets=[14, 30])

``scores``: [(shot number, score 1, score 2)] from (0, 0, 0) on, as a GameRecord
(tools.records) gives them (the score as the board shows it after each shot; in a match of
sets the current set's). One
polyline per player (`data-player` 1 and 2), axes with the shot numbers and points, a
dashed line at each player's distance, a dotted line where a new set begins, and a legend
with the names (escaped: a name is text, never markup).

The plot's scale is on the `<svg>` element, so that a reader (a test, a script) can turn
every vertex back into (shot, score): x = data-x0 + shot * data-dx, y = data-y0 - score *
data-dy.
"""

from html import escape

COLOURS = ("#ffd24d", "#5cc8ff")  # player 1 yellow, player 2 blue: apart on a dark page
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 34, 30


def _nice_top(value):
    """The y axis' top: the next round number at or above ``value``."""
    for step in (10, 20, 50, 100, 200, 500, 1000, 2000, 5000):
        if value <= step * 10:
            return max(step, -(-value // step) * step)
    return value


def _num(x):
    return ("%.6f" % x).rstrip("0").rstrip(".")


def _pos(x):
    return ("%.3f" % x).rstrip("0").rstrip(".")


def score_chart(scores, names=(None, None), distance=None, new_sets=(), width=720,
                height=300):
    """The SVG text (an `<svg>` element) of the scores over the shots."""
    scores = list(scores) or [(0, 0, 0)]
    shots = max(n for n, _, _ in scores)
    top = _nice_top(max([s for _, a, b in scores for s in (a, b)] + list(distance or [])
                        + [1]))
    plot_w, plot_h = width - LEFT - RIGHT, height - TOP - BOTTOM
    dx = round(plot_w / max(shots, 1), 6)  # as written on the <svg>: the exact scale
    dy = round(plot_h / top, 6)
    x0, y0 = LEFT, TOP + plot_h
    labels = [escape(name or "Player %d" % (i + 1)) for i, name in enumerate(names)]
    out = ['<svg xmlns="http://www.w3.org/2000/svg" class="score-chart" role="img" '
           'viewBox="0 0 %d %d" width="%d" height="%d" data-x0="%s" data-y0="%s" '
           'data-dx="%s" data-dy="%s" aria-label="Scores over the shots: %s and %s">'
           % (width, height, width, height, _num(x0), _num(y0), _num(dx), _num(dy),
              labels[0], labels[1])]
    out.append('<title>Scores over the shots</title>')
    # axes, with the points on the left and the shot numbers below
    out.append('<g class="axes" stroke="#8a8a8a" stroke-width="1">'
               '<line x1="%s" y1="%s" x2="%s" y2="%s"/><line x1="%s" y1="%s" x2="%s" y2="%s"/>'
               '</g>' % (_num(x0), TOP, _num(x0), _num(y0), _num(x0), _num(y0),
                         _num(x0 + plot_w), _num(y0)))
    out.append('<g class="ticks" fill="#c8c8c8" font-size="12" font-family="sans-serif">')
    for value in range(0, top + 1, max(1, top // 4)):
        y = y0 - value * dy
        out.append('<text x="%s" y="%s" text-anchor="end">%d</text>'
                   % (_num(x0 - 6), _num(y + 4), value))
    step = max(1, -(-shots // 10))
    for n in range(0, shots + 1, step):
        out.append('<text x="%s" y="%s" text-anchor="middle">%d</text>'
                   % (_num(x0 + n * dx), _num(y0 + 18), n))
    out.append('</g>')
    for n in new_sets:
        x = x0 + (n - 1) * dx if n > 0 else x0
        out.append('<line class="new-set" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#6a6a6a" '
                   'stroke-dasharray="2 4"/>' % (_num(x), TOP, _num(x), _num(y0)))
    for i, d in enumerate(distance or ()):
        y = y0 - d * dy
        out.append('<line class="distance" data-player="%d" x1="%s" y1="%s" x2="%s" y2="%s" '
                   'stroke="%s" stroke-opacity="0.5" stroke-dasharray="6 4"/>'
                   % (i + 1, _num(x0), _num(y), _num(x0 + plot_w), _num(y), COLOURS[i]))
    for i in (0, 1):
        points = " ".join("%s,%s" % (_pos(x0 + n * dx), _pos(y0 - s[i] * dy))
                          for n, *s in scores)
        out.append('<polyline class="score" data-player="%d" fill="none" stroke="%s" '
                   'stroke-width="3" stroke-linejoin="round" points="%s"/>'
                   % (i + 1, COLOURS[i], points))
    # the legend: each name beside its colour
    out.append('<g class="legend" font-size="14" font-family="sans-serif">')
    x = LEFT
    for i in (0, 1):
        out.append('<rect x="%d" y="10" width="14" height="14" fill="%s"/>' % (x, COLOURS[i]))
        out.append('<text x="%d" y="22" fill="#eeeeee" data-player="%d">%s</text>'
                   % (x + 20, i + 1, labels[i]))
        x += 40 + 9 * len(names[i] or "Player %d" % (i + 1))
    out.append('</g></svg>')
    return "".join(out)
