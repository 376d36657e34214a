// libFuzzer entry point for RequestDecoder. Not part of the package: Scripts/fuzz.sh builds
// it with FuzzDriving.swift against Sources/LatchkeyHTTP, instrumented, into its own binary.

import LatchkeyHTTP

/// The request decoder as the fuzz driver sees it. A request stream has no ending of its own
/// to report: a connection closed between requests is no error, one closed mid-request is
/// the server's to notice.
private struct FuzzedRequestDecoder: FuzzedDecoder {
    var decoder = RequestDecoder(limits: HTTPLimits(
        maxRequestLineBytes: 256, maxHeaderBytes: 1024, maxHeaderCount: 16, maxChunkExtensionBytes: 64
    ))

    mutating func decode(_ input: UnsafeRawBufferPointer) -> (consumed: Int, event: FuzzEvent<RequestHead>) {
        let step = decoder.decode(input)
        return switch step.event {
        case .needMore: (step.consumed, .needMore)
        case .head(let head): (step.consumed, .head(head))
        case .body(let range): (step.consumed, .body(range))
        case .end: (step.consumed, .end(trailers: decoder.trailers))
        case .error(let error): (step.consumed, .error(error))
        }
    }

    mutating func finish() -> FuzzEvent<RequestHead>? { nil }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func requestDecoderFuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : count)
    _ = decodeInEverySplit(data) { FuzzedRequestDecoder() }
    // The response-line parser sees upstream bytes: it must not trap either.
    _ = HTTPResponseLine.parse(data)
    return 0
}
