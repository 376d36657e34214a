import LatchkeyHTTP
import LatchkeyLoop
import LatchkeyTLS

/// One request and the means to answer it. The proxy holds it while it works; every
/// call goes to the connection, which owns the framing and the socket.
///
/// Loop-bound: its stored properties are `@exclusivity(unchecked)`, as `EventLoop` says why.
public final class ServerExchange {
    public let head: RequestHead
    public let listener: ListenerInfo
    public let peer: SocketAddress?
    public let receivedAt: LoopInstant
    /// What the connection records as the exchange goes, read through the properties
    /// below: another module reading a public stored property checks exclusivity at run
    /// time whatever its attribute says (about 60 instructions per read).
    struct Record {
        var tls: TLSConnectionInfo?
        var tunnelAuthority: TargetAuthority?
        var requestBodyBytes: UInt64 = 0
        var responseBodyBytes: UInt64 = 0
        var status: Int?
        var aborted = false
        var finished = false
    }

    @exclusivity(unchecked) var record = Record()
    /// What the connection's TLS handshake agreed; nil on a plain-HTTP listener.
    public var tls: TLSConnectionInfo? { record.tls }
    /// Inside an intercepted CONNECT tunnel: the host and port the client connected to.
    public var tunnelAuthority: TargetAuthority? { record.tunnelAuthority }
    public var requestBodyBytes: UInt64 { record.requestBodyBytes }
    public var responseBodyBytes: UInt64 { record.responseBodyBytes }
    public var status: Int? { record.status }
    /// Set when the response was cut short (upstream failure or client gone).
    public var aborted: Bool { record.aborted }
    public var finished: Bool { record.finished }
    /// Strong, and cleared by the connection when the exchange ends: a weak reference
    /// would move the connection's reference counts to a side table and slow every
    /// retain of it on the hot path.
    @exclusivity(unchecked) var connection: ServerConnection?

    init(head: consuming RequestHead, listener: ListenerInfo, peer: SocketAddress?, receivedAt: LoopInstant, connection: ServerConnection) {
        self.head = head
        self.listener = listener
        self.peer = peer
        self.receivedAt = receivedAt
        self.connection = connection
    }

    /// Starts the response. Framing is the server's business: a `Content-Length` in
    /// `fields` is honoured, otherwise HTTP/1.1 clients get chunked encoding and HTTP/1.0
    /// clients a close-delimited body. Hop-by-hop fields must already be gone.
    public func sendHead(status: Int, fields: consuming HTTPFields) {
        let declared = DeclaredFraming(fields)
        sendHead(status: status, fields: consume fields, declared: declared)
    }

    /// `sendHead(status:fields:)` for a caller that has read the fields' framing already:
    /// `declared` is what `DeclaredFraming` made of them, and their Content-Length lines
    /// are still the ones it read. A length it found canonical is sent as it is.
    ///
    /// The fields are taken, not copied: the server edits them (framing, Connection) before
    /// it writes them, and a copy shared with the caller made each edit copy them whole.
    public func sendHead(status: Int, fields: consuming HTTPFields, declared: DeclaredFraming) {
        connection?.sendHead(self, status: status, fields: consume fields, declared: declared)
    }

    /// Queues body bytes (copied). Returns false once the buffer is over its high-water
    /// mark: wait for `responseDrained()` before sending more.
    @discardableResult
    public func sendBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        connection?.sendBody(self, bytes) ?? false
    }

    /// Completes the response.
    public func finish() {
        connection?.finish(self)
    }

    /// Ends the response without completing it, so that the client can tell it was cut
    /// short: no final chunk, and the connection closes after what was already queued.
    public func abort() {
        connection?.abort(self)
    }

    /// A whole response at once: head, body, end.
    public func respond(status: Int, fields: consuming HTTPFields, body: [UInt8]) {
        fields.set(name: .contentLength, value: String(body.count))
        sendHead(status: status, fields: consume fields)
        if !body.isEmpty { body.withUnsafeBytes { _ = sendBody($0) } }
        finish()
    }

    /// Answers with Latchkey's own JSON error.
    public func respond(_ document: ErrorDocument) {
        respond(status: document.status, fields: document.fields, body: document.body)
    }

    /// Answers this CONNECT with `200` and turns the connection into `tunnel` once the
    /// answer is written. For a relay, the handler hears `tunnelEnded` at the end.
    public func openTunnel(_ tunnel: Tunnel) {
        connection?.openTunnel(self, tunnel)
    }

    /// Stops delivering request body bytes until `resumeRequestBody()`.
    public func pauseRequestBody() {
        connection?.setRequestBodyPaused(self, true)
    }

    /// Resumes request body delivery; for `Expect: 100-continue` the first call sends the
    /// interim 100 response.
    public func resumeRequestBody() {
        connection?.setRequestBodyPaused(self, false)
    }
}

/// Which listener a connection arrived on, the address it is bound to, and its TLS (nil
/// for plain HTTP). A class: every connection and exchange refers to its listener's one
/// instance instead of carrying 48 bytes of it.
public final class ListenerInfo: Sendable, Equatable {
    public let index: Int
    public let boundAddress: SocketAddress
    public let tls: ListenerTLS?

    public init(index: Int, boundAddress: SocketAddress, tls: ListenerTLS? = nil) {
        self.index = index
        self.boundAddress = boundAddress
        self.tls = tls
    }

    /// The same listener: its TLS compared by identity (one per listener, its context
    /// replaced in place).
    public static func == (lhs: ListenerInfo, rhs: ListenerInfo) -> Bool {
        lhs.index == rhs.index && lhs.boundAddress == rhs.boundAddress && lhs.tls === rhs.tls
    }
}
