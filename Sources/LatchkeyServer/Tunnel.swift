import LatchkeyHTTP
import LatchkeyLoop
import LatchkeyTLS

/// What a CONNECT exchange turns its connection into, once the proxy has decided (RFC 9110
/// §9.3.6): the connection answers `200`, then carries the tunnel until it ends.
public enum Tunnel {
    /// Terminates the client's TLS here with `context` (a certificate for the CONNECT
    /// host) and serves the requests inside as exchanges whose `tunnelAuthority` is
    /// `authority`, each routed by it.
    case intercept(TLSServerContext, authority: TargetAuthority)
    /// Moves bytes both ways between the client and `upstream`, unread, until both sides
    /// have finished.
    case relay(RawConnection)
    /// An upgraded request (RFC 9110 §7.8): the upstream's `101 Switching Protocols` is
    /// written with `fields`, then `early` (what the upstream sent right behind its head),
    /// and bytes flow both ways as for a relay. A WebSocket (RFC 6455) is closed with close
    /// frames at shutdown.
    case upgrade(RawConnection, fields: HTTPFields, early: [UInt8], webSocket: Bool)

    var kind: ConnectionMachine.TunnelKind {
        switch self {
        case .intercept: .intercept
        case .relay: .relay(.tunnel)
        case .upgrade(_, _, _, let webSocket): .relay(.upgrade(webSocket: webSocket))
        }
    }
}

/// How a relayed tunnel ended, for the exchange's log line (the byte counts are the
/// exchange's `requestBodyBytes`, client to upstream, and `responseBodyBytes`).
public enum TunnelEnd: Sendable, Equatable {
    /// Both sides finished sending.
    case closed
    /// No byte either way for the tunnel idle timeout.
    case idle
    /// A side reset or failed; `detail` for the log.
    case failed(detail: String)
    /// Latchkey shut down: the tunnel closed after its close frames, or when the grace
    /// period ran out.
    case shutdown
}
