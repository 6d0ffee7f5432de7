#!/usr/bin/env python3
"""Times variants of vren_radix_bench against each other in one run, taking turns.

    bench/compare_tunings.py [options] NAME=COMMAND [NAME=COMMAND ...]

Each COMMAND is a vren_radix_bench invocation (binary and flags, shell-quoted), for instance
another build, or the same build with other tuning flags:

    bench/compare_tunings.py --filter='^vren_radix/pairs/uniform/(16777216|67108864)/' \\
        'main=build/bench/vren_radix_bench' \\
        'in_stage=build/bench/vren_radix_bench --counters-in-stage=1' \\
        'in_stage_22=build/bench/vren_radix_bench --counters-in-stage=1 --large-pairs-tile=22x512'

The variants run in turn, --rounds times (A B C A B C ...), so that a GPU's clocks and heat
weigh on each alike; each run adds its flags for the filter, --repetitions and a short minimum
time, and keeps its JSON under --out. The table gives, per case, each variant's median over
every run and round in ms, then its ratio to the first variant, and the spread of its per-round
medians where it exceeds 1 %. Timings from different runs of this script are not comparable.

Python 3 standard library only.
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys


def run_variant(command, args, path):
    """Runs one variant once; returns {case: [times in ms]} from its JSON, or None after saying why."""
    argv = shlex.split(command) + [
        f"--benchmark_filter={args.filter}",
        f"--benchmark_repetitions={args.repetitions}",
        f"--benchmark_min_time={args.min_time}",
        f"--benchmark_out={path}",
        "--benchmark_out_format=json",
    ]
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0 or not os.path.exists(path):
        print(f"{command}: exited with {done.returncode}: {done.stderr.strip()[-400:]}", file=sys.stderr)
        return None
    with open(path) as f:
        report = json.load(f)
    times = {}
    for b in report.get("benchmarks", []):
        if b.get("run_type") != "iteration":
            continue
        if b.get("error_occurred"):
            print(f"{command}: {b['name']}: {b.get('error_message', 'failed')}", file=sys.stderr)
            return None
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
        case = b["run_name"].split("/iterations:")[0].replace("/manual_time", "")
        times.setdefault(case, []).append(b["real_time"] * scale)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("variants", nargs="+", metavar="NAME=COMMAND")
    parser.add_argument("--filter", default="^vren_radix/", help="Google Benchmark filter for every variant")
    parser.add_argument("--rounds", type=int, default=2, help="turns each variant takes (default 2)")
    parser.add_argument("--repetitions", type=int, default=3, help="--benchmark_repetitions per run (default 3)")
    parser.add_argument("--min-time", default="0.1", help="--benchmark_min_time per run (default 0.1)")
    parser.add_argument("--out", default=".", help="folder for the runs' JSON files (default: here)")
    args = parser.parse_args()
    variants = []
    for text in args.variants:
        name, sep, command = text.partition("=")
        if not sep or not name or not command.strip():
            parser.error(f"'{text}' is not NAME=COMMAND")
        if any(name == n for n, _ in variants):
            parser.error(f"two variants are named '{name}'")
        variants.append((name, command))
    if args.rounds < 1 or args.repetitions < 1:
        parser.error("--rounds and --repetitions take 1 or more")
    os.makedirs(args.out, exist_ok=True)

    # times[name][case]: every repetition's time; rounds[name][case]: each round's median.
    times = {name: {} for name, _ in variants}
    rounds = {name: {} for name, _ in variants}
    for r in range(args.rounds):
        for name, command in variants:
            got = run_variant(command, args, os.path.join(args.out, f"{name}.{r}.json"))
            if got is None:
                return 1
            for case, t in got.items():
                times[name].setdefault(case, []).extend(t)
                rounds[name].setdefault(case, []).append(statistics.median(t))
            print(f"round {r + 1}/{args.rounds}: {name} done", file=sys.stderr)

    first = variants[0][0]
    cases = [c for c in times[first] if all(c in times[n] for n, _ in variants)]
    if not cases:
        print("No case ran in every variant.", file=sys.stderr)
        return 1
    names = [n for n, _ in variants]
    print("| case | " + " | ".join(f"{n} (ms)" for n in names) + " | " + " | ".join(f"{n} / {first}" for n in names[1:]) + " |")
    print("|---|" + "---:|" * (2 * len(names) - 1))
    for case in cases:
        cells, ratios = [], []
        base = statistics.median(times[first][case])
        for n in names:
            m = statistics.median(times[n][case])
            per_round = rounds[n][case]
            spread = (max(per_round) - min(per_round)) / m if m > 0 else 0.0
            cells.append(f"{m:.4g}" + (f" (±{100 * spread / 2:.1f} %)" if spread > 0.02 else ""))
            if n != first:
                ratios.append(f"{m / base:.3f}" if base > 0 else "-")
        print(f"| {case} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
