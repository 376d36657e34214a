import LatchkeyHTTP
import LatchkeyLoop

/// What the machine's events return: each names the glue's next move.
extension HTTP1ExchangeMachine {
    /// The write side's next move (`nextWrite`).
    enum WriteStep: Equatable {
        /// Write with `sendUnwritten`, ask again.
        case write
        /// Nothing to write until the client sends more body; stop watching for
        /// writability. `askClient`: resume reading the client (once per stall).
        case waitForBody(askClient: Bool)
        /// The request is written whole, now: arm the first-byte timer.
        case requestWritten
        /// Nothing to write, nothing to start.
        case none
    }

    /// What the client's end of body leads to.
    enum BodyEndStep: Equatable {
        /// Write: the end's bytes wait and the connection is there.
        case write
        case none
        /// The exchange fails with this error.
        case fail(UpstreamError)
    }

    /// What `received` found.
    enum ReceiveEvent: Sendable, Equatable {
        /// Read more from the connection.
        case needMore
        /// The delegate asked for no more: decode nothing until `resumeReceiving`.
        case paused
        /// Deliver the final head to the delegate, with what it says of its framing.
        case head(status: Int, fields: HTTPFields, declared: DeclaredFraming)
        /// Deliver `input[range]`, then report the delegate's answer with `delivered(more:)`.
        case body(Range<Int>)
        /// The response is complete: finish. `reusable`: the connection goes back to the
        /// pool, else it is closed.
        case complete(reusable: Bool)
        /// The exchange fails with this error; close the connection.
        case fail(UpstreamError)
    }

    /// What a lost connection (a failure, or the peer's close) leads to.
    enum LossStep: Equatable {
        /// The exchange is over or not on a connection: nothing.
        case ignore
        /// Stop writing and watching for writability; go on reading the response.
        case readOn
        /// Close the connection and send the request again on a new one (never from the
        /// pool), then report it with `connected(reused: false)`.
        case resend
        /// A close-delimited response ended with the close: finish, and close.
        case complete
        /// The exchange fails with this error; close the connection.
        case fail(UpstreamError)
    }

    /// What the idle timer's firing leads to.
    enum IdleStep: Equatable {
        /// Nothing: the exchange is over.
        case ignore
        /// Arm the timer again for this deadline.
        case rearm(at: LoopInstant)
        /// The upstream was idle too long: fail with this error.
        case fail(UpstreamError)
    }
}
