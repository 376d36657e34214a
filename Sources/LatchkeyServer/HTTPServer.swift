import LatchkeyLoop
import LatchkeyTLS
#if canImport(Glibc)
import Glibc
#endif

/// The server's part of one loop: accepts on the shared listening sockets, owns this
/// loop's client connections, and drains them on shutdown.
///
/// Loop-bound: its stored properties are `@exclusivity(unchecked)`, as `EventLoop` says why.
public final class HTTPServer {
    let loop: EventLoop
    /// Read where each applies: the HTTP limits when a connection opens, the rest when they
    /// are next needed. A reload replaces them (`update(settings:)`).
    @exclusivity(unchecked) private(set) var settings: ConnectionSettings
    let handler: ServerHandler
    /// Shared with the other loops' servers: the connection cap is the process's.
    private let connectionCount: ConnectionCount
    @exclusivity(unchecked) private var acceptors: [Acceptor] = []
    /// This loop's connections, each knowing its place in the list (`serverIndex`): 8 bytes
    /// a connection, where a dictionary by identity took 16 a bucket with a quarter or more
    /// of the buckets empty.
    @exclusivity(unchecked) private var connections: [ServerConnection] = []
    @exclusivity(unchecked) private(set) var isShuttingDown = false
    @exclusivity(unchecked) private var onDrained: (() -> Void)?
    /// The readers (16 KiB input buffer, request decoder) of this loop's busy connections;
    /// a few hundred are kept for reuse, and as many buffers of the readers that go.
    let readers = RequestReaderPool(buffers: BufferPool(bufferSize: 16 * 1024, maxKept: 256), maxKept: 256)
    /// Output buffers of up to 2 KiB (a small response's) that connections give back
    /// between requests.
    let outputBuffers = OutputBufferPool(maxKeptCapacity: 2048, maxKept: 256)
    /// Where every relay on this loop reads its upstream into: what the client's socket
    /// does not take at once is copied to that connection's output, so an idle relay
    /// holds no read buffer of its own.
    let relayReadBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 16)

    /// `connectionCount`: one for all the loops of a process, so that
    /// `settings.maxConnections` limits them together.
    deinit {
        relayReadBuffer.deallocate()
    }

    public init(loop: EventLoop, settings: ConnectionSettings, handler: ServerHandler, connectionCount: ConnectionCount = ConnectionCount()) {
        self.loop = loop
        self.settings = settings
        self.handler = handler
        self.connectionCount = connectionCount
    }

    /// Starts accepting on `listener` in this loop.
    public func listen(on listener: ListeningSocket) throws(SystemError) {
        let acceptor = Acceptor(listener: listener, server: self)
        acceptor.registration = try loop.register(fd: listener.fd, events: .readable, handler: acceptor, exclusive: true)
        acceptors.append(acceptor)
    }

    /// New limits, from a configuration reload: for new connections, and for the next
    /// request, timeout or accept of the open ones. The header limits apply from the next
    /// request an idle connection reads (requests pipelined behind one under way keep the
    /// limits it was read with: they share its `RequestReader`).
    public func update(settings: ConnectionSettings) {
        self.settings = settings
    }

    /// Stops accepting on this loop; the caller closes the listening sockets once every
    /// loop has stopped.
    public func stopAccepting() {
        isShuttingDown = true
        for acceptor in acceptors { acceptor.stop() }
        acceptors.removeAll()
    }

    /// Closes idle connections, lets busy ones finish their response, and calls `drained`
    /// on this loop when none are left.
    public func drain(then drained: @escaping () -> Void) {
        stopAccepting()
        onDrained = drained
        for connection in connections { connection.beginShutdown() }
        checkDrained()
    }

    /// Closes every connection at once (the grace period is over).
    public func closeAll() {
        for connection in connections { connection.close() }
    }

    fileprivate func accepted(_ socket: consuming Socket, peer: SocketAddress?, listener: ListenerInfo) {
        guard !isShuttingDown, connectionCount.admit(limit: settings.maxConnections) else {
            refuseOverCapacity(socket)
            return handler.connection(.refusedOverCapacity, on: listener)
        }
        if case .unix = listener.boundAddress {} else { socket.setNoDelay() }
        // Out of memory or descriptors: nothing can be said to this client, and the socket
        // closes as it goes.
        let tls: TLSSession?
        do {
            tls = try listener.tls.map { tls throws(TLSError) in try TLSSession(context: tls.context, fd: socket.fd) }
        } catch {
            connectionCount.release()
            return
        }
        let connection = ServerConnection(socket: socket, peer: peer, listener: listener, tls: tls, server: self)
        do {
            try connection.start()
        } catch {
            connectionCount.release()
            return
        }
        connection.serverIndex = Int32(connections.count)
        connections.append(connection)
        handler.connection(.opened, on: listener)
    }

    func connectionClosed(_ connection: ServerConnection) {
        if remove(connection) {
            connectionCount.release()
            handler.connection(.closed, on: connection.listener)
        }
        checkDrained()
    }

    /// Connections open on this loop now.
    var openConnections: Int { connections.count }

    /// Takes `connection` out of the list, the last one moving to its place. Returns false
    /// when it was not in it.
    private func remove(_ connection: ServerConnection) -> Bool {
        let index = Int(connection.serverIndex)
        guard index >= 0, index < connections.count, connections[index] === connection else { return false }
        let last = connections.count - 1
        if index != last {
            connections.swapAt(index, last)
            connections[index].serverIndex = Int32(index)
        }
        connections.removeLast()
        connection.serverIndex = -1
        return true
    }

    private func checkDrained() {
        guard isShuttingDown, connections.isEmpty, let drained = onDrained else { return }
        onDrained = nil
        drained()
    }

    /// Over the connection cap: one best-effort 503 and close, without reading the request.
    private func refuseOverCapacity(_ socket: consuming Socket) {
        Self.overCapacityResponse.withUnsafeBytes { _ = try? socket.send($0) }
        socket.close()
    }

    private static let overCapacityResponse: [UInt8] = {
        let document = ErrorDocument(status: 503, error: "over_capacity", message: "too many connections; try again later")
        let body = document.body
        var head = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        head += "Content-Length: \(body.count)\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + body
    }()
}

/// Accepts new connections from one listening socket on one loop.
private final class Acceptor: IOHandler {
    let listener: ListeningSocket
    unowned let server: HTTPServer
    var registration: IORegistration?
    /// Re-enables accepting after the process ran out of file descriptors.
    private lazy var retry = ClosureTimer { [unowned self] in self.resume() }

    init(listener: ListeningSocket, server: HTTPServer) {
        self.listener = listener
        self.server = server
    }

    func handleIO(_ events: IOEvents) {
        // A bounded batch per wake-up keeps one busy listener from starving the loop.
        for _ in 0..<64 {
            var peer: SocketAddress?
            let next: Socket?
            do {
                next = try listener.accept(peer: &peer)
            } catch where error.errno == EMFILE || error.errno == ENFILE {
                // Out of descriptors: the listening socket stays readable, and level-
                // triggered epoll would wake us on every turn. Stop accepting for a moment,
                // as nginx does; connections wait in the backlog meanwhile.
                return pause()
            } catch {
                // ECONNABORTED and friends: nothing to do for this one.
                continue
            }
            guard let socket = next else { return }
            server.accepted(socket, peer: peer, listener: listener.info)
        }
    }

    func stop() {
        server.loop.disarm(retry)
        if let registration { server.loop.unregister(registration) }
        registration = nil
    }

    private func pause() {
        guard let registration else { return }
        server.loop.unregister(registration)
        self.registration = nil
        server.loop.arm(retry, after: .milliseconds(250))
    }

    private func resume() {
        guard registration == nil, !server.isShuttingDown else { return }
        registration = try? server.loop.register(fd: listener.fd, events: .readable, handler: self, exclusive: true)
    }
}
