import LatchkeyHTTP
import LatchkeyLoop

/// The response side of a connection: framing, the 100-continue interim response, and
/// writing with backpressure. Heads and bodies queued in one loop turn leave in one send.
extension ServerConnection {
    func sendHead(_ exchange: ServerExchange, status: Int, fields: HTTPFields) {
        guard exchange === self.exchange, case .notStarted = framing else { return }
        var fields = fields
        let head = exchange.head
        if continuePending {
            // The client is waiting to be told to send its body and never was: it cannot
            // reuse this connection.
            continuePending = false
            keepAlive = false
        }
        if !responseCarriesBody(requestMethod: head.method, status: status) {
            if responseForbidsContentLength(requestMethod: head.method, status: status) {
                fields.removeAll(named: "Content-Length")
            }
            framing = .bodiless
        } else if let length = try? fields.contentLength() {
            // Callers hand over one valid length (the proxy checks the upstream's); one
            // canonical line is what the client gets.
            fields.set(name: "Content-Length", value: String(length))
            framing = .length(remaining: length)
        } else if head.version == .http1_1 {
            fields.removeAll(named: "Content-Length")
            fields.append(name: "Transfer-Encoding", value: "chunked")
            framing = .chunked
        } else {
            framing = .closeDelimited
            keepAlive = false
        }
        if requestPhase != .complete {
            // Answered while the request body is still arriving (an early error, an
            // upstream that does not wait): closing is the only safe way to resynchronise.
            keepAlive = false
        }
        if !keepAlive {
            fields.set(name: "Connection", value: "close")
        } else if head.version == .http1_0 {
            fields.set(name: "Connection", value: "keep-alive")
        }
        exchange.status = status
        ResponseHeadEncoder.encode(status: status, fields: fields, into: &output)
        scheduleFlush()
    }

    func sendBody(_ exchange: ServerExchange, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard exchange === self.exchange, !bytes.isEmpty else { return !overHighWater }
        switch framing {
        case .notStarted, .bodiless:
            return true
        case .length(let remaining):
            let count = Int(min(UInt64(bytes.count), remaining))
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
            framing = .length(remaining: remaining - UInt64(count))
            exchange.responseBodyBytes += UInt64(count)
        case .chunked:
            ChunkedEncoder.appendChunkHeader(size: bytes.count, into: &output)
            output.append(contentsOf: bytes)
            output.append(contentsOf: ChunkedEncoder.chunkTerminator)
            exchange.responseBodyBytes += UInt64(bytes.count)
        case .closeDelimited:
            output.append(contentsOf: bytes)
            exchange.responseBodyBytes += UInt64(bytes.count)
        }
        scheduleFlush()
        if pendingOutput >= server.settings.outboundHighWater { overHighWater = true }
        return !overHighWater
    }

    func finish(_ exchange: ServerExchange) {
        guard exchange === self.exchange, !exchange.finished else { return }
        switch framing {
        case .length(let remaining) where remaining > 0:
            // Fewer bytes than promised: the client must see a cut, not a short success.
            return abort(exchange)
        case .chunked:
            output.append(contentsOf: ChunkedEncoder.lastChunk)
        case .notStarted, .bodiless, .length, .closeDelimited:
            break
        }
        exchange.finished = true
        if case .closeDelimited = framing { keepAlive = false }
        if requestPhase != .complete { keepAlive = false }
        endExchange()
        scheduleFlush()
    }

    func abort(_ exchange: ServerExchange) {
        guard exchange === self.exchange, !exchange.finished else { return }
        exchange.aborted = true
        exchange.finished = true
        keepAlive = false
        endExchange()
        scheduleFlush()
    }

    func endExchange() {
        handler = nil
        exchange?.connection = nil
        exchange = nil
        framing = .notStarted
        bodyPaused = false
        continuePending = false
        overHighWater = false
        input.releaseIfEmpty()
        // Bytes of the next request that arrived during this one start its head clock now.
        headStartedAt = input.isEmpty ? nil : loop.now
        if keepAlive && !server.isShuttingDown {
            requestPhase = .awaitingHead
            scheduleProcessing()
        } else {
            closeAfterFlush = true
        }
    }

    func setRequestBodyPaused(_ exchange: ServerExchange, _ paused: Bool) {
        guard exchange === self.exchange, requestPhase == .body else { return }
        if !paused && continuePending {
            continuePending = false
            output.append(contentsOf: Self.continueResponse)
            scheduleFlush()
        }
        guard bodyPaused != paused else { return }
        bodyPaused = paused
        if !paused { scheduleProcessing() }
        updateInterest()
    }

    static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    // MARK: writing

    /// Flushes once per loop iteration, so that a head and the first body bytes (or a
    /// whole small response) leave in one send.
    func scheduleFlush() {
        guard !flushScheduled, !closed else { return }
        if !processScheduled { loop.runAfterEvents(self) }
        flushScheduled = true
    }

    func scheduleProcessing() {
        guard !processScheduled, !closed else { return }
        if !flushScheduled { loop.runAfterEvents(self) }
        processScheduled = true
    }

    /// Runs what `scheduleProcessing` and `scheduleFlush` asked for, once per loop turn:
    /// pipelined requests first, then one send for everything queued.
    func runDeferredWork() {
        let process = processScheduled
        let flushNow = flushScheduled
        processScheduled = false
        flushScheduled = false
        if process && !closed { processInput() }
        if flushNow && !closed { flush() }
        if !closed { updateInterest() }
    }

    func flush() {
        guard !closed else { return }
        while outputOffset < output.count {
            let written: Int
            do {
                written = try output.withUnsafeBytes { all throws(SystemError) in
                    try socket.send(UnsafeRawBufferPointer(rebasing: all[outputOffset...]))
                }
            } catch {
                return close()
            }
            if written == 0 { break }
            outputOffset += written
        }
        if outputOffset == output.count {
            outputOffset = 0
            // A small buffer is kept for the next response; a large one (left by a big or
            // slow download) is not kept by a connection that may now sit idle for long.
            output.removeAll(keepingCapacity: output.capacity <= (exchange != nil ? 1 << 20 : 2048))
            if closeAfterFlush { return lingerThenClose() }
        } else if outputOffset > 64 * 1024 && outputOffset * 2 > output.count {
            output.removeFirst(outputOffset)
            outputOffset = 0
        }
        if overHighWater && pendingOutput <= server.settings.outboundHighWater / 4 {
            overHighWater = false
            handler?.responseDrained()
        }
        updateTimer()
    }
}
