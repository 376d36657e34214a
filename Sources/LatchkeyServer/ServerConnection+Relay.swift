import LatchkeyLoop

/// A relayed CONNECT tunnel: client bytes go through `input` to the upstream, upstream bytes
/// straight to the client's socket (through `output` only for what the socket cannot take
/// at once). Each side is read only while the other can take more, so a slow reader holds
/// back its writer and the memory per tunnel stays bounded (`input`, plus `output` up to the
/// high-water mark, plus one read buffer). The machine decides when a direction ends and
/// when the tunnel does.
extension ServerConnection {
    func startRelay(_ upstream: RawConnection) {
        machine.relayStarted()
        relay = RelayUpstream(upstream, connection: self)
        // Bytes the client sent right behind its CONNECT go first.
        pumpToUpstream()
        updateInterest()
        updateTimer()
    }

    /// The client socket's readiness while relaying.
    func relayClientReady(_ events: IOEvents) {
        if events.contains(.writable) { flush() }
        if relay != nil, !events.isDisjoint(with: [.readable, .hangup, .error]) {
            if machine.wantsInput(bufferFull: input.isFull) {
                readFromClient()
            } else if events.contains(.error) || events.contains(.hangup) && !interest.contains(.readable) {
                // Reported without read interest: the client socket is shut both ways. That
                // is the end of the relay, unless both of the client's directions were over
                // already and only client bytes still go to the upstream: then its socket
                // is left alone (epoll would report the hang-up on every turn).
                guard machine.relayIsDoneWithClient, !events.contains(.error) else {
                    return endRelay(.failed(detail: "the client connection failed"))
                }
                return stopWatchingClient()
            }
        }
        relayProgressed()
    }

    /// The upstream's readiness. It is watched only while the relay wants something of it
    /// (`updateUpstreamInterest`), so a hang-up reported while it is not being read means
    /// it is gone both ways with client bytes still to take.
    func upstreamReady(_ events: IOEvents) {
        guard let relay else { return }
        let reading = relay.interest.contains(.readable)
        if !reading, !events.isDisjoint(with: [.hangup, .error]) {
            return endRelay(.failed(detail: "the upstream connection failed"))
        }
        if events.contains(.writable) { pumpToUpstream() }
        if self.relay != nil, reading, !events.isDisjoint(with: [.readable, .hangup, .error]) { readFromUpstream() }
        relayProgressed()
    }

    private func relayProgressed() {
        guard relay != nil, !machine.isClosed else { return }
        updateInterest()
        updateTimer()
    }

    private func readFromClient() {
        while relay != nil, machine.wantsInput(bufferFull: input.isFull) {
            let space = input.writableSpace()
            let count: Int?
            do {
                count = try receive(into: space)
            } catch {
                return endRelay(.failed(detail: "reading the client: \(error)"))
            }
            guard let count else { return }
            if count == 0 {
                return performRelay(machine.relayPeerFinished(.client, undelivered: !input.isEmpty))
            }
            input.didWrite(count)
            exchange?.requestBodyBytes += UInt64(count)
            pumpToUpstream()
            if count < space.count { return }
        }
    }

    private func stopWatchingClient() {
        guard let registration else { return }
        loop.unregister(registration)
        self.registration = nil
        interest = []
    }

    /// Writes what the client sent to the upstream, as far as it takes it.
    func pumpToUpstream() {
        guard let relay else { return }
        while !input.isEmpty {
            let sent: Int?
            do {
                sent = try relay.upstream.send(input.readable)
            } catch {
                return endRelay(.failed(detail: "writing the upstream: \(error)"))
            }
            guard let sent, sent > 0 else { return }
            input.consume(sent)
        }
        input.releaseIfEmpty()
        performRelay(machine.relayDelivered(to: .upstream))
    }

    /// Reads the upstream while the client's output is below the high-water mark, sending
    /// straight to the client when nothing is queued.
    private func readFromUpstream() {
        while let relay, machine.wantsUpstreamInput(outputPending: pendingOutput, highWater: server.settings.outboundHighWater) {
            let buffer = relay.buffer
            let count: Int?
            do {
                count = try relay.upstream.receive(into: buffer)
            } catch {
                return endRelay(.failed(detail: "reading the upstream: \(error)"))
            }
            guard let count else { return }
            if count == 0 {
                return performRelay(machine.relayPeerFinished(.upstream, undelivered: pendingOutput > 0))
            }
            exchange?.responseBodyBytes += UInt64(count)
            deliverToClient(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            if machine.isClosed || count < buffer.count { return }
        }
    }

    private func deliverToClient(_ bytes: UnsafeRawBufferPointer) {
        var rest = bytes
        if pendingOutput == 0 {
            do {
                let written = try send(bytes)
                rest = UnsafeRawBufferPointer(rebasing: bytes[written...])
            } catch {
                return endRelay(.failed(detail: "writing the client: \(error)"))
            }
        }
        if !rest.isEmpty { output.append(contentsOf: rest) }
    }

    func performRelay(_ step: ConnectionMachine.RelayStep) {
        switch step {
        case .none:
            break
        case .finishSending(to: .upstream):
            relay?.upstream.finishSending()
        case .finishSending(to: .client):
            tls?.shutdown()
            socket.shutdownWrite()
        case .close:
            endRelay(.closed)
        }
    }

    /// Ends the tunnel: the upstream is released, the exchange's handler hears how it ended
    /// (its byte counts are final), and the client connection closes.
    func endRelay(_ end: TunnelEnd) {
        guard let relay else { return }
        self.relay = nil
        relay.upstream.close()
        let handler = self.handler
        self.handler = nil
        exchange?.finished = true
        handler?.tunnelEnded(end)
        close()
    }

    /// The upstream interest the relay needs now: readable while the client can take more,
    /// writable while client bytes wait; none (unregistered, so that a hang-up is not
    /// reported on every loop turn) once it has nothing to give or take.
    func updateUpstreamInterest() {
        guard let relay else { return }
        var wanted: IOEvents = []
        if machine.wantsUpstreamInput(outputPending: pendingOutput, highWater: server.settings.outboundHighWater) { wanted.insert(.readable) }
        if !input.isEmpty { wanted.insert(.writable) }
        guard wanted != relay.interest else { return }
        do {
            try relay.upstream.watch(wanted, handler: relay)
            relay.interest = wanted
        } catch {
            endRelay(.failed(detail: "watching the upstream: \(error)"))
        }
    }
}

/// The upstream end of a relayed tunnel, on its connection's loop: its readiness goes to
/// the connection, and its reads land in `buffer` (one per tunnel, freed with it).
final class RelayUpstream: IOHandler {
    let upstream: RawConnection
    let buffer: UnsafeMutableRawBufferPointer
    var interest: IOEvents = []
    /// The connection owns this object and ends the relay (releasing it) before it goes.
    unowned(unsafe) let connection: ServerConnection

    static let bufferSize = 16 * 1024

    init(_ upstream: RawConnection, connection: ServerConnection) {
        self.upstream = upstream
        self.connection = connection
        buffer = .allocate(byteCount: Self.bufferSize, alignment: 16)
    }

    deinit {
        buffer.deallocate()
    }

    func handleIO(_ events: IOEvents) {
        connection.upstreamReady(events)
    }
}
