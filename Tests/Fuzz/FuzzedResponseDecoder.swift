// ResponseDecoder as the fuzz driver sees it, shared by the targets that need it: the
// response target fuzzes it, the exchange target takes it as the reference for what
// HTTP1ExchangeMachine delivers. Scripts/fuzz.sh compiles it into both.

import LatchkeyHTTP

/// The response decoder as the fuzz driver sees it.
struct FuzzedResponseDecoder: FuzzedDecoder {
    var decoder: ResponseDecoder

    init(requestMethod: String, limits: HTTPLimits) {
        decoder = ResponseDecoder(limits: limits, requestMethod: requestMethod)
    }

    mutating func decode(_ input: UnsafeRawBufferPointer) -> (consumed: Int, event: FuzzEvent<ResponseHead>) {
        let step = decoder.decode(input)
        return (step.consumed, fuzzEvent(step.event))
    }

    mutating func finish() -> FuzzEvent<ResponseHead>? {
        fuzzEvent(decoder.finish())
    }

    private func fuzzEvent(_ event: ResponseDecoder.Event) -> FuzzEvent<ResponseHead> {
        switch event {
        case .needMore: .needMore
        case .head(let head): .head(head)
        case .body(let range): .body(range)
        case .end: .end(trailers: decoder.trailers)
        case .switched: .switched
        case .error(let error): .error(error)
        }
    }
}
