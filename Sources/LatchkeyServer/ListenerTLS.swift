import LatchkeyTLS
import Synchronization

/// A listener's TLS: the server context new connections handshake with, and how long a
/// handshake may take. A reload replaces the context (new certificate files, a re-minted
/// leaf); connections already open keep the one they began with.
public final class ListenerTLS: Sendable {
    public let handshakeTimeout: Duration
    private let current: Mutex<TLSServerContext>

    public init(context: TLSServerContext, handshakeTimeout: Duration) {
        current = Mutex(context)
        self.handshakeTimeout = handshakeTimeout
    }

    /// The context for a connection accepted now.
    public var context: TLSServerContext {
        current.withLock { $0 }
    }

    /// New connections get `context` from now on.
    public func replace(_ context: TLSServerContext) {
        current.withLock { $0 = context }
    }
}
