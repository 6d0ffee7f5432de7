#!/bin/sh
# The CLI's bad-input paths: each must exit non-zero with one sentence on stderr and leave no
# output file behind; good input must sort. Usage: cli_test.sh path/to/vren-radix
set -u
cli=$1
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
: >"$dir/empty.bin"
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
ls "$dir" | grep -q '\.tmp-' && { echo "FAIL: a temporary file was left behind"; failures=$((failures + 1)); }

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
