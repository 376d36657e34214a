import LatchkeyHTTP

/// Assembles the response head from the lines curl's header callback hands over, one
/// complete line per call (status line, field lines, then the empty line), each parsed by
/// `HTTPResponseLine`. Interim 1xx heads are dropped; lines after the final head (chunked
/// trailers) are ignored. Pure: no curl.
struct ResponseHeadParser {
    enum Outcome: Equatable {
        /// The line was taken; the head is not complete yet.
        case needMore
        /// A 1xx interim head ended; the final head follows.
        case interim(status: Int)
        /// The final head.
        case head(status: Int, fields: HTTPFields)
        /// After the final head: trailer lines, ignored.
        case ignored
        /// A malformed line (or obs-fold): the transfer fails, the caller answers 502.
        case invalid
    }

    private var status = 0
    private var fields = HTTPFields()
    private var done = false

    mutating func consume(_ line: UnsafeRawBufferPointer) -> Outcome {
        if done { return .ignored }
        switch HTTPResponseLine.parse(line) {
        case .status(_, let code):
            // A status line starts a head; anything collected before it is dropped.
            status = code
            fields = HTTPFields()
            // Room for a typical head, so that appending does not regrow it line by line.
            fields.reserveCapacity(16)
            return .needMore
        case .field(let field):
            guard status != 0 else { return .invalid }
            fields.append(field)
            return .needMore
        case .end:
            guard status != 0 else { return .invalid }
            // RFC 9110 §15.2: 1xx responses are interim; the final response follows.
            if status < 200 {
                let interim = status
                status = 0
                fields = HTTPFields()
                return .interim(status: interim)
            }
            done = true
            let head = fields
            fields = HTTPFields()
            return .head(status: status, fields: head)
        case nil:
            return .invalid
        }
    }
}
