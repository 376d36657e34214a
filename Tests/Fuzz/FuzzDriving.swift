// What the libFuzzer targets in this directory share; Scripts/fuzz.sh compiles it into
// each target's binary. A target wraps its decoder as a `FuzzedDecoder` and hands each input
// to `decodeInEverySplit`, which decodes it the way a socket would deliver it — whole, in
// two halves, and in slices whose lengths come from the input's own bytes — and traps when
// an invariant breaks: a step consuming more than it was given, a body range outside the
// buffer or empty, a decoder that makes no progress, an error or a switch that does not
// stick, or a different outcome for a different split. A target built on a decoder takes
// `drive` with no cuts as its reference transcript.

import LatchkeyHTTP

/// One event of a push-based decoder (STYLE.md habit 1), in the shape the driver knows.
enum FuzzEvent<Head: Equatable>: Equatable {
    case needMore
    case head(Head)
    /// Body bytes: `input[range]` of the input just passed.
    case body(Range<Int>)
    /// A message is complete, with the trailer fields it had.
    case end(trailers: HTTPFields)
    /// The rest of the stream belongs to another protocol: final, like an error.
    case switched
    case error(HTTPParseError)
}

/// A decoder under fuzzing: its events mapped onto `FuzzEvent`.
protocol FuzzedDecoder {
    associatedtype Head: Equatable
    mutating func decode(_ input: UnsafeRawBufferPointer) -> (consumed: Int, event: FuzzEvent<Head>)
    /// Tells the decoder that the stream ended; nil for a decoder with no notion of it.
    mutating func finish() -> FuzzEvent<Head>?
}

/// What a connection saw: events in order, with adjacent body bytes merged (so splits that
/// cut a body differently compare equal), and the bytes left unconsumed at the end.
struct FuzzTranscript<Head: Equatable>: Equatable {
    enum Item: Equatable {
        case head(Head)
        case body([UInt8])
        case end(trailers: HTTPFields)
        case switched
        case error(HTTPParseError)
    }

    var items: [Item] = []
    /// -1 after an error.
    var leftover = 0

    mutating func append(_ item: Item) {
        if case .body(let more) = item, case .body(let bytes)? = items.last {
            items[items.count - 1] = .body(bytes + more)
        } else {
            items.append(item)
        }
    }

    var hasEnded: Bool {
        if case .end? = items.last { true } else { false }
    }
}

/// Decodes `data` whole, in halves and in slices chosen by its bytes; traps unless all three
/// give the same transcript, which it returns.
func decodeInEverySplit<Decoder: FuzzedDecoder>(
    _ data: UnsafeRawBufferPointer, _ makeDecoder: () -> Decoder
) -> FuzzTranscript<Decoder.Head> {
    let whole = drive(makeDecoder(), data, cuts: [])
    precondition(whole == drive(makeDecoder(), data, cuts: [data.count / 2]), "whole and split decodes differ")
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
        precondition(whole == drive(makeDecoder(), data, cuts: cuts), "whole and sliced decodes differ")
    }
    return whole
}

/// Calls `body` with a freshly allocated buffer holding exactly `bytes`, so that
/// AddressSanitizer catches any read past its end (an array's spare capacity would hide it).
func withExactCopy<R>(of bytes: some Collection<UInt8>, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
    defer { buffer.deallocate() }
    buffer.copyBytes(from: bytes)
    return body(UnsafeRawBufferPointer(buffer))
}

/// Feeds `data` in pieces ending at `cuts`, keeping unconsumed bytes like a connection would,
/// then ends the stream. Every call gets an exact copy of the bytes passed. With no cuts, it
/// is also the reference transcript that a target built on a decoder compares with.
func drive<Decoder: FuzzedDecoder>(
    _ decoder: Decoder, _ data: UnsafeRawBufferPointer, cuts: [Int]
) -> FuzzTranscript<Decoder.Head> {
    var decoder = decoder
    var transcript = FuzzTranscript<Decoder.Head>()
    var pending: [UInt8] = []
    var delivered = 0
    var switched = false
    for cut in cuts + [data.count] where cut >= delivered {
        pending.append(contentsOf: data[delivered..<cut])
        delivered = cut
        // After a switch the bytes are the new protocol's: they stay unconsumed.
        var stepsWithoutProgress = 0
        while !switched {
            let step = withExactCopy(of: pending) { decoder.decode($0) }
            precondition(step.consumed >= 0 && step.consumed <= pending.count, "consumed out of bounds")
            switch step.event {
            case .needMore:
                pending.removeFirst(step.consumed)
            case .head(let head):
                transcript.append(.head(head))
            case .body(let range):
                precondition(range.lowerBound >= 0 && range.upperBound <= step.consumed, "body range out of bounds")
                precondition(!range.isEmpty, "empty body event")
                transcript.append(.body(Array(pending[range])))
            case .end(let trailers):
                transcript.append(.end(trailers: trailers))
            case .switched:
                transcript.append(.switched)
                switched = true
            case .error(let error):
                transcript.append(.error(error))
                return failed(&decoder, error, transcript)
            }
            if case .needMore = step.event { break }
            pending.removeFirst(step.consumed)
            if switched {
                // Switched for good: the same event, nothing consumed.
                let again = pending.withUnsafeBytes { decoder.decode($0) }
                precondition(again.consumed == 0 && again.event == .switched, "a switch that does not stick")
            }
            // .head and .end may consume nothing, but never twice in a row without one of
            // them consuming or the other events making progress.
            stepsWithoutProgress = step.consumed == 0 ? stepsWithoutProgress + 1 : 0
            precondition(stepsWithoutProgress < 3, "decoder makes no progress")
        }
    }
    transcript.leftover = pending.count
    guard let ending = decoder.finish() else { return transcript }
    precondition(decoder.finish() == ending, "finishing twice differs")
    switch ending {
    case .end(let trailers):
        // Ends a close-delimited body; repeats the end of a complete message.
        if !transcript.hasEnded { transcript.append(.end(trailers: trailers)) }
    case .switched:
        precondition(switched, "a switch reported only by finish")
    case .error(let error):
        precondition(!transcript.hasEnded && !switched, "a complete message cut short")
        transcript.append(.error(error))
        return failed(&decoder, error, transcript)
    case .needMore, .head, .body:
        preconditionFailure("finish gives no ending")
    }
    return transcript
}

/// After `error` the decoder fails for good: the same error, nothing consumed.
private func failed<Decoder: FuzzedDecoder>(
    _ decoder: inout Decoder, _ error: HTTPParseError, _ transcript: FuzzTranscript<Decoder.Head>
) -> FuzzTranscript<Decoder.Head> {
    let again = [UInt8]("more".utf8).withUnsafeBytes { decoder.decode($0) }
    precondition(again.consumed == 0 && again.event == .error(error), "an error that does not stick")
    if let ending = decoder.finish() { precondition(ending == .error(error), "an error that finish forgets") }
    _ = error.status
    _ = error.description
    var transcript = transcript
    transcript.leftover = -1
    return transcript
}
