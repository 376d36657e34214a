// The exchange target's stand-in for HTTP1Transfer: it feeds HTTP1ExchangeMachine the events
// of the script under the glue's rules, does what each step says, and keeps its own account
// of the exchange (the request bytes that should go out, what the connection took, what was
// delivered, how it ended) to hold every answer of the machine against.

import LatchkeyHTTP
import LatchkeyLoop
@testable import LatchkeyUpstream

/// A connection the glue holds, as the glue saw it.
struct FuzzLink {
    /// Taken from the pool: a failure before any response byte sends the request again.
    let reused: Bool
    /// Every byte the connection took, in order.
    var written: [UInt8] = []
    /// Response bytes came on it: no resend from then on.
    var answered = false
    /// The machine said `.requestWritten` on it (the first-byte timer starts once a link).
    var saidRequestWritten = false
}

/// How an exchange ended, as the glue learnt it.
enum FuzzEnding: Equatable {
    /// `received` said `.complete`.
    case complete(reusable: Bool)
    /// A close-delimited body ended with the close.
    case completeAtClose
    /// `received` said `.fail`: the response was malformed, or switched protocols.
    case failedDecoding
    /// A failure of the connection, a timer or the request body.
    case failed(UpstreamError.Code)
    case cancelled
}

struct ExchangeGlue {
    var machine: HTTP1ExchangeMachine
    let request: ExchangeRequest
    var now = LoopInstant(nanoseconds: 1_000_000_000)
    /// Nil while none is ready (before the first, after a resend) and after the end.
    var link: FuzzLink?
    var ending: FuzzEnding?
    var resends = 0

    // MARK: the request

    /// The request as it must go out: the head, then each body slice the machine took in
    /// its framing (chunked encoded here, independently of `ChunkedEncoder`).
    var expectedRequest: [UInt8]
    /// Body bytes the machine took.
    var bodyTaken: UInt64 = 0
    /// The client's body is complete (its length reached, or ended and the last chunk due).
    var bodyComplete: Bool
    /// A write failed after the answer began: the rest of the request is dropped.
    var abandoned = false
    /// The client was asked for more body and has sent none since.
    var clientAsked = false

    // MARK: the response

    /// Bytes read and not yet consumed: the connection's input buffer.
    var pending: [UInt8] = []
    /// Every byte the machine was given to decode: the reference decoder's input.
    var stream: [UInt8] = []
    var head: (status: Int, fields: HTTPFields)?
    var body: [UInt8] = []
    /// The delegate asked for no more body until it resumes.
    var paused = false
    var delegateWantsMore = true
    var delegateCancelsOnDelivery = false
    /// For a `.complete`: whether the request was written whole and nothing followed the
    /// response, the parts of the reuse verdict the glue can see.
    var completion: (writtenWhole: Bool, nothingFollowed: Bool)?

    // MARK: timers

    var idleDeadline: LoopInstant?
    var firstByteDeadline: LoopInstant?
    /// The last sign of the upstream's life the machine counts: a write it took, bytes it
    /// sent, or the delegate's resume. The machine may count later ones (the time Latchkey
    /// holds the exchange), never earlier.
    var lastUpstreamSign: LoopInstant

    init(request: ExchangeRequest) {
        self.request = request
        let head = request.head
        machine = HTTP1ExchangeMachine(head: head, method: request.method, body: request.body,
                                       requestCloses: request.requestCloses, idleTimeout: request.idleTimeout, now: now)
        expectedRequest = head
        bodyComplete = request.body == .none || request.body == .length(0)
        lastUpstreamSign = now
        idleDeadline = now.advanced(by: request.idleTimeout)
    }

    var isOver: Bool { ending != nil }

    /// Request bytes the current connection has yet to take (all of them before one).
    var unwritten: Int { expectedRequest.count - (link?.written.count ?? 0) }

    /// The request is on the connection whole: what a reusable connection needs.
    var writtenWhole: Bool { bodyComplete && !abandoned && link != nil && unwritten == 0 }

    /// A failure now sends the request again: a pooled connection, no answer, and every
    /// byte written still held.
    var resendable: Bool {
        guard let link else { return false }
        return link.reused && !link.answered && link.written.count <= RequestOutput.resendLimit
    }

    mutating func perform(_ event: ExchangeEvent) {
        switch event {
        case .connect(let reused): connect(reused: reused)
        case .connectFails: connectFails()
        case .body(let bytes): sendBody(bytes)
        case .bodyEnds: endBody()
        case .write(let limit): _ = write(upTo: limit)
        case .writeAll: while write(upTo: .max) == .write, link != nil {}
        case .receive(let bytes): receive(bytes)
        case .peerCloses: peerCloses()
        case .reset: reset()
        case .delegateWantsMore(let more): delegateWantsMore = more
        case .delegateCancelsOnDelivery: delegateCancelsOnDelivery = true
        case .resume: resume()
        case .firstByteTimer: fireFirstByteTimer()
        case .idleTimer: fireIdleTimer()
        case .cancel: cancel()
        case .wait(let duration): now = now.advanced(by: duration)
        }
    }

    // MARK: the connection

    /// The glue attaches a connection only when it has none.
    mutating func connect(reused: Bool) {
        if isOver { return afterEnd { $0.connected(reused: reused) } }
        guard link == nil else { return }
        machine.connected(reused: reused)
        // A resend goes on a new connection, whatever the glue says.
        link = FuzzLink(reused: reused && resends == 0)
        precondition(machine.link == (link!.reused ? .reused : .new), "a connection taken as the wrong kind")
    }

    /// The glue's own failure (`HTTP1Transfer.fail`): libcurl could not connect.
    mutating func connectFails() {
        guard !isOver, link == nil else { return }
        let error = machine.end(UpstreamError(.connectFailed, detail: "refused"))
        ended(.failed(error.code))
    }

    /// The machine lost the connection; `whileWriting`: a send failed.
    mutating func lose(_ error: UpstreamError, whileWriting: Bool) {
        let answered = link?.answered ?? false
        let wasResendable = resendable
        let step = machine.connectionFailed(error, whileWriting: whileWriting)
        if whileWriting && answered {
            precondition(step == .readOn, "a write failure after the answer began does not read on")
            abandoned = true
        } else if wasResendable {
            precondition(step == .resend, "a failure before any answer on a pooled connection is not resent")
            resent()
        } else {
            precondition(step == .fail(error), "a lost connection that does not fail the exchange")
            ended(.failed(error.code))
        }
    }

    /// The glue closes the connection and opens a new one; its input goes with it.
    mutating func resent() {
        resends += 1
        precondition(resends == 1, "a request sent a third time")
        precondition(pending.isEmpty && stream.isEmpty, "a resend after response bytes")
        link = nil
        firstByteDeadline = nil
        clientAsked = false
    }

    // MARK: the end

    mutating func cancel() {
        if isOver { return precondition(!afterEnd { $0.cancel() }, "an ended exchange is cancelled") }
        precondition(machine.cancel(), "a running exchange refuses its cancel")
        ended(.cancelled)
    }

    /// The exchange ended: the glue releases the connection, its input and the timers.
    mutating func ended(_ ending: FuzzEnding) {
        precondition(self.ending == nil, "an exchange that ends twice")
        precondition(machine.isOver, "an ending the machine does not know")
        self.ending = ending
        link = nil
        pending = []
        paused = false
        idleDeadline = nil
        firstByteDeadline = nil
    }
}
