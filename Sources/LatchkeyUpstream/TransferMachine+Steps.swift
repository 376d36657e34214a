import LatchkeyHTTP
import LatchkeyLoop

/// What the machine's events return: each names the glue's next move, and for curl's
/// callbacks the value to hand back to curl.
extension TransferMachine {
    /// What curl's read callback (CURLOPT_READFUNCTION) returns.
    enum ReadStep: Equatable {
        /// `count` bytes were copied into curl's buffer. `startFirstByteTimer`: they were
        /// the last of a sized body, so the request is sent now.
        case copied(Int, startFirstByteTimer: Bool)
        /// The body ended (return 0). `startFirstByteTimer`: the request is sent now and
        /// no response byte has come yet.
        case end(startFirstByteTimer: Bool)
        /// Nothing queued yet (CURL_READFUNC_PAUSE): ask the delegate for more.
        case pause
        /// The transfer is failing or over (CURL_READFUNC_ABORT).
        case abort
    }

    /// What to do with one header line from curl's header callback (CURLOPT_HEADERFUNCTION).
    enum HeaderStep: Equatable {
        /// Take the line (return its length).
        case take
        /// The first byte of the response: stop the first-byte timer, take the line.
        case takeFirst
        /// The final head: hand it to the delegate, then take the line unless the transfer
        /// stopped running meanwhile.
        case deliver(status: Int, fields: HTTPFields)
        /// Refuse the line (return 0: curl aborts).
        case refuse
    }

    /// What to do with response-body bytes from curl's write callback (CURLOPT_WRITEFUNCTION).
    enum BodyStep: Equatable {
        /// Hand them to the delegate, then report its answer with `delivered(more:)`.
        case deliver
        /// Paused by us from inside an earlier call of the same curl write loop: return
        /// CURL_WRITEFUNC_PAUSE, curl keeps the bytes and delivers them after the resume.
        case hold
        /// Refuse them (return 0: curl aborts).
        case refuse
    }

    /// What follows the delegate's answer to body bytes.
    enum AfterBody: Equatable {
        /// Take them (return their count).
        case take
        /// Take them and pause curl's receive side now (curl_easy_pause is allowed inside
        /// callbacks); `send` keeps the read side's pause as it is, the mask sets both.
        case takeAndPause(send: Bool)
        /// The delegate cancelled meanwhile: refuse them.
        case refuse
    }

    /// What the idle timer's firing leads to.
    enum IdleStep: Equatable {
        /// Nothing: the transfer is failing or over.
        case ignore
        /// Arm the timer again for this deadline.
        case rearm(at: LoopInstant)
        /// The upstream was idle too long: fail with this error.
        case fail(UpstreamError)
    }
}
