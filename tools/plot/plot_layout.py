"""The bench plot's drawing (tools/plot/plot_bench.py): every block is placed in inches from the
figure's top, each below the last, the figure as tall and as wide as its blocks need (the
widest case label and ratio name measured first), so nothing is placed over anything else;
`overlaps` checks that this held."""
import matplotlib.pyplot as plt
from matplotlib.patches import Patch
from matplotlib.text import Text

from plot_bench import FAMILIES, FIG_WIDTH_IN, FONT, NA, ROW_IN, TABLE_ROW_IN, rate_text
from plot_bench import ratio_text

MARGIN_IN = 0.3
LINE_IN = 0.22


class Sheet:
    """A figure laid out from the top in inches."""

    def __init__(self, fig, width_in, height_in):
        self.fig, self.width, self.height = fig, width_in, height_in
        fig.set_size_inches(width_in, height_in)

    def text(self, x_in, y_in, s, **kw):
        """Text whose top-left corner is x_in from the left, y_in from the top."""
        kw.setdefault('fontsize', FONT)
        return self.fig.text(x_in / self.width, 1 - y_in / self.height, s,
                             va=kw.pop('va', 'top'), ha=kw.pop('ha', 'left'), **kw)

    def axes(self, left_in, top_in, width_in, height_in):
        return self.fig.add_axes([left_in / self.width, 1 - (top_in + height_in) / self.height,
                                  width_in / self.width, height_in / self.height])


def text_width_in(fig, strings, **kw):
    """The widest of `strings` as drawn, in inches."""
    renderer = fig.canvas.get_renderer()
    widest = 0.0
    for s in strings:
        t = Text(0, 0, s, fontsize=kw.get('fontsize', FONT), figure=fig,
                 fontweight=kw.get('fontweight', 'normal'))
        widest = max(widest, t.get_window_extent(renderer).width / fig.dpi)
    return widest


def color_of(case_id):
    return next((c for prefix, _, c in FAMILIES if case_id.startswith(prefix)), '#555555')


def spread_text(case):
    if case['median'] is None:
        return f'{NA} (not measured)'
    low, high = rate_text(case['min']), rate_text(case['max'])
    return f"{rate_text(case['median'])}/s ({low}..{high})"


def draw_bars(sheet, top, cases, label_w, value_w):
    """The records/s of every case: a bar per median, min..max as a whisker, the figures in a
    column to the right of the axes. Returns the inches used."""
    ax_left = MARGIN_IN + label_w + 0.15
    ax_width = sheet.width - ax_left - value_w - 0.25 - MARGIN_IN
    height = ROW_IN * len(cases)
    ax = sheet.axes(ax_left, top, ax_width, height)
    ys = list(range(len(cases)))[::-1]
    for y, c in zip(ys, cases):
        if c['median'] is None:
            continue
        ax.barh(y, c['median'], height=0.62, color=color_of(c['id']))
        if c['min'] is not None and c['max'] is not None:
            ax.errorbar(c['median'], y, xerr=[[c['median'] - c['min']],
                                              [c['max'] - c['median']]],
                        fmt='none', ecolor='black', elinewidth=0.9, capsize=2.5)
        ax.axhline(y, color='#eeeeee', linewidth=0.5, zorder=0)
    highest = max([c['max'] or c['median'] or 0 for c in cases] + [1])
    ax.set_xlim(0, highest * 1.04)
    ax.set_ylim(-0.6, len(cases) - 0.4)
    ax.set_yticks(ys, [c['label'] for c in cases], fontsize=FONT)
    ax.xaxis.set_major_formatter(lambda v, _: rate_text(v) if v > 0 else '0')
    ax.tick_params(axis='x', labelsize=FONT - 1)
    ax.grid(axis='x', color='#dddddd', linewidth=0.6)
    ax.set_axisbelow(True)
    for side in ('top', 'right'):
        ax.spines[side].set_visible(False)
    ax.set_xlabel('records/s: bar the median over rounds, whisker min..max', fontsize=FONT)
    sheet.text(ax_left + ax_width + 0.25, top - 0.3, 'median (min..max)', fontweight='bold')
    for y, c in zip(ys, cases):
        row_middle = top + (len(cases) - 1 - y) * ROW_IN + ROW_IN * 0.5
        sheet.text(ax_left + ax_width + 0.25, row_middle, spread_text(c), fontsize=FONT - 0.5,
                   va='center')
    return height + 0.6


def draw_ratios(sheet, top, ratios, name_w):
    """The ratio table: the paired median first, the per-round range, the ratio of medians."""
    columns = [('ratio of records/s', 0), ('paired median', name_w + 0.3),
               ('per-round range', name_w + 1.45), ('ratio of medians', name_w + 2.75),
               ('target', name_w + 4.05), ('', name_w + 4.85)]
    sheet.text(MARGIN_IN, top, 'Ratios: each round\'s ratio of the two cases, the median over '
               'rounds (the paired median, the headline) beside the ratio of the medians',
               fontsize=FONT + 1, fontweight='bold')
    y = top + 0.32
    for title, x in columns:
        sheet.text(MARGIN_IN + x, y, title, fontweight='bold')
    for r in ratios:
        y += TABLE_ROW_IN
        rng = (f"{ratio_text(r['min'])}..{ratio_text(r['max'])}"
               if r['min'] is not None and r['max'] is not None else NA)
        verdict = {True: ('met', '#2e7d32'), False: ('MISSED', '#c62828'),
                   None: ('', 'black')}[r['met']]
        cells = [r['name'], ratio_text(r['paired']), rng, ratio_text(r['of_medians']),
                 f">= {r['target']:.2f}" if r['target'] is not None else '-', verdict[0]]
        for i, ((_, x), cell) in enumerate(zip(columns, cells)):
            bold = (i == 1 and cell != NA) or cell == 'MISSED'
            sheet.text(MARGIN_IN + x, y, cell, fontweight='bold' if bold else 'normal',
                       color=verdict[1] if i == 5 else 'black')
    return y - top + TABLE_ROW_IN


def layout_sizes(fig, cases, ratios, texts):
    label_w = text_width_in(fig, [c['label'] for c in cases])
    value_w = text_width_in(fig, [spread_text(c) for c in cases] + ['median (min..max)'],
                            fontweight='bold')
    name_w = text_width_in(fig, [r['name'] for r in ratios] + ['ratio of records/s'],
                           fontweight='bold')
    line_w = text_width_in(fig, texts['processing'] + texts['footer'])
    width = max(FIG_WIDTH_IN, MARGIN_IN * 2 + name_w + 5.6, MARGIN_IN * 2 + line_w + 0.1,
                MARGIN_IN * 2 + label_w + value_w + 5.0)
    height = (0.55 + 0.35 + 0.45 + ROW_IN * len(cases) + 0.6 + 0.45
              + 0.6 + TABLE_ROW_IN * len(ratios) + 0.35
              + LINE_IN * (len(texts['processing']) + len(texts['footer'])) + 0.3 + MARGIN_IN)
    return label_w, value_w, name_w, width, height


def draw(cases, ratios, texts, report):
    fig = plt.figure(dpi=100)
    label_w, value_w, name_w, width, height = layout_sizes(fig, cases, ratios, texts)
    sheet = Sheet(fig, width, height)
    rounds = report.get('rounds')
    sheet.text(MARGIN_IN, MARGIN_IN, f'Restore benchmark: records/s of each case over {rounds} '
               'rounds', fontsize=FONT + 4, fontweight='bold')
    sheet.text(MARGIN_IN, MARGIN_IN + 0.33, f"changelog: {report.get('changelog') or NA}",
               fontsize=FONT - 0.5, color='#333333')
    handles = [Patch(color=color, label=label) for prefix, label, color in FAMILIES
               if any(c['id'].startswith(prefix) for c in cases)]
    sheet.fig.legend(handles=handles, loc='upper left', ncol=3, frameon=False,
                     fontsize=FONT, bbox_to_anchor=(MARGIN_IN / width, 1 - 0.85 / height),
                     borderaxespad=0, handlelength=1.2, columnspacing=1.5)
    top = 0.55 + 0.35 + 0.45 + 0.3
    top += draw_bars(sheet, top, cases, label_w, value_w) + 0.45
    top += draw_ratios(sheet, top, ratios, name_w) + 0.35
    for line in texts['processing']:
        sheet.text(MARGIN_IN, top, line)
        top += LINE_IN
    top += 0.15
    for line in texts['footer']:
        bad = line.startswith('UNRELIABLE')
        sheet.text(MARGIN_IN, top, line, fontsize=FONT - 0.5,
                   color='#c62828' if bad else '#444444', fontweight='bold' if bad else 'normal')
        top += LINE_IN
    return fig


def boxes(fig):
    """(description, bbox in pixels) of every visible, non-empty text (but the legend's own),
    the legend and the axes."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    in_legend = {id(t) for legend in fig.legends for t in legend.get_texts()}
    out = []
    for t in fig.findobj(Text):
        if t.get_visible() and t.get_text().strip() and id(t) not in in_legend:
            out.append((f'text {t.get_text()[:40]!r}', t.get_window_extent(renderer)))
    for legend in fig.legends:
        out.append(('the legend', legend.get_window_extent(renderer)))
    for ax in fig.axes:
        out.append(('the bars', ax.get_window_extent(renderer)))
    return out


def overlaps(fig):
    """What overlaps what, or lies outside the figure (1 px of slack): [] when all is clear.
    A text may overlap no other text, the legend or the bars."""
    found, items = [], boxes(fig)
    full = fig.bbox
    for name, box in items:
        if box.x0 < full.x0 - 1 or box.y0 < full.y0 - 1 or box.x1 > full.x1 + 1 \
                or box.y1 > full.y1 + 1:
            found.append(f'{name} is clipped by the figure edge')
    for i, (a, box_a) in enumerate(items):
        for b, box_b in items[i + 1:]:
            if (a.startswith('text') or b.startswith('text')) and overlap(box_a, box_b):
                found.append(f'{a} overlaps {b}')
    return found


def overlap(a, b, slack=0.5):
    return (a.x0 + slack < b.x1 and b.x0 + slack < a.x1 and a.y0 + slack < b.y1
            and b.y0 + slack < a.y1)
