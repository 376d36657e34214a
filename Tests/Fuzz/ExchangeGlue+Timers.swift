// The exchange target's timers: each fires at its deadline or later, as a loop's do, and
// only while the glue has it armed.

import LatchkeyLoop
@testable import LatchkeyUpstream

extension ExchangeGlue {
    /// Armed once the request is written whole; disarmed by the head, a resend or the end.
    mutating func fireFirstByteTimer() {
        if isOver { return precondition(afterEnd { $0.firstByteTimerFired() } == nil, "an ended exchange times out") }
        guard let deadline = firstByteDeadline, let link else { return }
        firstByteDeadline = nil
        now = max(now, deadline)
        let error = machine.firstByteTimerFired()
        // Only the absence of any response byte counts: a head begun is an answer.
        precondition((error != nil) == !link.answered, "the first-byte timeout judges a request with an answer, or spares one without")
        if let error {
            precondition(error.code == .firstByteTimeout, "a first-byte timeout of the wrong kind")
            ended(.failed(error.code))
        }
    }

    /// Armed from the start to the end, at the deadline the machine last gave.
    mutating func fireIdleTimer() {
        if isOver {
            let now = now
            return precondition(afterEnd { $0.idleTimerFired(now: now) } == .ignore, "an ended exchange idles")
        }
        guard let deadline = idleDeadline else { return }
        now = max(now, deadline)
        switch machine.idleTimerFired(now: now) {
        case .rearm(let next):
            precondition(next > now && next <= now.advanced(by: request.idleTimeout), "an idle deadline in the past or past the timeout")
            idleDeadline = next
        case .fail(let error):
            precondition(link != nil, "an idle timeout before the connection, the connect timeout's to judge")
            precondition(now >= lastUpstreamSign.advanced(by: request.idleTimeout), "an idle timeout while the upstream showed life")
            ended(.failed(error.code))
        case .ignore:
            preconditionFailure("an idle timer ignored while the exchange runs")
        }
    }
}
