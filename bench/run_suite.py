#!/usr/bin/env python3
"""Runs the vren_radix benchmarks and merges them into one table and one plot.

    bench/run_suite.py BUILD_DIR OUT.md [options]

Runs BUILD_DIR/bench/vren_radix_bench (Google Benchmark, JSON, medians of --repetitions runs)
and, where it was built and a CUDA GPU answers, BUILD_DIR/bench/vren_radix_cub_bench. Writes:

    OUT.md          markdown: setup, then one row per case (also printed to stdout)
    OUT.csv         the same rows as CSV
    OUT.json        the rows plus the benchmark context
    OUT.svg         keys/s against count for each implementation
    OUT.bench.json  vren_radix_bench's own JSON output
    OUT.cub.csv     vren_radix_cub_bench's CSV output (when it ran)

To render saved outputs again (e.g. fetched from another machine) without running anything:

    bench/run_suite.py - OUT.md --from-json RUN.bench.json [--cub-csv RUN.cub.csv]

Python 3 standard library only.
"""

import argparse
import csv
import datetime
import io
import json
import math
import os
import shlex
import subprocess
import sys

DIST_ORDER = ["uniform", "and2", "low8", "bits4"]
DIST_TEXT = {
    "uniform": "uniform",
    "and2": "AND of 2",
    "low8": "< 2^8, 32 bits",
    "bits4": "< 16, bits [0,4)",
}
# Implementation -> (label, colour) for the plot.
SERIES = [
    ("vren_radix", "vren_radix", "#d62728"),
    ("cub", "CUB", "#2ca02c"),
    ("std", "std::sort / std::stable_sort", "#1f77b4"),
    ("cpu_radix", "CPU radix (8-bit)", "#ff7f0e"),
]
CONTEXT_LABELS = [
    ("device", "device"),
    ("driver", "driver"),
    ("subgroup_size", "subgroup size"),
    ("tuning", "tuning"),
    ("copy_bandwidth_gbps", "copy bandwidth, GB/s"),
    ("copy_bandwidth_note", "copy bandwidth measured as"),
    ("max_log2", "largest count (log2)"),
    ("cpu_max_log2", "largest CPU baseline count (log2)"),
    ("host_name", "host"),
    ("num_cpus", "host CPUs"),
    ("mhz_per_cpu", "host MHz per CPU"),
    ("load_avg", "host load average (1, 5, 15 min)"),
    ("library_build_type", "Google Benchmark library build (times are manual, so it does not matter)"),
]
UNIT_TO_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def fail(message):
    sys.stderr.write("run_suite.py: %s\n" % message)
    sys.exit(1)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("build_dir", help="the CMake build directory ('-' with --from-json)")
    p.add_argument("output", help="the markdown file to write; the other outputs go next to it")
    p.add_argument("--repetitions", type=int, default=5, help="benchmark repetitions; medians are reported (5)")
    p.add_argument("--min-time", type=float, default=0.1,
                   help="--benchmark_min_time for the CPU baselines, in seconds (0.1); GPU cases run fixed batches")
    p.add_argument("--max-log2", type=int, help="largest power-of-two count (default: chosen by the benchmark)")
    p.add_argument("--cpu-max-log2", type=int, help="largest count for the CPU baselines")
    p.add_argument("--filter", help="--benchmark_filter regex for vren_radix_bench")
    p.add_argument("--device", type=int, help="Vulkan device number (vren-radix info)")
    p.add_argument("--no-cub", action="store_true", help="do not run vren_radix_cub_bench")
    p.add_argument("--cub-reps", type=int, default=20, help="timed sorts per case for CUB (20)")
    p.add_argument("--from-json", help="render this saved vren_radix_bench JSON instead of running")
    p.add_argument("--cub-csv", help="with --from-json: a saved vren_radix_cub_bench CSV")
    return p.parse_args()


def run_vren(args, stem):
    exe = os.path.join(args.build_dir, "bench", "vren_radix_bench")
    if not os.path.isfile(exe):
        fail("%s does not exist; build it first: cmake --build %s --target vren_radix_bench" % (exe, args.build_dir))
    out_json = stem + ".bench.json"
    cmd = [exe, "--benchmark_out=" + out_json, "--benchmark_out_format=json",
           "--benchmark_repetitions=%d" % args.repetitions, "--benchmark_report_aggregates_only=true",
           "--benchmark_min_time=%g" % args.min_time]
    if args.max_log2:
        cmd.append("--max-log2=%d" % args.max_log2)
    if args.cpu_max_log2:
        cmd.append("--cpu-max-log2=%d" % args.cpu_max_log2)
    if args.device is not None:
        cmd.append("--device=%d" % args.device)
    if args.filter:
        cmd.append("--benchmark_filter=" + args.filter)
    sys.stderr.write("run_suite.py: %s\n" % " ".join(shlex.quote(c) for c in cmd))
    # The console table goes to stderr as progress; the JSON goes to the file.
    result = subprocess.run(cmd, stdout=sys.stderr, stderr=sys.stderr)
    if result.returncode != 0:
        fail("vren_radix_bench exited with status %d" % result.returncode)
    return out_json, " ".join(shlex.quote(os.path.relpath(c) if c == exe else c) for c in cmd)


def run_cub(args, stem, max_log2):
    exe = os.path.join(args.build_dir, "bench", "vren_radix_cub_bench")
    if args.no_cub or not os.path.isfile(exe):
        return None, None, None
    out_csv = stem + ".cub.csv"
    cmd = [exe, "--reps=%d" % args.cub_reps, "--csv=" + out_csv]
    if max_log2:
        cmd.append("--max-log2=%d" % max_log2)
    sys.stderr.write("run_suite.py: %s\n" % " ".join(shlex.quote(c) for c in cmd))
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    sys.stderr.write(result.stderr)
    if result.returncode != 0:
        sys.stderr.write("run_suite.py: vren_radix_cub_bench did not run (status %d); CUB columns stay empty.\n"
                         % result.returncode)
        return None, None, None
    info = [l.split(": ", 1)[1] for l in result.stderr.splitlines() if l.startswith("vren_radix_cub_bench: ")]
    return out_csv, (info[0] if info else ""), " ".join(shlex.quote(os.path.relpath(c) if c == exe else c)
                                                       for c in cmd)


def load_vren(path):
    """Returns (context, {(impl, kind, dist, count): record}) from Google Benchmark JSON."""
    with open(path) as f:
        data = json.load(f)
    entries = data.get("benchmarks", [])
    has_aggregates = any(e.get("run_type") == "aggregate" for e in entries)
    rows = {}
    for e in entries:
        if has_aggregates and not (e.get("run_type") == "aggregate" and e.get("aggregate_name") == "median"):
            if not e.get("error_occurred"):
                continue
        parts = e.get("run_name", e.get("name", "")).split("/")
        # Option cases (vren_radix_option/NAME/COUNT) have their own table, not this one.
        if len(parts) < 4 or not parts[3].isdigit():
            continue
        impl, kind, dist, count = parts[0], parts[1], parts[2], int(parts[3])
        if impl in ("std_sort", "std_stable_sort"):
            impl = "std"
        rec = {"error": e.get("error_message")} if e.get("error_occurred") else {
            "ms": e["real_time"] * UNIT_TO_MS[e.get("time_unit", "ns")],
            "pct_of_ceiling": e.get("pct_of_ceiling"),
            "passes": e.get("passes"),
        }
        rows[(impl, kind, dist, count)] = rec
    return data.get("context", {}), rows


def load_cub(path):
    rows = {}
    if not path:
        return rows
    with open(path) as f:
        for r in csv.DictReader(f):
            rows[("cub", r["case"], r["dist"], int(r["count"]))] = {"ms": float(r["median_ms"])}
    return rows


def fmt_ms(ms):
    if ms is None:
        return "—"
    return "%.4f" % ms if ms < 1 else "%.3f" % ms if ms < 100 else "%.1f" % ms


def fmt(v, pattern):
    return "—" if v is None else pattern % v


def ratio(a, b):
    return a / b if a and b else None


def merge(rows):
    cases = sorted({(k[1], k[2], k[3]) for k in rows},
                   key=lambda c: (c[0] != "keys", DIST_ORDER.index(c[1]) if c[1] in DIST_ORDER else 99, c[2]))
    merged = []
    for kind, dist, count in cases:
        def get(impl, field="ms"):
            return rows.get((impl, kind, dist, count), {}).get(field)
        vren_ms = get("vren_radix")
        merged.append({
            "case": kind, "dist": dist, "count": count,
            "vren_ms": vren_ms,
            "vren_gkeys_per_s": count / (vren_ms * 1e6) if vren_ms else None,
            "pct_of_ceiling": get("vren_radix", "pct_of_ceiling"),
            "vren_passes": get("vren_radix", "passes"),
            "cub_ms": get("cub"),
            "vren_vs_cub": ratio(get("cub"), vren_ms),
            "std_ms": get("std"),
            "vren_vs_std": ratio(get("std"), vren_ms),
            "cpu_radix_ms": get("cpu_radix"),
            "error": "; ".join("%s: %s" % (impl, rows[(impl, kind, dist, count)]["error"])
                               for impl in ("vren_radix", "std", "cpu_radix")
                               if rows.get((impl, kind, dist, count), {}).get("error")) or None,
        })
    return merged


def markdown(context, merged, meta):
    out = io.StringIO()
    w = out.write
    w("| | |\n|---|---|\n")
    for label, value in meta:
        w("| %s | %s |\n" % (label, value))
    for key, label in CONTEXT_LABELS:
        if key in context:
            value = context[key]
            if isinstance(value, list):
                value = ", ".join("%.2f" % v for v in value)
            w("| %s | %s |\n" % (label, value))
    w("\n")
    w("Times are medians. Speed ratio and speed-up are the other implementation's time over "
      "vren_radix's (above 1: vren_radix is faster). The std column is std::sort for keys and "
      "std::stable_sort (of key/value structs) for pairs. % of ceiling: the time the measured copy "
      "bandwidth needs for 12 bytes per key and 4-bit pass (pairs 20) over vren_radix's time.\n\n")
    w("| case | count | vren ms | vren Gkeys/s | % of ceiling | CUB ms | vren/CUB speed ratio | "
      "std ms | vren/std speed-up | CPU radix ms |\n")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    for r in merged:
        w("| %s %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n" % (
            r["case"], DIST_TEXT.get(r["dist"], r["dist"]), r["count"], fmt_ms(r["vren_ms"]),
            fmt(r["vren_gkeys_per_s"], "%.3g"), fmt(r["pct_of_ceiling"], "%.1f"), fmt_ms(r["cub_ms"]),
            fmt(r["vren_vs_cub"], "%.3g"), fmt_ms(r["std_ms"]), fmt(r["vren_vs_std"], "%.3g"),
            fmt_ms(r["cpu_radix_ms"])))
    errors = [r for r in merged if r["error"]]
    if errors:
        w("\nErrors:\n\n")
        for r in errors:
            w("- %s %s %d: %s\n" % (r["case"], r["dist"], r["count"], r["error"]))
    return out.getvalue()


def svg_plot(rows, title):
    """keys/s against count (log2 x, log10 y): uniform keys solid, uniform pairs dashed."""
    width, height = 900, 520
    left, right, top, bottom = 80, 260, 50, 60
    lines = []
    for impl, label, colour in SERIES:
        for kind, dash in (("keys", ""), ("pairs", "6,4")):
            pts = sorted((k[3], k[3] / (v["ms"] * 1e-3)) for k, v in rows.items()
                         if k[0] == impl and k[1] == kind and k[2] == "uniform" and v.get("ms"))
            if pts:
                lines.append((label, colour, dash, pts))
    if not lines:
        return None
    xs = [math.log2(c) for _, _, _, pts in lines for c, _ in pts]
    ys = [math.log10(r) for _, _, _, pts in lines for _, r in pts]
    x0, x1 = math.floor(min(xs)), math.ceil(max(xs))
    y0, y1 = math.floor(min(ys)), math.ceil(max(ys))
    if x1 == x0:
        x1 += 1
    if y1 == y0:
        y1 += 1
    pw, ph = width - left - right, height - top - bottom

    def px(c):
        return left + (math.log2(c) - x0) / (x1 - x0) * pw

    def py(r):
        return top + ph - (math.log10(r) - y0) / (y1 - y0) * ph

    def rate_label(e):
        units = [(9, "G"), (6, "M"), (3, "k"), (0, "")]
        for p, u in units:
            if e >= p:
                return "%d%s" % (10 ** (e - p), u)
        return "%g" % 10 ** e

    s = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">'
         % (width, height),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="24" font-size="15" font-weight="bold">%s</text>' % (left, escape(title))]
    for e in range(x0, x1 + 1):
        x = left + (e - x0) / (x1 - x0) * pw
        s.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (x, top, x, top + ph))
        if (e - x0) % 2 == 0 or x1 - x0 <= 10:
            s.append('<text x="%.1f" y="%d" text-anchor="middle">2^%d</text>' % (x, top + ph + 18, e))
    for e in range(y0, y1 + 1):
        y = top + ph - (e - y0) / (y1 - y0) * ph
        s.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (left, y, left + pw, y))
        s.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (left - 8, y + 4, rate_label(e)))
    s.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>' % (left, top, pw, ph))
    s.append('<text x="%d" y="%d" text-anchor="middle">count (log2)</text>' % (left + pw / 2, height - 18))
    s.append('<text transform="translate(20,%d) rotate(-90)" text-anchor="middle">keys per second</text>'
             % (top + ph / 2))
    for label, colour, dash, pts in lines:
        path = " ".join("%.1f,%.1f" % (px(c), py(r)) for c, r in pts)
        s.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>'
                 % (path, colour, ' stroke-dasharray="%s"' % dash if dash else ""))
        for c, r in pts:
            s.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s %d: %.4g keys/s</title></circle>'
                     % (px(c), py(r), colour, escape(label), c, r))
    ly = top + 10
    seen = set()
    for label, colour, _, _ in lines:
        if label in seen:
            continue
        seen.add(label)
        s.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>'
                 % (left + pw + 15, ly, left + pw + 40, ly, colour))
        s.append('<text x="%d" y="%d">%s</text>' % (left + pw + 46, ly + 4, escape(label)))
        ly += 20
    s.append('<text x="%d" y="%d" fill="#555">solid: keys, dashed: pairs</text>' % (left + pw + 15, ly + 6))
    s.append('<text x="%d" y="%d" fill="#555">uniform u32 keys</text>' % (left + pw + 15, ly + 24))
    s.append("</svg>")
    return "\n".join(s) + "\n"


def escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def main():
    args = parse_args()
    stem = os.path.splitext(args.output)[0]
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    meta = []
    if args.from_json:
        bench_json, cub_csv, cub_info = args.from_json, args.cub_csv, None
        meta.append(("rendered from", os.path.basename(args.from_json)))
    else:
        bench_json, command = run_vren(args, stem)
        meta.append(("command", "`%s`" % command))
        context, _ = load_vren(bench_json)
        cub_csv, cub_info, cub_command = run_cub(args, stem, args.max_log2 or int(context.get("max_log2", 0)))
        if cub_command:
            meta.append(("CUB command", "`%s`" % cub_command))
        meta.append(("repetitions", "%d (medians)" % args.repetitions))
    context, rows = load_vren(bench_json)
    rows.update(load_cub(cub_csv))
    meta.insert(0, ("date", context.get("date") or datetime.datetime.now().astimezone().isoformat(timespec="minutes")))
    if cub_info:
        meta.append(("CUB", cub_info))
    merged = merge(rows)

    text = markdown(context, merged, meta)
    with open(args.output, "w") as f:
        f.write(text)
    sys.stdout.write(text)
    with open(stem + ".csv", "w", newline="") as f:
        fields = ["case", "dist", "count", "vren_ms", "vren_gkeys_per_s", "pct_of_ceiling", "vren_passes", "cub_ms",
                  "vren_vs_cub", "std_ms", "vren_vs_std", "cpu_radix_ms", "error"]
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for r in merged:
            writer.writerow({k: ("" if r[k] is None else r[k]) for k in fields})
    with open(stem + ".json", "w") as f:
        json.dump({"meta": dict(meta), "context": context, "rows": merged}, f, indent=1)
    svg = svg_plot(rows, "Sort throughput: %s" % context.get("device", "unknown device"))
    if svg:
        with open(stem + ".svg", "w") as f:
            f.write(svg)
    sys.stderr.write("run_suite.py: wrote %s and %s.{csv,json%s}\n" % (args.output, stem, ",svg" if svg else ""))


if __name__ == "__main__":
    main()
