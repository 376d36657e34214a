import LatchkeyHTTP
import LatchkeyLoop

/// A relayed CONNECT tunnel: client bytes go through the reader's input to the upstream,
/// upstream bytes straight to the client's socket (through `output` only for what the
/// socket cannot take at once). Each side is read only while the other can take more, so a
/// slow reader holds back its writer and the memory per tunnel stays bounded (the
/// `RequestReader`, taken from the loop's pool only while bytes wait in it, plus `output` up
/// to the high-water mark). The machine decides when a direction ends and when the tunnel
/// does.
extension ServerConnection {
    /// `early`: bytes the upstream sent behind its `101`, already queued for the client.
    func startRelay(_ upstream: RawConnection, webSocket: Bool, early: [UInt8] = []) {
        machine.relayStarted()
        let relay = RelayUpstream(upstream, webSocket: webSocket, connection: self)
        self.relay = relay
        early.withUnsafeBytes { relay.toClientFrames?.consume($0) }
        // Bytes the client sent right behind its request go first.
        relay.toUpstreamFrames?.consume(bufferedInput)
        exchange?.record.requestBodyBytes += UInt64(bufferedInput.count)
        pumpToUpstream()
        // A stream that starts during a shutdown is closed as the others were.
        if server.isShuttingDown, self.relay != nil { beginShutdown() }
        guard self.relay != nil else { return }
        updateInterest()
        updateTimer()
    }

    /// The client socket's readiness while relaying.
    func relayClientReady(_ events: IOEvents) {
        if events.contains(.writable) { flush() }
        if relay != nil, !events.isDisjoint(with: [.readable, .hangup, .error]) {
            if machine.wantsInput(bufferFull: inputIsFull) {
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

    func relayProgressed() {
        guard relay != nil, !machine.isClosed else { return }
        updateInterest()
        updateTimer()
    }

    private func readFromClient() {
        while relay != nil, machine.wantsInput(bufferFull: inputIsFull) {
            // Given back by `pumpToUpstream` once all went on: taken again for each read.
            let reader = heldReader
            let space = reader.input.writableSpace()
            let count: Int?
            do {
                count = try receive(into: space)
            } catch {
                return endRelay(.failed(detail: "reading the client: \(error)"))
            }
            guard let count else { return }
            if count == 0 {
                return performRelay(machine.relayPeerFinished(.client, undelivered: hasBytesForUpstream))
            }
            reader.input.didWrite(count)
            exchange?.record.requestBodyBytes += UInt64(count)
            if let relay, relay.toUpstreamFrames != nil {
                relay.toUpstreamFrames?.consume(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(space)[0..<count]))
                closeAtFrameBoundary(towards: .upstream)
            }
            pumpToUpstream()
            // OpenSSL may hold decrypted bytes that epoll cannot report: a TLS client is
            // read until it has nothing more.
            if count < space.count && tls == nil { return }
        }
    }

    private func stopWatchingClient() {
        guard let registration else { return }
        loop.unregister(registration)
        self.registration = nil
        interest = []
    }

    /// Writes what the client sent to the upstream, then a close frame the relay owes it,
    /// as far as the upstream takes them.
    func pumpToUpstream() {
        guard let relay else { return }
        if let reader {
            while !reader.input.isEmpty {
                guard let sent = send(reader.input.readable, to: relay), sent > 0 else { return }
                reader.input.consume(sent)
            }
            releaseReaderIfIdle()
        }
        while !relay.owedToUpstream.isEmpty {
            guard let sent = relay.owedToUpstream.withUnsafeBytes({ send($0, to: relay) }), sent > 0 else { return }
            relay.owedToUpstream.removeFirst(sent)
        }
        performRelay(machine.relayDelivered(to: .upstream))
    }

    /// RawConnection.send; nil when nothing was taken or the relay ended.
    private func send(_ bytes: UnsafeRawBufferPointer, to relay: RelayUpstream) -> Int? {
        do {
            return try relay.upstream.send(bytes)
        } catch {
            endRelay(.failed(detail: "writing the upstream: \(error)"))
            return nil
        }
    }

    /// Whether client bytes (or a close frame) still wait for the upstream.
    var hasBytesForUpstream: Bool { hasBufferedInput || relay?.owedToUpstream.isEmpty == false }

    /// Reads the upstream while the client's output is below the high-water mark, sending
    /// straight to the client when nothing is queued.
    private func readFromUpstream() {
        while let relay, machine.wantsUpstreamInput(outputPending: pendingOutput, highWater: server.settings.outboundHighWater) {
            let buffer = server.relayReadBuffer
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
            exchange?.record.responseBodyBytes += UInt64(count)
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            relay.toClientFrames?.consume(bytes)
            deliverToClient(bytes)
            if relay.toClientFrames != nil { closeAtFrameBoundary(towards: .client) }
            if machine.isClosed || count < buffer.count && !relay.upstream.mayHoldReadBytes { return }
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
        case .sendClose(to: .client):
            output.append(contentsOf: WebSocketFrameBoundary.closeFrame(code: WebSocketFrameBoundary.goingAway))
            scheduleFlush()
        case .sendClose(to: .upstream):
            // RFC 6455 §5.3: a client's frames are masked, with a key it chose.
            relay?.owedToUpstream += WebSocketFrameBoundary.closeFrame(
                code: WebSocketFrameBoundary.goingAway, mask: (.random(in: 0...255), .random(in: 0...255), .random(in: 0...255), .random(in: 0...255)))
            pumpToUpstream()
        case .finishSending(to: .upstream):
            guard let relay else { return }
            guard relay.upstream.canHalfClose else {
                // The upstream cannot be told that the client is done while it goes on
                // sending (TLS through libcurl): its direction ends too, once what it sent
                // has reached the client, and the tunnel closes.
                return performRelay(machine.relayPeerFinished(.upstream, undelivered: pendingOutput > 0))
            }
            relay.upstream.finishSending()
        case .finishSending(to: .client):
            tls?.shutdown()
            socket.shutdownWrite()
        case .close:
            // Both sides done: on their own, or after the close frames of a shutdown.
            endRelay(server.isShuttingDown ? .shutdown : .closed)
        }
    }

    /// Graceful shutdown of a WebSocket: each direction gets its close frame at its next
    /// frame boundary (now, for a direction between frames), and is read no more after it.
    func closeWebSocketAtFrameBoundaries() {
        closeAtFrameBoundary(towards: .client)
        closeAtFrameBoundary(towards: .upstream)
        if relay != nil { relayProgressed() }
    }

    /// The close frame owed towards `side`, if the bytes queued for it end a frame; none if
    /// its peer already sent one that way.
    private func closeAtFrameBoundary(towards side: ConnectionMachine.RelaySide) {
        guard let relay, machine.owesCloseFrame(towards: side) else { return }
        let frames = side == .client ? relay.toClientFrames : relay.toUpstreamFrames
        if frames?.sawClose == true { return machine.relayCloseAlreadySent(towards: side) }
        guard frames?.isAtBoundary ?? true else { return }
        performRelay(machine.relayFrameBoundary(towards: side))
    }

    /// Ends the tunnel: the upstream is released, the exchange's handler hears how it ended
    /// (its byte counts are final), and the client connection closes.
    func endRelay(_ end: TunnelEnd) {
        guard let relay else { return }
        self.relay = nil
        relay.upstream.close()
        let handler = self.handler
        self.handler = nil
        exchange?.record.finished = true
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
        if hasBytesForUpstream { wanted.insert(.writable) }
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
/// the connection (its reads land in the loop's `relayReadBuffer`).
final class RelayUpstream: IOHandler {
    let upstream: RawConnection
    var interest: IOEvents = []
    /// A close frame the relay wrote for the upstream, sent after the client's bytes.
    var owedToUpstream: [UInt8] = []
    /// A WebSocket's frame boundaries each way, for the close frames of a shutdown; nil for
    /// any other protocol, whose bytes are not looked at.
    var toClientFrames: WebSocketFrameBoundary?
    var toUpstreamFrames: WebSocketFrameBoundary?
    /// The connection owns this object and ends the relay (releasing it) before it goes.
    unowned(unsafe) let connection: ServerConnection

    init(_ upstream: RawConnection, webSocket: Bool, connection: ServerConnection) {
        self.upstream = upstream
        self.connection = connection
        if webSocket {
            toClientFrames = WebSocketFrameBoundary()
            toUpstreamFrames = WebSocketFrameBoundary()
        }
    }

    func handleIO(_ events: IOEvents) {
        connection.upstreamReady(events)
    }
}
