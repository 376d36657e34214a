import LatchkeyLoop

/// The raw upstream connections of one loop kept alive between HTTP/1.1 exchanges
/// (`HTTP1ExchangeMachine`), by `ConnectionKey`. `IdleConnections` decides which one an
/// exchange takes and which ones are closed; this glue watches the parked ones and arms
/// the idle timer.
///
/// A parked connection stays watched for readability: an upstream that closes it (or sends
/// what nobody asked for) wakes it, and it is dropped before an exchange can take it. A
/// close the loop has not seen yet is the exchange's to meet, which sends its request
/// again (`HTTP1ExchangeMachine`'s resend).
///
/// Loop-bound: its stored properties are `@exclusivity(unchecked)`, as `EventLoop` says why.
public final class ConnectionPool {
    let loop: EventLoop
    @exclusivity(unchecked) private var idle: IdleConnections<PooledConnection, ConnectionKey>
    @exclusivity(unchecked) private var timer: LoopTimer!

    /// - Parameters:
    ///   - limitPerKey: idle connections kept per key; the oldest is closed beyond it.
    ///   - idleTimeout: an idle connection is closed after this long. Shorter than most
    ///     servers' own (nginx 75 s, Apache 5 s is the exception the resend covers).
    init(loop: EventLoop, limitPerKey: Int = 32, idleTimeout: Duration = .seconds(30)) {
        self.loop = loop
        idle = IdleConnections(limitPerKey: limitPerKey, idleTimeout: idleTimeout)
        timer = LoopTimer { [unowned self] in self.expire() }
    }

    /// The timer holds the pool unowned: it must not fire after the pool is gone. (Parked
    /// connections go with the client's multi, which closes them.)
    deinit {
        loop.disarm(timer)
    }

    /// Idle connections kept now.
    public var idleCount: Int { idle.count }

    /// The most recently parked connection for `key`, for an exchange to use.
    func take(_ key: ConnectionKey) -> PooledConnection? {
        idle.take(key)
    }

    /// The exchange on `pooled` ended and left it fit for another: it idles here.
    func park(_ pooled: PooledConnection) {
        pooled.user = nil
        do {
            try pooled.watch(.readable)
        } catch {
            return pooled.close()
        }
        idle.park(pooled, key: pooled.key, now: loop.now)?.close()
        if !timer.isArmed, let deadline = idle.nextExpiry { loop.arm(timer, at: deadline) }
    }

    /// A parked connection became readable: the upstream closed it or reset it, or sent
    /// bytes no request asked for; either way it is done. Over TLS the bytes may be a record
    /// for the session alone (a TLS 1.3 session ticket), which a read consumes and reports
    /// as nothing: such a connection stays.
    func parkedConnectionWoke(_ pooled: PooledConnection) {
        var probe: UInt8 = 0
        let read: Int?
        do {
            read = try withUnsafeMutableBytes(of: &probe) { buffer throws(SystemError) in try pooled.connection.receive(into: buffer) }
        } catch {
            read = 0
        }
        guard read != nil else { return }
        if idle.remove(pooled, key: pooled.key) { pooled.close() }
    }

    private func expire() {
        for connection in idle.expire(now: loop.now) { connection.close() }
        if let deadline = idle.nextExpiry { loop.arm(timer, at: deadline) }
    }
}
