// libFuzzer entry point for RequestDecoder. Not part of the package: Scripts/fuzz.sh
// compiles it together with Sources/LatchkeyHTTP/*.swift into one module, so it sees the
// codec's internals without an import.
//
// Each input is decoded the way a socket would deliver it — whole, in two halves, and in
// slices whose lengths come from the input's own bytes — and the fuzzer traps when an
// invariant breaks: a step consuming more than it was given, a body range outside the
// buffer, a decoder that makes no progress, or a different outcome for a different split.

/// What a connection saw: events in order, with adjacent body bytes merged (so splits that
/// cut a body differently compare equal), and the bytes left unconsumed at the end.
private struct FuzzTranscript: Equatable {
    enum Item: Equatable {
        case head(RequestHead)
        case body([UInt8])
        case end
        case error(HTTPParseError)
    }

    var items: [Item] = []
    var leftover = 0

    mutating func append(_ item: Item) {
        if case .body(let more) = item, case .body(let bytes)? = items.last {
            items[items.count - 1] = .body(bytes + more)
        } else {
            items.append(item)
        }
    }
}

/// Feeds `data` in pieces ending at `cuts`, keeping unconsumed bytes like a server would.
/// Every call gets a freshly allocated buffer of exactly the bytes passed, so AddressSanitizer
/// catches any read past its end.
private func drive(_ data: UnsafeRawBufferPointer, cuts: [Int]) -> FuzzTranscript {
    var decoder = RequestDecoder(limits: HTTPLimits(
        maxRequestLineBytes: 256, maxHeaderBytes: 1024, maxHeaderCount: 16, maxChunkExtensionBytes: 64
    ))
    var transcript = FuzzTranscript()
    var pending: [UInt8] = []
    var delivered = 0
    for cut in cuts + [data.count] where cut >= delivered {
        pending.append(contentsOf: data[delivered..<cut])
        delivered = cut
        var stepsWithoutProgress = 0
        while true {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: pending.count, alignment: 1)
            defer { buffer.deallocate() }
            buffer.copyBytes(from: pending)
            let step = decoder.decode(UnsafeRawBufferPointer(buffer))
            precondition(step.consumed >= 0 && step.consumed <= pending.count, "consumed out of bounds")
            switch step.event {
            case .needMore:
                pending.removeFirst(step.consumed)
            case .head(let head):
                transcript.append(.head(head))
                pending.removeFirst(step.consumed)
            case .body(let range):
                precondition(range.lowerBound >= 0 && range.upperBound <= step.consumed, "body range out of bounds")
                precondition(!range.isEmpty, "empty body event")
                transcript.append(.body(Array(buffer[range])))
                pending.removeFirst(step.consumed)
            case .end:
                transcript.append(.end)
                pending.removeFirst(step.consumed)
            case .error(let error):
                transcript.append(.error(error))
                // Failed for good: the same error, nothing consumed.
                precondition(decoder.decode(UnsafeRawBufferPointer(buffer)) == RequestDecoder.Step(consumed: 0, event: .error(error)))
                _ = error.status
                _ = error.description
                transcript.leftover = -1
                return transcript
            }
            if case .needMore = step.event { break }
            // .head and .end may consume nothing, but never twice in a row without one of
            // them consuming or the other events making progress.
            stepsWithoutProgress = step.consumed == 0 ? stepsWithoutProgress + 1 : 0
            precondition(stepsWithoutProgress < 3, "decoder makes no progress")
        }
    }
    transcript.leftover = pending.count
    return transcript
}

@_cdecl("LLVMFuzzerTestOneInput")
public func requestDecoderFuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : count)
    let whole = drive(data, cuts: [])
    let halves = drive(data, cuts: [data.count / 2])
    precondition(whole == halves, "whole and split decodes differ")
    // Cuts chosen by the input itself: the fuzzer learns to cut at interesting places.
    if let first = data.first, data.count > 1 {
        var cuts: [Int] = []
        var position = 0
        var stride = Int(first % 7) + 1
        while position + stride < data.count {
            position += stride
            cuts.append(position)
            stride = Int(data[position] % 13) + 1
        }
        precondition(whole == drive(data, cuts: cuts), "whole and sliced decodes differ")
    }
    // The response-line parser sees upstream bytes: it must not trap either.
    _ = HTTPResponseLine.parse(data)
    return 0
}
