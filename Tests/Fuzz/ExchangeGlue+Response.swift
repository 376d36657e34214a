// The exchange target's read side: bytes from the connection decoded under the machine's
// contract (`received` again after every event but needMore, paused, complete and fail; the
// consumed bytes dropped), deliveries to a delegate that may pause or cancel, and the ways
// a connection is lost while reading.

import LatchkeyHTTP
@testable import LatchkeyUpstream

extension ExchangeGlue {
    /// Bytes came on the connection. The glue reads only with a connection, and not while
    /// the delegate paused the response.
    mutating func receive(_ bytes: [UInt8]) {
        if isOver {
            let now = now
            let step = afterEnd { machine in withExactCopy(of: bytes) { machine.received($0, now: now) } }
            return precondition(step == DecodeStep(consumed: 0, event: .needMore), "an ended exchange decodes")
        }
        guard link != nil else { return }
        guard !paused else {
            // What a decoding while paused must say (the glue does not start one).
            let step = withExactCopy(of: pending) { machine.received($0, now: now) }
            return precondition(step == DecodeStep(consumed: 0, event: .paused), "a paused response decodes")
        }
        pending += bytes
        stream += bytes
        decode()
    }

    /// `HTTP1Transfer.decodeInput`: decodes what is pending until the machine says to stop.
    mutating func decode() {
        var stepsWithoutProgress = 0
        while link != nil, !isOver {
            let step = withExactCopy(of: pending) { machine.received($0, now: now) }
            precondition(step.consumed >= 0 && step.consumed <= pending.count, "consumed more than the input")
            if !pending.isEmpty {
                link!.answered = true
                lastUpstreamSign = now
            }
            switch step.event {
            case .needMore:
                pending.removeFirst(step.consumed)
                return
            case .paused:
                preconditionFailure("a response paused without the delegate's word")
            case .head(let status, let fields, let declared):
                precondition(head == nil, "a second head")
                precondition(declared == DeclaredFraming(fields), "a head delivered with framing its fields do not declare")
                precondition(status >= 200 && status != 101, "an interim or switching head delivered")
                head = (status, fields)
                pending.removeFirst(step.consumed)
                firstByteDeadline = nil
                if delegateCancelsOnDelivery { return cancel() }
            case .body(let range):
                precondition(head != nil, "a body before its head")
                precondition(!range.isEmpty && range.lowerBound >= 0 && range.upperBound <= step.consumed, "a body range outside the bytes consumed")
                body += pending[range]
                pending.removeFirst(step.consumed)
                if delegateCancelsOnDelivery { return cancel() }
                let pauses = machine.delivered(more: delegateWantsMore)
                precondition(pauses == !delegateWantsMore, "the delegate's pause is not heeded")
                if pauses {
                    paused = true
                    return
                }
            case .complete(let reusable):
                precondition(head != nil, "a response complete without its head")
                completion = (writtenWhole, step.consumed == pending.count)
                // The rest of the verdict needs the head's version: checkAgainstTheDecoder.
                precondition(!reusable || (completion! == (true, true) && !request.requestCloses),
                             "a connection kept with the request not written whole, bytes after the response or the request's close")
                pending.removeFirst(step.consumed)
                return ended(.complete(reusable: reusable))
            case .fail:
                // Which code (which status the client gets) is the unit tests' to pin.
                return ended(.failedDecoding)
            }
            stepsWithoutProgress = step.consumed == 0 ? stepsWithoutProgress + 1 : 0
            precondition(stepsWithoutProgress < 2, "a decoding that makes no progress")
        }
    }

    /// The delegate lifts its pause: the glue decodes what it holds.
    mutating func resume() {
        if isOver {
            let now = now
            precondition(!afterEnd { $0.delivered(more: false) }, "an ended exchange pauses")
            return precondition(!afterEnd { $0.resumeReceiving(now: now) }, "an ended exchange resumes")
        }
        let resumed = machine.resumeReceiving(now: now)
        precondition(resumed == paused, "a resume that does not match the pause")
        guard resumed else { return }
        paused = false
        lastUpstreamSign = now
        decode()
    }

    /// A read returned 0. The glue reads it only after decoding every byte before it, and
    /// not while paused.
    mutating func peerCloses() {
        if isOver { return precondition(afterEnd { $0.peerClosed() } == .ignore, "an ended exchange sees a close") }
        guard link != nil, !paused else { return }
        let wasResendable = resendable
        switch machine.peerClosed() {
        case .resend:
            precondition(wasResendable, "a resend without a pooled connection, or after an answer")
            resent()
        case .complete:
            precondition(!wasResendable && head != nil, "a close that completes a response without its head")
            ended(.completeAtClose)
        case .fail(let error):
            precondition(!wasResendable, "a close before any answer on a pooled connection is not resent")
            ended(.failed(error.code))
        case .ignore, .readOn:
            preconditionFailure("a close that changes nothing")
        }
    }

    /// A read failed. The glue reads only with a connection, and not while paused.
    mutating func reset() {
        let error = UpstreamError(.receiveFailed, detail: "ECONNRESET")
        if isOver {
            return precondition(afterEnd { $0.connectionFailed(error, whileWriting: false) } == .ignore, "an ended exchange sees a reset")
        }
        guard link != nil, !paused else { return }
        lose(error, whileWriting: false)
    }
}
