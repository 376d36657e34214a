/// The request-body bytes an exchange must still be able to send: those that arrived
/// while no upstream transfer was running, and, while the body fits the replay limit,
/// every byte so far, so that the request can be sent again after a token renewal.
struct RequestBodyRecord {
    private(set) var bytes: [UInt8] = []
    /// Every byte of the body so far is in `bytes`: the request can be replayed.
    private(set) var complete: Bool
    private(set) var ended = false
    private let limit: Int

    /// - Parameter replayLimit: nil when the request will never be replayed.
    init(replayLimit: Int?, declaredLength: UInt64?) {
        limit = replayLimit ?? 0
        // A body announced larger than the limit is never kept: it streams as it comes.
        complete = replayLimit != nil && (declaredLength ?? 0) <= UInt64(limit)
    }

    /// Records bytes. `sent` says whether a transfer took them already; bytes that were not
    /// sent are kept whatever the limit, until `taken`.
    mutating func append(_ chunk: UnsafeRawBufferPointer, sent: Bool) {
        if complete, bytes.count + chunk.count > limit {
            complete = false
            if sent { bytes = [] }
        }
        if complete || !sent { bytes.append(contentsOf: chunk) }
    }

    mutating func end() {
        ended = true
    }

    /// The bytes to hand a transfer that starts now; kept only while replay stays possible.
    mutating func forNewTransfer() -> [UInt8] {
        let pending = bytes
        if !complete { bytes = [] }
        return pending
    }
}
