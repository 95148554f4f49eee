#!/usr/bin/env python3
"""scheduler_benchmark honours Google Benchmark's --benchmark_format: json and csv go to standard
output unmixed (json parses, csv has its header), with the fiber/OS ratios on standard error;
the console format keeps the table and the ratios on standard output.

  scheduler_benchmark_format_test.py PATH_TO_SCHEDULER_BENCHMARK
"""
import json
import subprocess
import sys

FILTER = "--benchmark_filter=BM_(FiberSchedulerPos|OsThreadTokenPassing)/2"


def run(binary, *args):
    done = subprocess.run([binary, FILTER, "--benchmark_min_time=0.01", *args],
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        sys.exit(f"{binary} {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done.stdout, done.stderr


def main():
    binary = sys.argv[1]
    out, err = run(binary, "--benchmark_format=json")
    report = json.loads(out)  # raises (the test fails) unless stdout is JSON only
    names = [b["name"] for b in report["benchmarks"]]
    assert "BM_FiberSchedulerPos/2" in names, names
    assert "BM_OsThreadTokenPassing/2/real_time" in names, names
    assert "ratio BM_FiberSchedulerPos/2 vs OS-thread token passing" in err, err

    out, err = run(binary, "--benchmark_format=csv")
    assert out.splitlines()[0].startswith("name,iterations"), out[:200]
    assert "ratio " not in out and "ratio BM_FiberSchedulerPos/2" in err, (out, err)

    out, _ = run(binary, "--benchmark_format=console")
    assert "BM_FiberSchedulerPos/2" in out and "ratio BM_FiberSchedulerPos/2" in out, out
    print("ok: json, csv and console formats")


if __name__ == "__main__":
    main()
