import LatchkeyHTTP
import LatchkeyLoop

/// The response side of a connection: framing, the 100-continue interim response, and
/// writing with backpressure. Heads and bodies queued in one loop turn leave in one send.
extension ServerConnection {
    func sendHead(_ exchange: ServerExchange, status: Int, fields: consuming HTTPFields, declared: DeclaredFraming) {
        guard exchange === self.exchange else { return }
        // The two pieces of the request head needed, not a copy of all of it.
        let method = exchange.head.method
        guard let plan = machine.responseHeadStarting(
            carriesBody: responseCarriesBody(requestMethod: method, status: status),
            contentLength: declared.contentLength, version: exchange.head.version) else { return }
        switch plan.framing {
        case .length(let length):
            // One canonical line is what the client gets: the upstream's usual one as it is.
            if !declared.isCanonicalLine(for: length) { fields.setContentLength(length) }
        case .chunked:
            fields.removeAll(named: .contentLength)
            fields.set(name: .transferEncoding, value: "chunked")
        case .bodiless:
            // RFC 9110 §8.6: a 1xx, a 204 and a 2xx to CONNECT carry no Content-Length,
            // whatever the upstream sent; a 304 may keep its length.
            if responseForbidsContentLength(requestMethod: method, status: status) {
                fields.removeAll(named: .contentLength)
            }
        case .closeDelimited:
            break
        }
        switch plan.connection {
        case .close: fields.set(name: .connection, value: "close")
        case .keepAlive: fields.set(name: .connection, value: "keep-alive")
        case nil: break
        }
        exchange.record.status = status
        if output.capacity == 0 { output = server.outputBuffers.take() }
        ResponseHeadEncoder.encode(status: status, fields: fields, into: &output)
        scheduleFlush()
    }

    func sendBody(_ exchange: ServerExchange, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard exchange === self.exchange, !bytes.isEmpty else { return machine.acceptsResponseBody }
        switch machine.responseBody(count: bytes.count) {
        case .discard:
            return true
        case .raw(let count):
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
            exchange.record.responseBodyBytes += UInt64(count)
        case .chunk:
            ChunkedEncoder.appendChunkHeader(size: bytes.count, into: &output)
            output.append(contentsOf: bytes)
            output.append(contentsOf: ChunkedEncoder.chunkTerminator)
            exchange.record.responseBodyBytes += UInt64(bytes.count)
        }
        scheduleFlush()
        return machine.outputQueued(pending: pendingOutput, highWater: server.settings.outboundHighWater)
    }

    func finish(_ exchange: ServerExchange) {
        guard exchange === self.exchange, !exchange.finished else { return }
        let action = machine.responseFinished(at: loop.now, inputBuffered: hasBufferedInput, mayKeepAlive: !server.isShuttingDown)
        switch action {
        case .cutShort:
            return abort(exchange)
        case .ended(let lastChunk):
            if lastChunk { output.append(contentsOf: ChunkedEncoder.lastChunk) }
        }
        exchange.record.finished = true
        endExchange()
        scheduleFlush()
    }

    func abort(_ exchange: ServerExchange) {
        guard exchange === self.exchange, !exchange.finished else { return }
        exchange.record.aborted = true
        exchange.record.finished = true
        tls?.abandon()
        machine.responseAborted()
        endExchange()
        scheduleFlush()
    }

    /// Lets go of the finished exchange; a kept-alive connection decodes what is buffered
    /// of the next request.
    func endExchange() {
        handler = nil
        exchange?.connection = nil
        exchange = nil
        releaseReaderIfIdle()
        if machine.isAwaitingHead { scheduleProcessing() }
    }

    func setRequestBodyPaused(_ exchange: ServerExchange, _ paused: Bool) {
        guard exchange === self.exchange else { return }
        switch machine.setBodyPaused(paused, at: loop.now) {
        case .unchanged:
            return
        case .paused:
            break
        case .resumed(let sendContinue):
            if sendContinue {
                output.append(contentsOf: Self.continueResponse)
                scheduleFlush()
            }
            scheduleProcessing()
        }
        updateInterest()
        updateTimer()
    }

    static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    // MARK: writing

    /// Flushes once per loop iteration, so that a head and the first body bytes (or a
    /// whole small response) leave in one send.
    func scheduleFlush() {
        schedule(.flush)
    }

    func scheduleProcessing() {
        schedule(.process)
    }

    private func schedule(_ work: ScheduledWork) {
        guard !scheduled.contains(work), !machine.isClosed else { return }
        if scheduled.isEmpty { loop.runAfterEvents(self) }
        scheduled.insert(work)
    }

    /// Runs what `scheduleProcessing` and `scheduleFlush` asked for, once per loop turn:
    /// pipelined requests first, then one send for everything queued.
    func runDeferredWork() {
        let work = scheduled
        scheduled = []
        if work.contains(.process) && !machine.isClosed {
            processInput()
            // Reading resumes after backpressure: what the TLS session decrypted before the
            // pause is not reported by epoll.
            if hasUnreadTLSInput { readInput() }
        }
        if work.contains(.flush) && !machine.isClosed { flush() }
        if !machine.isClosed { updateInterest() }
    }

    func flush() {
        guard !machine.isClosed else { return }
        while outputOffset < output.count {
            let written: Int
            do {
                written = try output.withUnsafeBytes { all throws(SystemError) in
                    try send(UnsafeRawBufferPointer(rebasing: all[outputOffset...]))
                }
            } catch {
                return close()
            }
            if written == 0 { break }
            outputOffset += written
        }
        if outputOffset == output.count {
            outputOffset = 0
            if exchange != nil && !machine.isRelaying {
                output.removeAll(keepingCapacity: output.capacity <= 1 << 20)
            } else {
                // Between requests, where a connection may sit idle for long, and in a relay,
                // which writes to the socket directly and queues only what it cannot take,
                // the connection holds no buffer: a small one goes back to the loop's pool.
                server.outputBuffers.give(&output)
            }
        } else if outputOffset > 64 * 1024 && outputOffset * 2 > output.count {
            output.removeFirst(outputOffset)
            outputOffset = 0
        }
        switch machine.outputFlushed(pending: pendingOutput, highWater: server.settings.outboundHighWater) {
        case .linger: return lingerThenClose()
        case .drained: handler?.responseDrained()
        case .startTunnel: return startTunnel()
        case .relay(let step): performRelay(step)
        case .none: break
        }
        guard !machine.isClosed else { return }
        updateTimer()
    }
}
