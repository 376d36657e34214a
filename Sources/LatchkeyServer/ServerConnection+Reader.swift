import LatchkeyLoop

/// The connection's `RequestReader`: taken from the server's pool when bytes are to be read,
/// given back once the connection is idle with nothing buffered (between requests, a relay
/// that delivered everything). Any call may give it back (a response finished inside the
/// handler's call ends the exchange), so code that read it before such a call reads it again.
///
/// A connection that closes keeps its reader until it goes: a caller further up the stack
/// may still be using it. The reader is freed with it, its buffer back to the loop's pool.
extension ServerConnection {
    /// The reader, taken from the pool when the connection holds none.
    var heldReader: RequestReader {
        if let reader { return reader }
        let taken = server.readers.take(limits: server.settings.http)
        reader = taken
        return taken
    }

    /// Bytes wait in the input: none without a reader.
    var hasBufferedInput: Bool { reader.map { !$0.input.isEmpty } ?? false }

    /// The input buffer is full (backpressure); never without a reader.
    var inputIsFull: Bool { reader?.input.isFull ?? false }

    /// The bytes read and not yet consumed.
    var bufferedInput: UnsafeRawBufferPointer { reader?.input.readable ?? UnsafeRawBufferPointer(start: nil, count: 0) }

    /// Gives the reader back if it is idle; otherwise the connection keeps it.
    func releaseReaderIfIdle() {
        guard let reader, reader.isIdle else { return }
        self.reader = nil
        server.readers.give(reader)
    }
}
