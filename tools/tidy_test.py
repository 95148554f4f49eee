#!/usr/bin/env python3
"""Tests of tools/tidy: small trees, each breaking one rule, must fail naming FILE:LINE; a
clean tree and the allowlisted cases must pass. usage: tidy_test.py [PATH_TO_TIDY]"""
import os
import pathlib
import subprocess
import sys
import tempfile
import textwrap
import unittest

TIDY = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                    pathlib.Path(__file__).resolve().parent / 'tidy')

CLEAN_CPP = textwrap.dedent('''\
    // A clean file: short functions, short lines.
    #include <string>
    #define BRACES { {
    namespace x {
    struct S {
      S(int a) : a_{a}, b_(a) {}
      int Get() const { return a_; }
      int a_;
      int b_;
    };
    int F(int a) {
      auto g = [&](int b) {
        return b + 1;
      };
      const char* s = "}{ not a brace";
      return g(a) + s[0];
    }
    }  // namespace x
    ''')

CLEAN_CATALOGUE_TEST = 'const char* kMarks[] = {"cover/a rare branch"};\n'
CLEAN_MARK = 'void Rare() { TraceMark("cover", "a rare branch"); }\n'
CHECKERS = 'RESTORESIM_CHECKER(10, OneChecker);\nRESTORESIM_CHECKER(20, TwoChecker);\n'
FAKE_BINARY = textwrap.dedent('''\
    #!/bin/sh
    if [ "$1" = scenarios ]; then
      echo '{"format": "restoresim-scenarios", "version": 1, "programs": [
             {"name": "scenario.a", "bug_expected": false},
             {"name": "scenario.b", "bug_expected": false},
             {"name": "bug.a", "bug_expected": true}, {"name": "demo.x", "bug_expected": false}]}'
    elif [ "$1" = zoo ] && [ "$2" = --list ]; then
      echo "mutation-one"; echo "mutation-two"; echo "mutation-three"
    else
      exit 2
    fi
    ''')


def long_function(name, lines):
    body = ''.join(f'  x += {k};\n' for k in range(lines - 3))
    return f'int {name}(int x) {{\n{body}  return x;\n}}\n'


class TidyTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.dir.name)
        self.write('core/ok.cc', CLEAN_CPP)
        self.write('core/runtime/rare.cc', CLEAN_MARK)
        self.write('scenarios/catalogue_test.cc', CLEAN_CATALOGUE_TEST)
        self.write('properties/checks/one_two.cc', CHECKERS)
        self.write('tools/ok.py', 'def f():\n    return 1\n')
        self.write('README.md', 'Two scenarios, 2 checkers, and 3 mutations.\n')
        self.write('tools/tidy_allowlist.txt', '# nothing\n')
        self.binary = self.write('fake_restoresim', FAKE_BINARY)
        os.chmod(self.binary, 0o755)

    def tearDown(self):
        self.dir.cleanup()

    def write(self, rel, text):
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def tidy(self):
        r = subprocess.run([sys.executable, str(TIDY), '--root', str(self.root),
                            '--restoresim', str(self.binary)], capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    def assert_fails_with(self, *needles):
        code, out = self.tidy()
        self.assertEqual(code, 1, out)
        for needle in needles:
            self.assertIn(needle, out)

    def test_clean_tree_passes(self):
        code, out = self.tidy()
        self.assertEqual(code, 0, out)
        self.assertIn('tidy: 0 violation(s)', out)

    def test_function_of_71_lines_fails_and_70_passes(self):
        self.write('sim/f.cc', long_function('Seventy', 70))
        self.assertEqual(self.tidy()[0], 0, self.tidy()[1])
        self.write('sim/f.cc', long_function('Seventy', 70) + long_function('TooLong', 71))
        self.assert_fails_with('sim/f.cc:71: function TooLong is 71 lines')

    def test_long_method_with_initializer_list_fails(self):
        body = ''.join(f'    x_ += {k};\n' for k in range(75))
        self.write('sim/c.h', f'class C {{\n public:\n  C(int x)\n      : x_{{x}},\n'
                              f'        y_(x) {{\n{body}  }}\n  int x_, y_;\n}};\n')
        self.assert_fails_with('sim/c.h:3: function C is ')

    def test_long_python_function_fails(self):
        body = ''.join(f'    x += {k}\n' for k in range(75))
        self.write('tools/script', f'#!/usr/bin/env python3\ndef g(x):\n{body}    return x\n')
        self.assert_fails_with('tools/script:2: function g is 77 lines')

    def test_long_line_fails(self):
        # Columns are characters: 100 of them pass, however many bytes they take.
        self.write('core/wide.h', '// ' + 'é' * 97 + '\nint x;  // ' + 'é' * 90 + '\n')
        self.assert_fails_with('core/wide.h:2: line is 101 columns')
        self.assertNotIn('wide.h:1:', self.tidy()[1])

    def test_long_python_line_fails(self):
        self.write('tools/wide.py', 'X = "' + 'a' * 100 + '"\n')
        self.assert_fails_with('tools/wide.py:1: line is 106 columns')

    def test_build_dirs_are_skipped(self):
        self.write('build/gen.cc', 'int x;  // ' + 'a' * 200 + '\n')
        self.write('build-asan/x.py', 'X = "' + 'a' * 200 + '"\n')
        self.assertEqual(self.tidy()[0], 0)

    def test_stale_counts_fail(self):
        self.write('docs/X.md', 'a catalogue of 38 named scenarios\nover 17 checkers\n'
                                'and four mutations\n')
        self.assert_fails_with('docs/X.md:1: says 38 scenarios, the binary has 2',
                               'docs/X.md:2: says 17 checkers, the binary has 2',
                               'docs/X.md:3: says 4 mutations, the binary has 3')

    def test_counts_of_the_past_pass(self):
        self.write('docs/X.md', 'each of the then 16 scenarios passed\n'
                                'with 9 checkers at the time\n')
        code, out = self.tidy()
        self.assertEqual(code, 0, out)

    def test_unasserted_mark_fails(self):
        self.write('core/runtime/more.cc',
                   'void F() {\n  TraceMark("cover",\n            "never tested");\n}\n')
        self.assert_fails_with('core/runtime/more.cc:2: coverage mark "cover/never tested"')

    def test_mark_in_a_ternary_needs_both_texts(self):
        self.write('core/runtime/more.cc',
                   'void F(bool b) { TraceMark("cover", b ? "a rare branch" : "the other"); }\n')
        self.assert_fails_with('coverage mark "cover/the other"')

    def test_allowlist_silences_and_must_stay_used(self):
        self.write('core/runtime/big.cc', long_function('Big', 80))
        self.assert_fails_with('core/runtime/big.cc:1: function Big is 80 lines')
        self.write('core/runtime/wide.cc', 'int x;  // ' + 'a' * 95 + '\nint y;  // ' + 'b' * 95)
        self.write('core/runtime/rare.cc', 'void F() { TraceMark("cover", "untested #1"); }\n')
        self.write('tools/tidy_allowlist.txt',
                   'function core/runtime/big.cc Big  # owner\n'
                   'lines core/runtime/wide.cc\n'
                   'mark core/runtime/rare.cc untested #1\n')
        self.assertEqual(self.tidy()[0], 0, self.tidy()[1])
        self.write('core/runtime/big.cc', long_function('Big', 20))
        self.write('core/runtime/wide.cc', 'int x;\n')
        self.assert_fails_with('tidy_allowlist.txt:1: allowlist entry "function '
                               'core/runtime/big.cc Big" matches no violation',
                               'tidy_allowlist.txt:2: allowlist entry "lines '
                               'core/runtime/wide.cc" matches no violation')

    def test_bad_allowlist_line_fails(self):
        for bad in ('functon a.cc F\n', 'function a.cc\n', 'lines\n'):
            self.write('tools/tidy_allowlist.txt', bad)
            code, out = self.tidy()
            self.assertNotEqual(code, 0, bad)
            self.assertIn('tidy_allowlist.txt:1: expected "function FILE NAME"', out)

    def test_test_macros_are_named_by_their_arguments(self):
        body = ''.join(f'  x += {k};\n' for k in range(75))
        self.write('sim/t_test.cc', f'TEST(Suite, Long) {{\n  int x = 0;\n{body}}}\n')
        self.assert_fails_with('sim/t_test.cc:1: function TEST(Suite, Long) is 78 lines')


if __name__ == '__main__':
    unittest.main(argv=sys.argv[:1], verbosity=2)
