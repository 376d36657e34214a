// The exchange target's invariants: after every event, the machine's state against the
// glue's account; after the script, what the machine delivered against what ResponseDecoder
// makes of the same bytes on its own.

import LatchkeyHTTP
@testable import LatchkeyUpstream

/// What can be read of a machine from outside: nothing of it may change once it ended.
private struct MachineFace: Equatable {
    let link: HTTP1ExchangeMachine.Link
    let upload: HTTP1ExchangeMachine.Upload
    let response: HTTP1ExchangeMachine.Response
    let isOver: Bool
    let resent: Bool
    let requestWritten: Bool
    let bytesSent: UInt64
    let bytesReceived: UInt64
    let queuedBodyBytes: Int

    init(_ machine: HTTP1ExchangeMachine) {
        link = machine.link
        upload = machine.upload
        response = machine.response
        isOver = machine.isOver
        resent = machine.resent
        requestWritten = machine.requestWritten
        bytesSent = machine.bytesSent
        bytesReceived = machine.bytesReceived
        queuedBodyBytes = machine.queuedBodyBytes
    }
}

extension ExchangeGlue {
    /// Calls `event` on the ended machine, which must ignore it: nothing of it changes.
    /// Returns its answer, for the caller to check that it is the ignoring one.
    mutating func afterEnd<Answer>(_ event: (inout HTTP1ExchangeMachine) -> Answer) -> Answer {
        let before = MachineFace(machine)
        let answer = event(&machine)
        precondition(MachineFace(machine) == before, "an ended exchange changed")
        return answer
    }

    /// The request bytes the machine must hold: those not yet written, and the written ones
    /// while a resend may need them; none once the request is dropped or the exchange over.
    private var expectedHeld: Int {
        guard !isOver, !abandoned else { return 0 }
        guard let link else { return expectedRequest.count }
        return unwritten + (resendable ? link.written.count : 0)
    }

    /// The machine's state against the glue's account, after every event.
    func checkInvariants() {
        precondition(machine.isOver == isOver, "the machine ended without saying so")
        precondition(machine.bytesSent == bodyTaken, "bytesSent is not the body bytes taken")
        if case .length(let length) = request.body { precondition(machine.bytesSent <= length, "more body than the Content-Length") }
        precondition(machine.bytesReceived == UInt64(body.count), "bytesReceived is not the body bytes delivered")
        precondition(machine.resent == (resends > 0), "a resend the glue was not told of")
        precondition(machine.queuedBodyBytes == expectedHeld,
                     "queuedBodyBytes is \(machine.queuedBodyBytes), the request's account \(expectedHeld)")
        guard !isOver else { return }
        let expectedLink: HTTP1ExchangeMachine.Link = link.map { $0.reused ? .reused : .new } ?? .awaiting
        precondition(machine.link == expectedLink, "the machine is on another connection than the glue")
        precondition(machine.requestWritten == (bodyComplete && !abandoned && unwritten == 0), "requestWritten is not the request's account")
        precondition((machine.response == .streaming(paused: true)) == paused, "a pause the delegate did not ask for")
    }

    /// What the machine delivered against ResponseDecoder's own transcript of every byte the
    /// machine was given: the same final head, a prefix of the same body, the same end. And
    /// the reuse verdict of RFC 9112 §9.3 on a complete response.
    func checkAgainstTheDecoder() {
        let reference = stream.withUnsafeBytes { drive(FuzzedResponseDecoder(requestMethod: request.method, limits: HTTPLimits()), $0, cuts: []) }
        // Interim heads are the machine's to skip (RFC 9110 §15.2).
        var items = reference.items.filter { item in
            if case .head(let head) = item { head.status >= 200 || head.status == 101 } else { true }
        }[...]
        var referenceHead: ResponseHead?
        if case .head(let first)? = items.first {
            referenceHead = first
            items = items.dropFirst()
        }
        var referenceBody: [UInt8] = []
        if case .body(let bytes)? = items.first {
            referenceBody = bytes
            items = items.dropFirst()
        }
        // The end, an error or a switch; after the stream ran out, `finish()`'s word.
        let after = items.first

        if let head {
            precondition(referenceHead?.status == head.status && referenceHead?.fields == head.fields, "a head the decoder does not see")
        }
        precondition(referenceBody.starts(with: body), "a body the decoder does not see")
        let running = ending == nil && link != nil && !paused
        switch ending {
        case .complete(let reusable)?:
            guard let referenceHead, case .end? = after else { preconditionFailure("a completion the decoder does not see") }
            precondition(body == referenceBody, "a response complete short of its body")
            let keepsAlive = referenceHead.version == .http1_1 && !referenceHead.fields.connectionLists("close")
            let expected = completion!.writtenWhole && completion!.nothingFollowed && !request.requestCloses && keepsAlive
            precondition(reusable == expected, "a connection kept that RFC 9112 §9.3 closes, or closed that it keeps")
        case .completeAtClose?:
            guard referenceHead?.framing == .closeDelimited, case .end? = after else {
                preconditionFailure("a close that completes a response not delimited by it")
            }
            precondition(body == referenceBody, "a response complete short of its body")
        case .failedDecoding?:
            let malformed = if case .error? = after { body == referenceBody } else { false }
            precondition(malformed || referenceHead?.status == 101, "a decoding failure the decoder does not see")
        case nil where running:
            // Every byte was decoded: what the decoder ends, the machine must have ended.
            precondition(referenceHead?.status != 101, "a switch of protocols not failed")
            if case .end? = after, referenceHead?.framing != .closeDelimited {
                preconditionFailure("a response complete in the bytes but not for the machine")
            }
            if case .error(let error)? = after, error != HTTPParseError(.truncatedResponse) {
                preconditionFailure("a malformed response the machine goes on with")
            }
        case .failed?, .cancelled?, nil:
            break
        }
    }
}
