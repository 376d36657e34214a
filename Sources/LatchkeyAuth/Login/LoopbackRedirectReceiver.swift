import CLinux
import Foundation
import LatchkeyLoop
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Receives the authorization server's redirect back to `latchkey login` (RFC 8252 §7.3).
///
/// It listens on the IPv4 loopback literal, never `localhost`, which may resolve to
/// another interface or to ::1 (RFC 8252 §8.3). `init` binds, so that the redirect URI
/// (with the port the kernel chose for port 0) is known before the authorization URL is
/// made; `code(for:timeout:)` then serves the browser's requests on a thread of its own,
/// with blocking sockets — this is the CLI, not an event loop — and closes the listener as
/// soon as the login's redirect has come, the timeout has passed or the task is cancelled.
/// Every descriptor is close-on-exec, so a browser started meanwhile never inherits the
/// listener and keeps the port open after Latchkey exits.
public final class LoopbackRedirectReceiver: Sendable {
    public let port: UInt16
    /// The redirect URI's path, e.g. `/callback`.
    public let path: String
    private let descriptors: Descriptors
    private let started = Mutex(false)

    /// `http://127.0.0.1:PORT/PATH`, the `redirect_uri` of the authorization request.
    public var redirectURI: String { "http://127.0.0.1:\(port)\(path)" }

    /// Binds 127.0.0.1:`port` (0: any free port) and listens.
    public init(port: UInt16 = 0, path: String = "/callback") throws(LoginError) {
        do {
            (descriptors, self.port) = try Descriptors.listen(port: port)
        } catch {
            throw .cannotListen(port: port, error)
        }
        self.path = path
    }

    /// Waits for the redirect that belongs to `request` and returns its authorization
    /// code. Requests for other paths (a browser's `/favicon.ico`) get a 404 page and a
    /// redirect with another state a page saying so: neither ends the wait, but the latter
    /// is reported to `ignored`. An error redirect (`access_denied` when the user said no)
    /// ends it with `.refused`. Call once.
    public func code(
        for request: AuthorizationRequest, timeout: Duration, ignored: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws(LoginError) -> String {
        let first = started.withLock { started in
            defer { started = true }
            return !started
        }
        precondition(first, "a redirect receiver serves one login")
        let (descriptors, port, path) = (descriptors, port, path)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<String, LoginError>, Never>) in
                let thread = Thread {
                    var server = RedirectServer(
                        listener: descriptors.listener, wake: descriptors.wake, port: port, path: path, request: request,
                        timeout: timeout, ignored: ignored)
                    let result = server.run()
                    descriptors.close()
                    continuation.resume(returning: result)
                }
                thread.name = "latchkey-login-redirect"
                thread.start()
            }
        } onCancel: {
            descriptors.wakeUp()
        }
        return try result.get()
    }
}

/// The listening socket and the eventfd that wakes its thread on cancellation: closed by
/// that thread when it is done, or here at release if it never started.
private final class Descriptors: Sendable {
    let listener: Int32
    let wake: Int32
    private let closed = Mutex(false)

    private init(listener: Int32, wake: Int32) {
        self.listener = listener
        self.wake = wake
    }

    deinit { close() }

    /// socket(2), bind(2) to 127.0.0.1:`port`, listen(2), and an eventfd(2).
    static func listen(port: UInt16) throws(SystemError) -> (Descriptors, UInt16) {
        let fd = try systemCall("socket") { socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        do {
            // A fixed port can be taken again at once after a login, past TIME_WAIT.
            var one: Int32 = 1
            _ = try systemCall("setsockopt(SO_REUSEADDR)") {
                setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(INADDR_LOOPBACK).bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = try withUnsafeMutablePointer(to: &address) { pointer throws(SystemError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemError) in
                    _ = try systemCall("bind") { bind(fd, address, length) }
                    _ = try systemCall("listen") { Glibc.listen(fd, 16) }
                    // getsockname(2): the port the kernel chose for port 0.
                    return try systemCall("getsockname") { getsockname(fd, address, &length) }
                }
            }
            let wake = try systemCall("eventfd") { eventfd(0, Int32(EFD_CLOEXEC)) }
            return (Descriptors(listener: fd, wake: wake), UInt16(bigEndian: address.sin_port))
        } catch {
            _ = Glibc.close(fd)
            throw error
        }
    }

    /// Makes the serving thread's poll(2) return: the login was cancelled. Under the lock,
    /// so that the eventfd cannot be closed (and its number reused) meanwhile.
    func wakeUp() {
        closed.withLock { closed in
            guard !closed else { return }
            var one: UInt64 = 1
            _ = write(wake, &one, MemoryLayout<UInt64>.size)
        }
    }

    func close() {
        closed.withLock { closed in
            guard !closed else { return }
            closed = true
            _ = Glibc.close(listener)
            _ = Glibc.close(wake)
        }
    }
}
