#!/usr/bin/env bash
# Fuzzes LatchkeyHTTP's RequestDecoder with libFuzzer for SECONDS (default 600).
#
#   Scripts/fuzz.sh [SECONDS]
#
# Builds Sources/LatchkeyHTTP/*.swift with -sanitize=fuzzer,address into a static library
# under .build-fuzz/lib/ (no package build involved), links Tests/Fuzz/RequestDecoderFuzz.swift
# and the driving it shares (FuzzDriving.swift) against it into .build-fuzz/, seeds a corpus
# with valid and hostile requests, runs one fuzzing process (the machine is shared: no
# -jobs), and exits non-zero if libFuzzer reports a crash, a leak or a sanitizer error. The
# corpus, seeds, dictionary and crash inputs live in .build-fuzz/request/; replay one with
#   .build-fuzz/request-decoder-fuzz .build-fuzz/request/artifacts/crash-…
set -euo pipefail

seconds="${1:-600}"
targets=(request)
per_target="$seconds"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/.build-fuzz"

# libFuzzer and ASan come with the Swift toolchain's clang runtime
# (usr/lib/swift/clang/lib/linux/libclang_rt.fuzzer-x86_64.a in every swift.org Linux
# toolchain). A distribution that strips them needs its own compiler-rt of the same clang
# version, which apt cannot match reliably: say so rather than link a mismatched one.
toolchain="$(dirname "$(dirname "$(command -v swiftc)")")"
if ! ls "$toolchain"/lib/swift/clang/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1; then
    echo "fuzz.sh: no libFuzzer runtime in $toolchain/lib/swift/clang/lib/linux;" \
         "install a swift.org toolchain (it ships compiler-rt)" >&2
    exit 2
fi

# The toolchain's lld: gold warns about every ASan helper symbol it cannot export.
flags=(-swift-version 6 -O -g -sanitize=fuzzer,address -parse-as-library -use-ld=lld
       -module-cache-path "$out/module-cache")
sources=("$root"/Sources/LatchkeyHTTP/*.swift)
library="$out/lib/libLatchkeyHTTP.a"
mkdir -p "$out/lib"
if [ ! -f "$library" ] || [ -n "$(find "${sources[@]}" -newer "$library")" ]; then
    echo "fuzz.sh: compiling $library" >&2
    swiftc "${flags[@]}" -module-name LatchkeyHTTP -emit-library -static \
        -emit-module -emit-module-path "$out/lib/LatchkeyHTTP.swiftmodule" \
        "${sources[@]}" -o "$library"
fi
for target in "${targets[@]}"; do
    binary="$out/$target-decoder-fuzz"
    case "$target" in
        request) entry="$root/Tests/Fuzz/RequestDecoderFuzz.swift" module=RequestDecoderFuzz ;;
    esac
    driving="$root/Tests/Fuzz/FuzzDriving.swift"
    if [ ! -x "$binary" ] || [ -n "$(find "$library" "$driving" "$entry" -newer "$binary")" ]; then
        echo "fuzz.sh: compiling $binary" >&2
        swiftc "${flags[@]}" -module-name "$module" -I "$out/lib" -L "$out/lib" -lLatchkeyHTTP \
            "$driving" "$entry" -o "$binary"
    fi
    mkdir -p "$out/$target/corpus" "$out/$target/seeds" "$out/$target/artifacts"
done

# Seeds: one file per message, written with printf so \r\n are real bytes.
seed() { printf "$3" > "$out/$1/seeds/$2"; }
seed request get 'GET / HTTP/1.1\r\nHost: example.com\r\n\r\n'
seed request post-length 'POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello'
seed request post-chunked 'POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\n'
seed request pipelined 'GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n'
seed request http10 'GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n'
seed request continue 'PUT /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc'
seed request cl-te 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'
seed request cl-conflict 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nContent-Length: 5, 5\r\n\r\nabcd'
seed request te-gzip 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n'
seed request obs-fold 'GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n 2\r\n\r\n'
seed request nul 'GET / HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n'
seed request bare-lf 'GET / HTTP/1.1\nHost: a\n\n'
seed request chunk-overflow 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n'
seed request h2 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'
seed request leading-crlf '\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n'
seed request response 'HTTP/1.1 200 OK\r\n'

dictionary() { cat > "$out/$1/http.dict"; }
common='"\x0d\x0a"
"\x0d\x0a\x0d\x0a"
"HTTP/1.1"
"HTTP/1.0"
"HTTP/2.0"
"Content-Length: "
"Transfer-Encoding: "
"chunked"
"Connection: "
"close"
"keep-alive"
";ext=\"v\""
"0\x0d\x0a\x0d\x0a"
"ffffffffffffffff"
"18446744073709551615"'
dictionary request <<DICT
$common
" HTTP/1.1\x0d\x0a"
" HTTP/1.0\x0d\x0a"
"GET"
"POST"
"Host: "
"Expect: 100-continue"
DICT

# Swift's own crash handler reads the crashed process's memory and trips ASan, hiding the
# real report: leave crash reporting to libFuzzer.
export SWIFT_BACKTRACE=enable=no
failed=0
for target in "${targets[@]}"; do
    echo "fuzz.sh: fuzzing the $target decoder for ${per_target}s" >&2
    status=0
    "$out/$target-decoder-fuzz" "$out/$target/corpus" "$out/$target/seeds" \
        -dict="$out/$target/http.dict" \
        -max_len=2048 \
        -max_total_time="$per_target" \
        -print_final_stats=1 \
        -artifact_prefix="$out/$target/artifacts/" || status=$?
    if [ "$status" -ne 0 ]; then
        echo "fuzz.sh: libFuzzer found a problem in the $target decoder (exit $status);" \
             "see $out/$target/artifacts/" >&2
        failed="$status"
    fi
done
[ "$failed" -eq 0 ] || exit "$failed"
echo "fuzz.sh: no findings in ${seconds}s (${targets[*]})" >&2
