#!/usr/bin/env python3
"""Renders the restore bench's JSON report
(`restoresim bench restore --backend fake|kafka --json-out F`) as an SVG with matplotlib: the
records/s of every case (the median over rounds, a bar, with
the min..max range as a whisker and written beside it), the ratios with the within-round paired
median beside the ratio of medians and the per-round range, the processing pair, and what the
run was (backend, machine, rounds, whether the machine was busy).

A figure that is missing, null, negative or -1 (the fake backend's "not measured") is written
"n/a", never drawn or printed as a number. A report of an older binary is read with the fields
it has: without `paired_median` a ratio's paired median is its `per_round.median` (the same
figure), without `reliable` the run's load is said to be unknown. A field the plot needs that
is missing or of the wrong type is an error naming it (exit 2). After drawing, every text's box
is checked to lie inside the figure and to overlap no other text, the legend and no data
(exit 1 naming the two if not): the plot is only written when nothing overlaps.

usage: tools/plot-bench REPORT.json [-o OUT.svg] [--png OUT.png]
"""
import argparse
import json
import math
import pathlib
import statistics
import sys

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402

FAMILIES = (('limit.', 'the limits (what the machine allows)', '#9e9e9e'),
            ('ours.', 'ours (restoresim runtime)', '#1f77b4'),
            ('peer.', 'Kafka Streams', '#ff7f0e'))
NA = 'n/a'
ROW_IN = 0.30       # a bar's row, inches
TABLE_ROW_IN = 0.25  # a ratio's row
FIG_WIDTH_IN = 13.0
FONT = 9


class ReportError(Exception):
    """A report the plot cannot read; the message names the field."""


def field(obj, key, where, kind=None, optional=False):
    """obj[key], checked: present (unless optional) and of `kind` (None: any)."""
    if not isinstance(obj, dict):
        raise ReportError(f'{where}: expected an object')
    if key not in obj:
        if optional:
            return None
        raise ReportError(f"{where}: missing field '{key}'")
    value = obj[key]
    if kind is not None and value is not None and not isinstance(value, kind):
        raise ReportError(f"{where}.{key}: expected {getattr(kind, '__name__', kind)}, "
                          f'got {type(value).__name__}')
    return value


def measured(value):
    """The value if it is a measured figure (a finite number above 0), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) and value > 0 else None


def rate_text(value):
    """4.08M, 571k, 1.00M: three significant figures."""
    value = measured(value)
    if value is None:
        return NA
    for scale, suffix in ((1e6, 'M'), (1e3, 'k'), (1, '')):
        if value >= scale or scale == 1:
            v = value / scale
            digits = 0 if v >= 100 else 1 if v >= 10 else 2
            return f'{v:.{digits}f}{suffix}'
    return NA


def ratio_text(value):
    value = measured(value)
    return NA if value is None else f'{value:.2f}'


def spread(obj, key, where):
    """(min, median, max) of a {min, median, max} field, each None when not measured."""
    s = field(obj, key, where, dict)
    if s is None:
        return (None, None, None)
    return tuple(measured(field(s, k, f'{where}.{key}')) for k in ('min', 'median', 'max'))


def read_cases(report):
    cases = []
    for i, c in enumerate(field(report, 'cases', 'report', list)):
        where = f'cases[{i}]'
        case_id = field(c, 'id', where, str)
        low, median, high = spread(c, 'records_per_second', where)
        cases.append({'id': case_id, 'label': field(c, 'label', where, str),
                      'records': field(c, 'changelog_records', where, int, optional=True),
                      'min': low, 'median': median, 'max': high})
    if not cases:
        raise ReportError("report: 'cases' is empty")
    return cases


def read_ratios(report):
    ratios, older = [], False
    for i, r in enumerate(field(report, 'ratios', 'report', list)):
        where = f'ratios[{i}]'
        low, per_round_median, high = spread(r, 'per_round', where)
        paired = field(r, 'paired_median', where, (int, float), optional=True)
        if 'paired_median' not in r:
            older, paired = True, per_round_median
        target = measured(field(r, 'target', where, (int, float), optional=True))
        met = None if target is None or measured(paired) is None else paired >= target
        ratios.append({'name': field(r, 'name', where, str), 'paired': measured(paired),
                       'of_medians': measured(field(r, 'ratio_of_medians', where,
                                                    (int, float))),
                       'min': low, 'max': high, 'target': target, 'met': met})
    return ratios, older


def pair_summary(pair, where):
    """The median over the rounds that measured a ratio (both rates above 0, a window above
    0), with how many did; None when none did (a -1 or negative figure is not a measurement)."""
    ratios = []
    for i, r in enumerate(field(pair, 'rounds', where, list)):
        busy = measured(field(r, 'rate_while_restoring', f'{where}.rounds[{i}]',
                              (int, float), optional=True))
        idle = measured(field(r, 'rate_idle', f'{where}.rounds[{i}]', (int, float),
                              optional=True))
        window = measured(field(r, 'window_s', f'{where}.rounds[{i}]', (int, float),
                                optional=True))
        if busy and idle and window:
            ratios.append(busy / idle)
    rounds = len(pair['rounds'])
    return (statistics.median(ratios) if ratios else None), len(ratios), rounds


def measured_of(ratio, n, rounds):
    if ratio is None:
        return f'{NA}: none of the {rounds} rounds measured one'
    return f'{ratio_text(ratio)} (median of the {n} of {rounds} rounds that measured one)'


def processing_lines(report):
    pair = field(report, 'processing', 'report', dict, optional=True)
    if pair is None:
        return ['processing pair: not in this report']
    ours, n, rounds = pair_summary(pair, 'processing')
    target = measured(pair.get('target'))
    lines = [f'processing pair, processing rate while another task restores / idle: '
             + measured_of(ours, n, rounds) + (f'; target >= {target:.2f}' if target else '')]
    peer = pair.get('kafka_streams')
    if isinstance(peer, dict):
        theirs, m, peer_rounds = pair_summary(peer, 'processing.kafka_streams')
        lines.append('Kafka Streams, the same pair: ' + measured_of(theirs, m, peer_rounds))
    return lines


def footer_lines(report, older, source):
    machine = report.get('machine') or 'machine not recorded'
    rounds = report.get('rounds')
    seconds = measured(report.get('seconds'))
    lines = [f"{report.get('backend') or 'backend not recorded'}; {rounds} rounds"
             + (f' in {seconds:.0f} s' if seconds else '') + f'; {machine}']
    reliable = report.get('reliable')
    if reliable is False:
        lines.append(f"UNRELIABLE: {report.get('unreliable_reason') or 'the machine was busy'}"
                     '; a loaded run is not a result')
    elif reliable is None:
        lines.append('load averages per round: not in this report (an older binary); '
                     'at the start and end: the line above')
    problems = report.get('problems') or []
    lines.append(f'{len(problems)} problems reported' if problems else
                 'every store checked equal to its changelog\'s fold (no problem reported)')
    if older:
        lines.append('paired median: the per-round ratios\' median (this report predates the '
                     "'paired_median' field)")
    lines.append(f'from {source} by tools/plot-bench')
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('report', type=pathlib.Path)
    parser.add_argument('-o', '--output', type=pathlib.Path, default=None)
    parser.add_argument('--png', type=pathlib.Path, default=None)
    args = parser.parse_args()
    output = args.output or args.report.with_suffix('.svg')
    try:
        report = json.loads(args.report.read_text())
        cases = read_cases(report)
        ratios, older = read_ratios(report)
        texts = {'processing': processing_lines(report),
                 'footer': footer_lines(report, older, args.report.name)}
    except (OSError, ValueError, ReportError) as e:
        print(f'plot-bench: {args.report}: {e}', file=sys.stderr)
        return 2
    import plot_layout  # after the report is read: a bad report needs no drawing
    fig = plot_layout.draw(cases, ratios, texts, report)
    problems = plot_layout.overlaps(fig)
    if problems:
        for p in problems:
            print(f'plot-bench: layout: {p}', file=sys.stderr)
        return 1
    plt.rcParams['svg.hashsalt'] = 'restoresim'
    fig.savefig(output, format='svg', metadata={'Date': None})
    if args.png:
        fig.savefig(args.png, format='png', dpi=100)
    print(f'plot-bench: wrote {output} ({len(cases)} cases, {len(ratios)} ratios)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
