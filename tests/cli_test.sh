#!/bin/sh
# The CLI's bad-input paths: each must exit non-zero with one sentence on stderr and leave no
# output file behind; good input must sort, for every key type and option, as Python's stable
# sort does; --help, --version, --json and --quiet behave. Usage: cli_test.sh path/to/vren-radix [PART]
set -u
cli=$1
# PART (a second argument): "orders", the sorts of every key type, bit range, order and argsort,
# checked against Python; "segments", segmented sorts and top-k, likewise; "others", the rest;
# none: all three (CTest runs them as three tests, side by side).
part=${2:-all}
case "$part" in
  all | orders | segments | others) ;;
  *) echo "cli_test.sh: PART is orders, segments or others, not '$part'." >&2; exit 2 ;;
esac
runs() { [ "$part" = all ] || [ "$part" = "$1" ]; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
passes=0

# expect CODE DESCRIPTION -- ARGS...: runs the CLI, checks the exit code and that stderr has text.
expect() {
  code=$1; what=$2; shift 3
  "$cli" "$@" >"$dir/stdout" 2>"$dir/stderr"
  got=$?
  if [ "$got" -ne "$code" ]; then
    echo "FAIL: $what: exit $got, expected $code"; cat "$dir/stderr"; failures=$((failures + 1)); return
  fi
  if [ "$code" -ne 0 ] && [ ! -s "$dir/stderr" ]; then
    echo "FAIL: $what: no message on stderr"; failures=$((failures + 1)); return
  fi
  passes=$((passes + 1))
}

no_file() {
  if [ -e "$1" ]; then echo "FAIL: $2 left $1 behind"; failures=$((failures + 1)); else passes=$((passes + 1)); fi
}

# Inputs: 1000 keys, 1000 values, 999 values, a 6-byte file.
python3 - "$dir" <<'PY'
import random, struct, sys
d = sys.argv[1]
keys = [random.getrandbits(32) for _ in range(1000)]
open(f"{d}/keys.bin", "wb").write(struct.pack("<1000I", *keys))
open(f"{d}/values.bin", "wb").write(struct.pack("<1000I", *range(1000)))
open(f"{d}/short.bin", "wb").write(struct.pack("<999I", *range(999)))
open(f"{d}/odd.bin", "wb").write(b"\x01\x02\x03\x04\x05\x06")
PY

: >"$dir/empty.bin"
if runs others; then
expect 2 "no command" --
expect 2 "unknown command" -- frobnicate
expect 2 "unknown flag" -- sort --keys "$dir/keys.bin" --out-keys "$dir/o1.bin" --colour blue
no_file "$dir/o1.bin" "unknown flag"
expect 2 "missing --out-keys" -- sort --keys "$dir/keys.bin"
expect 2 "flag without value" -- sort --keys
expect 2 "values without out-values" -- sort --keys "$dir/keys.bin" --out-keys "$dir/o2.bin" --values "$dir/values.bin"
no_file "$dir/o2.bin" "values without out-values"
expect 2 "bad device number" -- sort --keys "$dir/keys.bin" --out-keys "$dir/o3.bin" --device abc
expect 1 "device that does not exist" -- sort --keys "$dir/keys.bin" --out-keys "$dir/o3.bin" --device 99
no_file "$dir/o3.bin" "missing device"
expect 1 "missing keys file" -- sort --keys "$dir/nope.bin" --out-keys "$dir/o4.bin"
no_file "$dir/o4.bin" "missing keys file"
expect 1 "directory as keys file" -- sort --keys "$dir" --out-keys "$dir/o5.bin"
expect 1 "size not a multiple of 4" -- sort --keys "$dir/odd.bin" --out-keys "$dir/o6.bin"
no_file "$dir/o6.bin" "size not a multiple of 4"
expect 1 "values length differs" -- sort --keys "$dir/keys.bin" --out-keys "$dir/o7.bin" --values "$dir/short.bin" --out-values "$dir/v7.bin"
no_file "$dir/o7.bin" "values length differs"
no_file "$dir/v7.bin" "values length differs"
expect 1 "unwritable output" -- sort --keys "$dir/keys.bin" --out-keys "$dir/no/such/dir/out.bin"
expect 1 "unwritable values output" -- sort --keys "$dir/keys.bin" --out-keys "$dir/o8.bin" --values "$dir/values.bin" --out-values "$dir/no/such/v.bin"
no_file "$dir/o8.bin" "unwritable values output"

# Good input: keys and pairs, checked against Python's stable sort.
expect 0 "sort keys" -- sort --keys "$dir/keys.bin" --out-keys "$dir/sorted.bin"
expect 0 "sort pairs" -- sort --keys "$dir/keys.bin" --out-keys "$dir/pk.bin" --values "$dir/values.bin" --out-values "$dir/pv.bin"
expect 0 "sort an empty file" -- sort --keys "$dir/empty.bin" --out-keys "$dir/empty_out.bin"
if python3 - "$dir" <<'PY'
import struct, sys
d = sys.argv[1]
keys = struct.unpack("<1000I", open(f"{d}/keys.bin", "rb").read())
order = sorted(range(1000), key=lambda i: keys[i])
assert list(struct.unpack("<1000I", open(f"{d}/sorted.bin", "rb").read())) == sorted(keys), "keys"
assert list(struct.unpack("<1000I", open(f"{d}/pk.bin", "rb").read())) == [keys[i] for i in order], "pair keys"
assert list(struct.unpack("<1000I", open(f"{d}/pv.bin", "rb").read())) == order, "pair values"
assert open(f"{d}/empty_out.bin", "rb").read() == b"", "empty"
PY
then passes=$((passes + 1)); else echo "FAIL: sorted output differs from the reference"; failures=$((failures + 1)); fi
fi
# verify DESCRIPTION <<'PY' ... PY: runs the Python check on stdin with the work directory as argv[1].
verify() {
  if python3 - "$dir" >"$dir/verify.out" 2>&1; then
    passes=$((passes + 1))
  else
    echo "FAIL: $1"; cat "$dir/verify.out"; failures=$((failures + 1))
  fi
}

# Key types, bit ranges, descending order and argsort, against Python's stable sort. Values are
# input indices, so every pair check is a stability check too; the keys repeat a lot.
python3 - "$dir" <<'PY'
import random, struct, sys
d = sys.argv[1]
random.seed(11)
n = 3000
i32 = [random.choice([-2**31, 2**31 - 1, -1, 0, 1]) if random.random() < 0.1 else random.randint(-300, 300) for _ in range(n)]
open(f"{d}/i32.bin", "wb").write(struct.pack(f"<{n}i", *i32))
specials = [0x80000000, 0x00000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF,
            0x00000001, 0x80000001, 0x3F800000, 0xBF800000, 0x7F7FFFFF, 0xFF7FFFFF]
f32 = [random.choice(specials) if random.random() < 0.3 else struct.unpack("<I", struct.pack("<f", random.uniform(-50, 50)))[0]
       for _ in range(n)]
open(f"{d}/f32.bin", "wb").write(struct.pack(f"<{n}I", *f32))
u64 = [random.choice([0, 2**64 - 1, 2**32, 2**32 - 1]) if random.random() < 0.1 else
       (random.randint(0, 7) << 61) | (random.randint(0, 3) << 32) | random.randint(0, 5) for _ in range(n)]
open(f"{d}/u64.bin", "wb").write(struct.pack(f"<{n}Q", *u64))
u32 = [random.getrandbits(32) & 0x0F0F0F0F for _ in range(n)]
open(f"{d}/u32.bin", "wb").write(struct.pack(f"<{n}I", *u32))
open(f"{d}/index.bin", "wb").write(struct.pack(f"<{n}I", *range(n)))
open(f"{d}/twelve.bin", "wb").write(bytes(12))
PY
cat >"$dir/reference.py" <<'PY'
import math, struct
def words(path, fmt="I"):
    data = open(path, "rb").read()
    return list(struct.unpack(f"<{len(data) // struct.calcsize(fmt)}{fmt}", data))
def total_order(bits):
    # IEEE-754 totalOrder, from the meaning of the bits rather than the usual bit trick.
    negative, exponent, mantissa = bits >> 31, (bits >> 23) & 0xFF, bits & 0x7FFFFF
    if exponent == 0xFF and mantissa:  # NaN: negative ones first, bigger payloads further out
        return (0, -mantissa, 0) if negative else (2, mantissa, 0)
    value = struct.unpack("<f", struct.pack("<I", bits))[0]
    return (1, value, 0 if negative else 1)  # -0 before +0
def check(d, name, keys, key, fmt="I", descending=False):
    # Values are input indices (or argsort's permutation): equal keys must keep their input order.
    order = sorted(range(len(keys)), key=lambda i: key(keys[i]), reverse=descending)  # stable either way
    assert words(f"{d}/{name}_k.bin", fmt) == [keys[i] for i in order], f"{name}: keys"
    assert words(f"{d}/{name}_v.bin") == order, f"{name}: values"
PY
s() { "$cli" sort "$@" >/dev/null 2>"$dir/stderr" || { echo "FAIL: sort $*: exit $?"; cat "$dir/stderr"; failures=$((failures + 1)); }; }
if runs orders; then
s --key-type i32 --keys "$dir/i32.bin" --out-keys "$dir/i32_k.bin" --values "$dir/index.bin" --out-values "$dir/i32_v.bin"
s --key-type f32 --keys "$dir/f32.bin" --out-keys "$dir/f32_k.bin" --values "$dir/index.bin" --out-values "$dir/f32_v.bin"
s --key-type f32 --descending --argsort --keys "$dir/f32.bin" --out-keys "$dir/f32d_k.bin" --out-values "$dir/f32d_v.bin"
s --key-type u64 --keys "$dir/u64.bin" --out-keys "$dir/u64_k.bin" --values "$dir/index.bin" --out-values "$dir/u64_v.bin"
s --key-type u64 --bits 32:64 --descending --keys "$dir/u64.bin" --out-keys "$dir/u64b_k.bin" --argsort --out-values "$dir/u64b_v.bin"
s --bits 8:20 --keys "$dir/u32.bin" --out-keys "$dir/bits_k.bin" --values "$dir/index.bin" --out-values "$dir/bits_v.bin"
s --bits 4:4 --keys "$dir/u32.bin" --out-keys "$dir/nobits_k.bin" --values "$dir/index.bin" --out-values "$dir/nobits_v.bin"
s --descending --keys "$dir/u32.bin" --out-keys "$dir/desc_k.bin" --values "$dir/index.bin" --out-values "$dir/desc_v.bin"
s --argsort --keys "$dir/u32.bin" --out-keys "$dir/arg_k.bin" --out-values "$dir/arg_v.bin"
s --argsort --quiet --keys "$dir/empty.bin" --out-keys "$dir/arge_k.bin" --out-values "$dir/arge_v.bin"
verify "i32 keys" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from reference import *
check(sys.argv[1], "i32", words(f"{sys.argv[1]}/i32.bin", "i"), lambda k: k, "i")
PY
verify "f32 keys in IEEE total order, with -0, +0, infinities and NaNs" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from reference import *
check(sys.argv[1], "f32", words(f"{sys.argv[1]}/f32.bin"), total_order)
PY
verify "f32 --descending --argsort" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from reference import *
check(sys.argv[1], "f32d", words(f"{sys.argv[1]}/f32.bin"), total_order, descending=True)
PY
verify "u64 keys" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from reference import *
check(sys.argv[1], "u64", words(f"{sys.argv[1]}/u64.bin", "Q"), lambda k: k, "Q")
PY
verify "u64 --bits 32:64 --descending --argsort" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from reference import *
check(sys.argv[1], "u64b", words(f"{sys.argv[1]}/u64.bin", "Q"), lambda k: k >> 32, "Q", descending=True)
PY
verify "--bits 8:20" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from reference import *
check(sys.argv[1], "bits", words(f"{sys.argv[1]}/u32.bin"), lambda k: (k >> 8) & 0xFFF)
PY
verify "--bits 4:4 leaves the order alone" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from reference import *
check(sys.argv[1], "nobits", words(f"{sys.argv[1]}/u32.bin"), lambda k: 0)
PY
verify "--descending is stable" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from reference import *
check(sys.argv[1], "desc", words(f"{sys.argv[1]}/u32.bin"), lambda k: k, descending=True)
PY
verify "--argsort writes the permutation" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from reference import *
check(sys.argv[1], "arg", words(f"{sys.argv[1]}/u32.bin"), lambda k: k)
d = sys.argv[1]
assert open(f"{d}/arge_k.bin", "rb").read() == b"" and open(f"{d}/arge_v.bin", "rb").read() == b"", "empty argsort"
PY
fi

# Segmented sorts and top-k on the same inputs (3000 keys). big.seg has a segment longer than a
# one-workgroup sort holds (the multi-pass path) and empty ones; small.seg many short segments.
python3 - "$dir" <<'PY'
import random, struct, sys
d = sys.argv[1]
random.seed(12)
big = [0, 0, 5, 5, 6, 2600, 3000]
small = [0] + sorted(random.randint(0, 3000) for _ in range(60)) + [3000]
for name, offsets in [("big", big), ("small", small), ("start1", [1, 2000, 3000]), ("decreasing", [0, 2000, 1000, 3000]),
                      ("short", [0, 1000, 2999]), ("zero", [0])]:
    open(f"{d}/{name}.seg", "wb").write(struct.pack(f"<{len(offsets)}I", *offsets))
PY
cat >>"$dir/reference.py" <<'PY'
def segmented(d, name, keys, offsets, key, fmt="I", descending=False, k=None, values=None):
    # Each segment on its own, stably; k: its first k. values: the input values (None: indices).
    order = []
    for a, b in zip(offsets, offsets[1:]):
        order += sorted(range(a, b), key=lambda i: key(keys[i]), reverse=descending)[:k]
    assert words(f"{d}/{name}_k.bin", fmt) == [keys[i] for i in order], f"{name}: keys"
    try:
        got = words(f"{d}/{name}_v.bin")
    except FileNotFoundError:
        return
    assert got == (order if values is None else [values[i] for i in order]), f"{name}: values"
PY
if runs segments; then
s --segments "$dir/big.seg" --keys "$dir/u32.bin" --out-keys "$dir/sk_k.bin"
s --segments "$dir/small.seg" --keys "$dir/u32.bin" --out-keys "$dir/sks_k.bin" --values "$dir/index.bin" --out-values "$dir/sks_v.bin"
s --segments "$dir/big.seg" --keys "$dir/u32.bin" --out-keys "$dir/skv_k.bin" --values "$dir/index.bin" --out-values "$dir/skv_v.bin"
s --segments "$dir/big.seg" --argsort --descending --keys "$dir/u32.bin" --out-keys "$dir/ska_k.bin" --out-values "$dir/ska_v.bin"
s --segments "$dir/small.seg" --argsort --descending --key-type f32 --keys "$dir/f32.bin" --out-keys "$dir/skf_k.bin" --out-values "$dir/skf_v.bin"
s --segments "$dir/big.seg" --key-type u64 --bits 32:64 --keys "$dir/u64.bin" --out-keys "$dir/sku_k.bin" --argsort --out-values "$dir/sku_v.bin"
s --segments "$dir/zero.seg" --keys "$dir/empty.bin" --out-keys "$dir/ske_k.bin"
t() { "$cli" topk "$@" >/dev/null 2>"$dir/stderr" || { echo "FAIL: topk $*: exit $?"; cat "$dir/stderr"; failures=$((failures + 1)); }; }
t --k 10 --keys "$dir/u32.bin" --out-keys "$dir/tw_k.bin"
t --k 5 --segments "$dir/small.seg" --keys "$dir/u32.bin" --out-keys "$dir/ts_k.bin" --values "$dir/f32.bin" --out-values "$dir/ts_v.bin"
t --k 3000 --largest --argsort --segments "$dir/big.seg" --keys "$dir/u32.bin" --out-keys "$dir/tl_k.bin" --out-values "$dir/tl_v.bin"
t --k 100000 --largest --argsort --key-type i32 --keys "$dir/i32.bin" --out-keys "$dir/ti_k.bin" --out-values "$dir/ti_v.bin"
t --k 4 --segments "$dir/big.seg" --key-type u64 --keys "$dir/u64.bin" --out-keys "$dir/tu_k.bin" --values "$dir/index.bin" --out-values "$dir/tu_v.bin"
t --k 7 --largest --segments "$dir/small.seg" --key-type f32 --keys "$dir/f32.bin" --out-keys "$dir/tf_k.bin"
t --k 3 --keys "$dir/empty.bin" --out-keys "$dir/te_k.bin" --argsort --out-values "$dir/te_v.bin"
verify "sort --segments, keys, on both paths" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from reference import *
d = sys.argv[1]
keys = words(f"{d}/u32.bin")
segmented(d, "sk", keys, words(f"{d}/big.seg"), lambda k: k)
segmented(d, "sks", keys, words(f"{d}/small.seg"), lambda k: k)
PY
verify "sort --segments --values" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from reference import *
d = sys.argv[1]
segmented(d, "skv", words(f"{d}/u32.bin"), words(f"{d}/big.seg"), lambda k: k)
PY
verify "sort --segments --argsort --descending: indices into the whole file" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from reference import *
d = sys.argv[1]
segmented(d, "ska", words(f"{d}/u32.bin"), words(f"{d}/big.seg"), lambda k: k, descending=True)
segmented(d, "skf", words(f"{d}/f32.bin"), words(f"{d}/small.seg"), total_order, descending=True)
PY
verify "sort --segments --key-type u64 --bits 32:64 --argsort" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from reference import *
d = sys.argv[1]
segmented(d, "sku", words(f"{d}/u64.bin", "Q"), words(f"{d}/big.seg"), lambda k: k >> 32, "Q")
assert open(f"{d}/ske_k.bin", "rb").read() == b"", "empty segmented sort"
PY
verify "topk of the whole file" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from reference import *
d = sys.argv[1]
keys = words(f"{d}/u32.bin")
segmented(d, "tw", keys, [0, len(keys)], lambda k: k, k=10)
PY
verify "topk --segments --values" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from reference import *
d = sys.argv[1]
segmented(d, "ts", words(f"{d}/u32.bin"), words(f"{d}/small.seg"), lambda k: k, k=5, values=words(f"{d}/f32.bin"))
PY
verify "topk --largest --argsort, k larger than most segments" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from reference import *
d = sys.argv[1]
segmented(d, "tl", words(f"{d}/u32.bin"), words(f"{d}/big.seg"), lambda k: k, descending=True, k=3000)
keys = words(f"{d}/i32.bin", "i")
segmented(d, "ti", keys, [0, len(keys)], lambda k: k, "i", descending=True, k=100000)
PY
verify "topk of u64 and f32 keys by segment" <<'PY'
import sys; sys.path.insert(0, sys.argv[1]); from reference import *
d = sys.argv[1]
segmented(d, "tu", words(f"{d}/u64.bin", "Q"), words(f"{d}/big.seg"), lambda k: k, "Q", k=4)
segmented(d, "tf", words(f"{d}/f32.bin"), words(f"{d}/small.seg"), total_order, descending=True, k=7)
assert open(f"{d}/te_k.bin", "rb").read() == b"" and open(f"{d}/te_v.bin", "rb").read() == b"", "empty topk"
PY
fi

if runs others; then
# refuse CODE DESCRIPTION OUTPUT... -- ARGS...: as expect, and stderr's first line is one sentence
# (a usage error adds the line that points to --help), and no OUTPUT (removed first) is left behind.
refuse() {
  code=$1; what=$2; shift 2
  outputs=
  while [ "$1" != "--" ]; do outputs="$outputs $1"; shift; done
  rm -f $outputs
  expect "$code" "$what" "$@"
  first=$(head -n 1 "$dir/stderr")
  case "$first" in
    *.) ;;
    *) echo "FAIL: $what: '$first' is not a sentence"; failures=$((failures + 1)) ;;
  esac
  if printf '%s' "$first" | grep -q '\. '; then echo "FAIL: $what: '$first' is more than one sentence"; failures=$((failures + 1)); fi
  if [ "$code" -eq 1 ] && [ "$(wc -l <"$dir/stderr")" -ne 1 ]; then
    echo "FAIL: $what: more than one line on stderr"; cat "$dir/stderr"; failures=$((failures + 1))
  fi
  for output in $outputs; do no_file "$output" "$what"; done
}
for command in sort topk; do
  k=; [ "$command" = topk ] && k="--k 3"
  for bad in start1 decreasing short; do
    refuse 1 "$command --segments $bad" "$dir/r_k.bin" "$dir/r_v.bin" -- $command $k --segments "$dir/$bad.seg" \
      --keys "$dir/u32.bin" --out-keys "$dir/r_k.bin" --values "$dir/index.bin" --out-values "$dir/r_v.bin"
  done
  refuse 1 "$command --segments with a size not a multiple of 4" "$dir/r_k.bin" -- $command $k --segments "$dir/odd.bin" \
    --keys "$dir/u32.bin" --out-keys "$dir/r_k.bin"
  refuse 1 "$command --segments with an empty file" "$dir/r_k.bin" -- $command $k --segments "$dir/empty.bin" \
    --keys "$dir/u32.bin" --out-keys "$dir/r_k.bin"
  refuse 1 "$command --segments with a missing file" "$dir/r_k.bin" "$dir/r_v.bin" -- $command $k --segments "$dir/nope.seg" \
    --keys "$dir/u32.bin" --out-keys "$dir/r_k.bin" --argsort --out-values "$dir/r_v.bin"
  refuse 1 "$command --segments with a directory" "$dir/r_k.bin" -- $command $k --segments "$dir" \
    --keys "$dir/u32.bin" --out-keys "$dir/r_k.bin"
  refuse 1 "$command with a missing keys file" "$dir/r_k.bin" -- $command $k --segments "$dir/big.seg" \
    --keys "$dir/nope.bin" --out-keys "$dir/r_k.bin"
  refuse 1 "$command with a values file of the wrong length" "$dir/r_k.bin" "$dir/r_v.bin" -- $command $k \
    --keys "$dir/u32.bin" --out-keys "$dir/r_k.bin" --values "$dir/short.bin" --out-values "$dir/r_v.bin"
done
refuse 2 "topk --k 0" "$dir/r_k.bin" -- topk --k 0 --keys "$dir/u32.bin" --out-keys "$dir/r_k.bin"
refuse 2 "topk --k 0 with segments" "$dir/r_k.bin" -- topk --k 0 --segments "$dir/big.seg" --keys "$dir/u32.bin" --out-keys "$dir/r_k.bin"
refuse 2 "topk --k past 2^32 - 1" "$dir/r_k.bin" -- topk --k 4294967296 --keys "$dir/u32.bin" --out-keys "$dir/r_k.bin"
refuse 2 "topk --k not a number" "$dir/r_k.bin" -- topk --k -3 --keys "$dir/u32.bin" --out-keys "$dir/r_k.bin"
refuse 2 "topk without --k" "$dir/r_k.bin" -- topk --keys "$dir/u32.bin" --out-keys "$dir/r_k.bin"
refuse 2 "topk --argsort with --values" "$dir/r_k.bin" "$dir/r_v.bin" -- topk --k 3 --argsort --keys "$dir/u32.bin" \
  --out-keys "$dir/r_k.bin" --values "$dir/index.bin" --out-values "$dir/r_v.bin"
refuse 2 "topk --values without --out-values" "$dir/r_k.bin" -- topk --k 3 --keys "$dir/u32.bin" --out-keys "$dir/r_k.bin" \
  --values "$dir/index.bin"
refuse 2 "topk --descending" "$dir/r_k.bin" -- topk --k 3 --descending --keys "$dir/u32.bin" --out-keys "$dir/r_k.bin"
refuse 2 "topk --largest given a value" "$dir/r_k.bin" -- topk --k 3 --largest yes --keys "$dir/u32.bin" --out-keys "$dir/r_k.bin"
refuse 1 "topk u64 file size not a multiple of 8" "$dir/r_k.bin" -- topk --k 3 --key-type u64 --keys "$dir/twelve.bin" \
  --out-keys "$dir/r_k.bin"
refuse 1 "topk unwritable values output" "$dir/r_k.bin" -- topk --k 3 --keys "$dir/u32.bin" --out-keys "$dir/r_k.bin" \
  --argsort --out-values "$dir/no/such/v.bin"

# Bad values for the new options: usage errors (2) before any file is read, except the file size.
expect 2 "unknown key type" -- sort --key-type u16 --keys "$dir/u32.bin" --out-keys "$dir/b1.bin"
expect 2 "--bits with LO > HI" -- sort --bits 8:4 --keys "$dir/u32.bin" --out-keys "$dir/b1.bin"
expect 2 "--bits past 32 for u32 keys" -- sort --bits 0:33 --keys "$dir/u32.bin" --out-keys "$dir/b1.bin"
expect 2 "--bits past 64 for u64 keys" -- sort --key-type u64 --bits 0:65 --keys "$dir/u64.bin" --out-keys "$dir/b1.bin"
expect 2 "--bits without a colon" -- sort --bits 16 --keys "$dir/u32.bin" --out-keys "$dir/b1.bin"
expect 2 "--bits with a sign" -- sort --bits -1:8 --keys "$dir/u32.bin" --out-keys "$dir/b1.bin"
expect 2 "--argsort with --values" -- sort --argsort --keys "$dir/u32.bin" --out-keys "$dir/b1.bin" --values "$dir/index.bin" --out-values "$dir/b2.bin"
expect 2 "--argsort without --out-values" -- sort --argsort --keys "$dir/u32.bin" --out-keys "$dir/b1.bin"
expect 2 "--argsort on an empty bit range" -- sort --argsort --bits 3:3 --keys "$dir/u32.bin" --out-keys "$dir/b1.bin" --out-values "$dir/b2.bin"
expect 2 "a switch given a value" -- sort --descending yes --keys "$dir/u32.bin" --out-keys "$dir/b1.bin"
expect 1 "u64 file size not a multiple of 8" -- sort --key-type u64 --keys "$dir/twelve.bin" --out-keys "$dir/b1.bin"
no_file "$dir/b1.bin" "bad sort options"
no_file "$dir/b2.bin" "bad sort options"
expect 2 "info with an unknown option" -- info --colour
expect 2 "--json with --quiet" -- demo --count 100 --json --quiet
expect 2 "demo --profile given a value" -- demo --count 100 --profile 1
for tuning in 256x4x9 256x4x 256 0x4 256x4x8x1; do
  expect 2 "demo --tuning $tuning" -- demo --count 100 --tuning "$tuning"
done

# Help, version, JSON and quiet output.
for command in info sort topk demo materials tiles; do
  expect 0 "$command --help" -- "$command" --help
  grep -q "usage: vren-radix $command" "$dir/stdout" || { echo "FAIL: $command --help printed no usage"; failures=$((failures + 1)); }
done
expect 0 "help sort" -- help sort
expect 0 "--help" -- --help
expect 0 "--version" -- --version
grep -Eq '^vren-radix [0-9]+\.[0-9]+\.[0-9]+$' "$dir/stdout" || { echo "FAIL: --version printed '$(cat "$dir/stdout")'"; failures=$((failures + 1)); }
expect 0 "info --json" -- info --json
python3 -c 'import json, sys; assert json.load(sys.stdin)["devices"]' <"$dir/stdout" || { echo "FAIL: info --json"; failures=$((failures + 1)); }
expect 0 "demo --json" -- demo --count 5000 --profile --json
python3 -c 'import json, sys; o = json.load(sys.stdin); assert o["verified"] and len(o["runs"]) == 2 and o["tuning"]["lookback_max_count"] >= 5000 and o["runs"][0]["profile"]["passes"] == 4' <"$dir/stdout" || { echo "FAIL: demo --json"; failures=$((failures + 1)); }
expect 0 "demo --quiet" -- demo --count 5000 --quiet
[ -s "$dir/stdout" ] && { echo "FAIL: demo --quiet printed to stdout"; failures=$((failures + 1)); }
expect 0 "demo with 8-bit digits" -- demo --count 5000 --tuning 64x4x8 --profile --json
python3 -c 'import json, sys; o = json.load(sys.stdin); assert o["verified"] and o["tuning"]["digit_bits"] == 8 and o["runs"][0]["profile"]["passes"] == 4' <"$dir/stdout" || { echo "FAIL: demo with 8-bit digits"; failures=$((failures + 1)); }
expect 0 "info --quiet" -- info --quiet
[ -s "$dir/stdout" ] && { echo "FAIL: info --quiet printed to stdout"; failures=$((failures + 1)); }

ls "$dir" | grep -q '\.tmp-' && { echo "FAIL: a temporary file was left behind"; failures=$((failures + 1)); }

# tiles: when one output cannot be written, none is left behind.
python3 -c "import struct; open('$dir/tile_keys.bin','wb').write(struct.pack('<4096I', *[(i % 7) for i in range(4096)]))"
mkdir -p "$dir/tiles_out/counter.u32"
expect 1 "tiles with an unwritable output" -- tiles --keys "$dir/tile_keys.bin" --width 64 --height 64 --out "$dir/tiles_out"
no_file "$dir/tiles_out/sorted_pixels.u32" "tiles with an unwritable output"
no_file "$dir/tiles_out/tile_ranges.u32" "tiles with an unwritable output"
fi

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
