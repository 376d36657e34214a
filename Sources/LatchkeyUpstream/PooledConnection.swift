import LatchkeyLoop

/// A raw upstream connection that outlives its exchanges: the connection libcurl handed
/// over, the key it is pooled under, and the one epoll handler its socket keeps for its
/// whole life, so that going into the pool and out again changes no registration (an
/// exchange and the idle watch both want it readable). Readiness goes to the exchange
/// using the connection, or, while it idles, to the pool.
///
/// Loop-bound: its stored properties are `@exclusivity(unchecked)`, as `EventLoop` says why.
final class PooledConnection: IOHandler {
    let connection: UpstreamConnection
    let key: ConnectionKey
    unowned let pool: ConnectionPool
    /// The exchange on the connection; nil while it idles in the pool. Held strongly: the
    /// exchange lets go when it releases the connection.
    @exclusivity(unchecked) var user: IOHandler?
    /// What was read from the connection and not yet decoded; no buffer while parked.
    @exclusivity(unchecked) var input: InputBuffer
    @exclusivity(unchecked) private var interest: IOEvents = []
    /// The last read took all the room it had, or came with the upstream's end: bytes or
    /// the end may wait in the socket that an edge-triggered watch will not report again
    /// (`ConnectionPool.park` looks).
    @exclusivity(unchecked) var mayHaveUnreadInput = false

    init(connection: UpstreamConnection, key: ConnectionKey, pool: ConnectionPool) {
        self.connection = connection
        self.key = key
        self.pool = pool
        input = InputBuffer(pool: pool.inputBuffers)
    }

    /// Watches the socket for `events`, with an epoll call only when they change. A plain
    /// socket is watched edge-triggered (as a client connection is, `IOEvents.edgeTriggered`):
    /// its exchange reads until the socket is drained or the response pauses, which drops
    /// read interest; asking for it again makes the kernel look again. curl may hold
    /// decrypted bytes of a TLS connection that epoll does not see: level-triggered.
    func watch(_ events: IOEvents) throws(SystemError) {
        let events = events.isEmpty || !connection.readsSocketItself ? events : events.union(.edgeTriggered)
        guard events != interest else { return }
        try connection.watch(events, handler: self)
        interest = events
    }

    func handleIO(_ events: IOEvents) {
        if let user {
            user.handleIO(events)
        } else {
            pool.parkedConnectionWoke(self)
        }
    }

    /// Closes the connection for good (it leaves the multi, which closes the socket).
    func close() {
        user = nil
        interest = []
        connection.close()
    }
}
