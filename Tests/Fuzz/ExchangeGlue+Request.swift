// The exchange target's write side: the client's body taken into the request, and the
// glue's write loop, each answer of the machine held against the bytes that must go out.

@testable import LatchkeyUpstream

extension ExchangeGlue {
    // MARK: the request body

    mutating func sendBody(_ bytes: [UInt8]) {
        if isOver {
            let wantsWrite = afterEnd { machine in withExactCopy(of: bytes) { machine.bodyAvailable($0) } }
            return precondition(!wantsWrite, "an ended exchange asks for a write")
        }
        var taken = bodyComplete || abandoned ? 0 : bytes.count
        if case .length(let length) = request.body { taken = min(taken, Int(length - bodyTaken)) }
        let wasDry = unwritten == 0
        let wantsWrite = withExactCopy(of: bytes) { machine.bodyAvailable($0) }
        if taken > 0 {
            let slice = bytes[..<taken]
            if request.chunked {
                expectedRequest += Array((String(taken, radix: 16) + "\r\n").utf8) + slice + Array("\r\n".utf8)
            } else {
                expectedRequest += slice
            }
            bodyTaken += UInt64(taken)
            clientAsked = false
            if case .length(let length) = request.body, bodyTaken == length { bodyComplete = true }
        }
        precondition(wantsWrite == (taken > 0 && link != nil && wasDry), "bodyAvailable asks for a write it should not, or not for one it should")
    }

    mutating func endBody() {
        if isOver { return precondition(afterEnd { $0.bodyEnded() } == .none, "an ended exchange acts on the body's end") }
        let wasDry = unwritten == 0
        let step = machine.bodyEnded()
        guard !bodyComplete && !abandoned else { return precondition(step == .none, "a body that ends twice, or after it was dropped") }
        guard request.chunked else {
            // A sized body is open only while short of its length.
            guard case .fail(let error) = step else { preconditionFailure("a body that ends short of its Content-Length is sent") }
            return ended(.failed(error.code))
        }
        expectedRequest += Array("0\r\n\r\n".utf8)
        bodyComplete = true
        precondition(step == (wasDry && link != nil ? .write : .none), "the last chunk's write is not asked for as it should be")
    }

    // MARK: writing

    /// One turn of the glue's write loop: asks the machine, and on `.write` offers its bytes
    /// to a connection that takes at most `limit` (nil: refuses them). Returns the step.
    mutating func write(upTo limit: Int?) -> HTTP1ExchangeMachine.WriteStep {
        if isOver {
            precondition(afterEnd { $0.nextWrite() } == .none, "an ended exchange writes")
            return .none
        }
        let step = machine.nextWrite()
        precondition(step == expectedWriteStep, "nextWrite says \(step), the request's state \(expectedWriteStep)")
        switch step {
        case .write:
            var offered: [UInt8] = []
            let count = machine.sendUnwritten(now: now) { bytes in
                offered = Array(bytes)
                return limit.map { min($0, bytes.count) }
            }
            let done = expectedRequest.count - unwritten
            precondition(!offered.isEmpty && offered.count <= unwritten, "a write of nothing, or of more than the request")
            precondition(offered[...] == expectedRequest[done..<(done + offered.count)], "the bytes written are not the request's next ones")
            guard let count else {
                lose(UpstreamError(.sendFailed, detail: "EPIPE"), whileWriting: true)
                return step
            }
            guard count > 0 else { return step }
            link!.written += offered[..<count]
            lastUpstreamSign = now
        case .waitForBody(let askClient):
            clientAsked = clientAsked || askClient
        case .requestWritten:
            link!.saidRequestWritten = true
            if request.firstByteTimeout > .zero { firstByteDeadline = now.advanced(by: request.firstByteTimeout) }
        case .none:
            break
        }
        return step
    }

    /// What `nextWrite` must say, from the glue's account alone.
    private var expectedWriteStep: HTTP1ExchangeMachine.WriteStep {
        guard let link, !abandoned else { return .none }
        if unwritten > 0 { return .write }
        if !bodyComplete { return .waitForBody(askClient: !clientAsked) }
        // Written whole: the first-byte timer starts once, unless an answer came first.
        return link.answered || link.saidRequestWritten ? .none : .requestWritten
    }
}
