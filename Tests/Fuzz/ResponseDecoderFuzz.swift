// libFuzzer entry point for ResponseDecoder. Not part of the package: Scripts/fuzz.sh builds
// it with FuzzDriving.swift and FuzzedResponseDecoder.swift against Sources/LatchkeyHTTP,
// instrumented, into its own binary.
//
// The first byte of an input is not part of the response: its low bit says whether the
// request was HEAD (whose response has no body, whatever its head says), so the fuzzer
// explores both framings of the same bytes. The rest is the upstream's stream, which ends
// with the input (`finish()`): a close-delimited body ends there, other framings are cut.

import LatchkeyHTTP

/// Small limits, so that the fuzzer reaches them.
private let smallLimits = HTTPLimits(maxRequestLineBytes: 256, maxHeaderBytes: 1024, maxHeaderCount: 16, maxChunkExtensionBytes: 64)

/// Traps unless the transcript is one response as RFC 9110 §15.2 and RFC 9112 §6.3 shape
/// it: interim heads without bodies, then a final head whose body its framing bounds and
/// nothing after its end, or a 101 and the switch; an error may cut it anywhere.
private func checkShape(_ transcript: FuzzTranscript<ResponseHead>, requestMethod: String) {
    var items = transcript.items[...]
    if case .error? = items.last { items = items.dropLast() }
    while case .head(let head)? = items.first, head.status < 200, head.status != 101 {
        precondition(head.framing == .none, "an interim response with a body")
        items = items.dropFirst()
    }
    guard case .head(let head)? = items.first else {
        precondition(items.isEmpty, "an event before the head")
        return
    }
    items = items.dropFirst()
    if head.status == 101 {
        precondition(head.framing == .none && items.elementsEqual([.switched]), "a 101 without its switch")
        return
    }
    if requestMethod == "HEAD" || head.status == 204 || head.status == 304 {
        precondition(head.framing == .none, "a body where RFC 9112 §6.3 allows none")
    }
    var bodyCount: UInt64 = 0
    if case .body(let bytes)? = items.first {
        bodyCount = UInt64(bytes.count)
        items = items.dropFirst()
    }
    switch head.framing {
    case .none: precondition(bodyCount == 0, "a body after a head without one")
    case .length(let length): precondition(bodyCount <= length && (items.isEmpty || bodyCount == length), "a body not of its length")
    case .chunked, .closeDelimited: break
    }
    if case .end? = items.first { items = items.dropFirst() }
    precondition(items.isEmpty, "an event after the end")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func responseDecoderFuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : count)
    guard let control = input.first else { return 0 }
    let requestMethod = control & 1 == 1 ? "HEAD" : "GET"
    let stream = UnsafeRawBufferPointer(rebasing: input.dropFirst())
    let transcript = decodeInEverySplit(stream) { FuzzedResponseDecoder(requestMethod: requestMethod, limits: smallLimits) }
    checkShape(transcript, requestMethod: requestMethod)
    return 0
}
