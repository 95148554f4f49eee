#!/usr/bin/env python3
"""tools/plot/plot_bench.py on small inputs (suite sweep: it runs with build/venv's
matplotlib): a report of the current format with unmeasured figures (-1, negative, null)
renders and shows each as "n/a", never as a number; the committed docs/restore-bench.json (an
older binary's, without `paired_median` or `reliable`) renders; the SVG is well-formed and the
same bytes twice; bad JSON, a missing field and a field of the wrong type are errors naming the
file and the field, exit 2; and the overlap check finds two texts drawn over each other."""
import copy
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCRIPT = HERE / 'plot_bench.py'
SAMPLE = HERE / 'testdata' / 'bench-sample.json'
sys.path.insert(0, str(HERE))

import matplotlib  # noqa: E402

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import plot_bench  # noqa: E402
import plot_layout  # noqa: E402


def run(report, out):
    return subprocess.run([sys.executable, str(SCRIPT), str(report), '-o', str(out)],
                          capture_output=True, text=True, check=False)


def drawn_texts(report):
    """Every string the figure of `report` draws."""
    cases = plot_bench.read_cases(report)
    ratios, older = plot_bench.read_ratios(report)
    texts = {'processing': plot_bench.processing_lines(report),
             'footer': plot_bench.footer_lines(report, older, 'x.json')}
    fig = plot_layout.draw(cases, ratios, texts, report)
    fig.canvas.draw()
    strings = [t.get_text() for t in fig.findobj(Text) if t.get_visible()]
    plt.close(fig)
    return strings


class PlotBenchTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = pathlib.Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        path = self.dir / name
        path.write_text(text)
        return path

    def test_sample_renders_same_bytes_twice(self):
        a, b = self.dir / 'a.svg', self.dir / 'b.svg'
        for out in (a, b):
            done = run(SAMPLE, out)
            self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(ET.parse(a).getroot().tag, '{http://www.w3.org/2000/svg}svg')
        self.assertEqual(a.read_bytes(), b.read_bytes())

    def test_unmeasured_figures_are_na_never_numbers(self):
        strings = drawn_texts(json.loads(SAMPLE.read_text()))
        joined = '\n'.join(strings)
        self.assertIn('n/a (not measured)', joined)  # every round -1
        self.assertIn('n/a', [s for s in strings if s in ('n/a',)])  # a null ratio
        for s in strings:
            self.assertNotRegex(s, r'(^|[\s(/])-\d', f'a negative figure drawn: {s!r}')
            self.assertNotRegex(s, r'\b(None|nan|null|inf)\b', f'a missing figure drawn: {s!r}')
        # The processing pair: the one round that measured a ratio, not the -1 and null ones.
        self.assertIn('0.90 (median of the 1 of 3 rounds that measured one)', joined)

    def test_text_helpers(self):
        for bad in (-1, -0.5, 0, None, float('nan'), float('inf'), True, 'x'):
            self.assertEqual(plot_bench.rate_text(bad), 'n/a')
            self.assertEqual(plot_bench.ratio_text(bad), 'n/a')
        self.assertEqual(plot_bench.rate_text(1003657.0), '1.00M')
        self.assertEqual(plot_bench.rate_text(570806.3), '571k')
        self.assertEqual(plot_bench.ratio_text(0.8927), '0.89')

    def test_committed_older_report_renders(self):
        report = ROOT / 'docs' / 'restore-bench.json'
        done = run(report, self.dir / 'docs.svg')
        self.assertEqual(done.returncode, 0, done.stderr)
        joined = '\n'.join(drawn_texts(json.loads(report.read_text())))
        self.assertIn("predates the 'paired_median' field", joined)
        self.assertIn('n/a: none of the 5 rounds measured one', joined)  # its -1 rates

    def test_bad_json_is_an_error_naming_the_file(self):
        done = run(self.write('bad.json', '{"cases": [1, 2'), self.dir / 'x.svg')
        self.assertEqual(done.returncode, 2)
        self.assertRegex(done.stderr, r'^plot-bench: .*bad\.json: ')
        self.assertFalse((self.dir / 'x.svg').exists())

    def test_missing_and_malformed_fields_are_named(self):
        sample = json.loads(SAMPLE.read_text())
        cases = [(['cases', 1, 'records_per_second'], None,
                  "cases[1]: missing field 'records_per_second'"),
                 (['ratios', 0, 'ratio_of_medians'], None,
                  "ratios[0]: missing field 'ratio_of_medians'"),
                 (['cases'], None, "report: missing field 'cases'"),
                 (['cases', 0, 'label'], 7, 'cases[0].label: expected str, got int')]
        for path, value, message in cases:
            report = copy.deepcopy(sample)
            parent = report
            for key in path[:-1]:
                parent = parent[key]
            if value is None:
                del parent[path[-1]]
            else:
                parent[path[-1]] = value
            done = run(self.write('r.json', json.dumps(report)), self.dir / 'r.svg')
            self.assertEqual(done.returncode, 2, message)
            self.assertIn(message, done.stderr)

    def test_overlap_check_finds_overlaps(self):
        fig = plt.figure(figsize=(4, 2), dpi=100)
        fig.text(0.1, 0.5, 'one text here')
        fig.text(0.12, 0.5, 'another text')
        fig.text(0.9, 0.9, 'clipped at the right edge')
        found = '\n'.join(plot_layout.overlaps(fig))
        plt.close(fig)
        self.assertRegex(found, "'one text here' overlaps text 'another text'")
        self.assertRegex(found, 'clipped at the right edge.*clipped by the figure edge')


if __name__ == '__main__':
    unittest.main(verbosity=2)
