import CoreMetrics
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
    /// Read buffers of the connections' exchanges, for the responses: a parked connection
    /// gives its buffer back.
    let inputBuffers = BufferPool(bufferSize: 16 * 1024, maxKept: 256)
    @exclusivity(unchecked) private var idle: IdleConnections<PooledConnection, ConnectionKey>
    @exclusivity(unchecked) private var timer: LoopTimer!
    /// `latchkey_upstream_idle_connections`, shared by the loops' pools; moved by each
    /// change of `idleCount`.
    @exclusivity(unchecked) public var idleGauge: Meter? {
        didSet {
            oldValue?.decrement(by: Double(idle.count))
            idleGauge?.increment(by: Double(idle.count))
        }
    }

    init(loop: EventLoop, limits: PoolLimits = PoolLimits()) {
        self.loop = loop
        idle = IdleConnections(limits: limits)
        timer = ClosureTimer { [unowned self] in self.expire() }
    }

    /// The timer holds the pool unowned: it must not fire after the pool is gone. (Parked
    /// connections go with the client's multi, which closes them.)
    deinit {
        loop.disarm(timer)
        idleGauge?.decrement(by: Double(idle.count))
    }

    /// Idle connections kept now.
    public var idleCount: Int { idle.count }

    /// The most recently parked connection for `key`, for an exchange to use.
    func take(_ key: ConnectionKey) -> PooledConnection? {
        guard let pooled = idle.take(key) else { return nil }
        idleGauge?.decrement()
        return pooled
    }

    /// The limits in force: new ones (a reload) close the connections over them at once.
    public var limits: PoolLimits {
        get { idle.limits }
        set {
            guard newValue != idle.limits else { return }
            close(idle.apply(newValue))
            rearm()
        }
    }

    /// The exchange on `pooled` ended and left it fit for another: it idles here.
    func park(_ pooled: PooledConnection) {
        pooled.user = nil
        pooled.input.releaseIfEmpty()
        do {
            try pooled.watch(.readable)
        } catch {
            return pooled.close()
        }
        if let closed = idle.park(pooled, key: pooled.key, now: loop.now) {
            closed.close()
            if closed === pooled { return }
        } else {
            idleGauge?.increment()
        }
        if !timer.isArmed, let deadline = idle.nextExpiry { loop.arm(timer, at: deadline) }
        // The response ended where the last read filled the buffer, or its last bytes came
        // with the upstream's end: what else the upstream sent, or the end, is still in the
        // socket, where an edge-triggered watch will not report it again.
        if pooled.mayHaveUnreadInput {
            pooled.mayHaveUnreadInput = false
            parkedConnectionWoke(pooled)
        }
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
        guard idle.remove(pooled, key: pooled.key) else { return }
        pooled.close()
        idleGauge?.decrement()
    }

    private func expire() {
        close(idle.expire(now: loop.now))
        rearm()
    }

    /// Closes connections no longer parked.
    private func close(_ connections: [PooledConnection]) {
        guard !connections.isEmpty else { return }
        for connection in connections { connection.close() }
        idleGauge?.decrement(by: Double(connections.count))
    }

    private func rearm() {
        loop.disarm(timer)
        if let deadline = idle.nextExpiry { loop.arm(timer, at: deadline) }
    }
}
