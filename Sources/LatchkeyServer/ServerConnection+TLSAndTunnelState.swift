import LatchkeyHTTP
import LatchkeyTLS

/// What only TLS and tunnelled connections have, kept out of line: about 160 bytes that
/// every plain connection, idle ones included, would otherwise carry (Benchmarks/RESULTS.md,
/// memory per idle connection).
///
/// Loop-bound: its stored properties are `@exclusivity(unchecked)`, as `EventLoop` says why.
final class TLSAndTunnelState {
    /// What the handshake agreed, given to every exchange on the connection.
    @exclusivity(unchecked) var tlsInfo: TLSConnectionInfo?
    /// Inside an intercepted CONNECT tunnel: the host and port the client connected to,
    /// given to every exchange on the connection.
    @exclusivity(unchecked) var tunnelAuthority: TargetAuthority?
    /// A CONNECT's tunnel, from the handler's decision until its `200` has been written.
    @exclusivity(unchecked) var pendingTunnel: Tunnel?
    /// The upstream of a relayed tunnel (or upgraded stream) while it lasts.
    @exclusivity(unchecked) var relay: RelayUpstream?
}

extension ServerConnection {
    var tlsInfo: TLSConnectionInfo? {
        get { tlsAndTunnel?.tlsInfo }
        set { if newValue != nil || tlsAndTunnel != nil { tlsAndTunnelState().tlsInfo = newValue } }
    }

    var tunnelAuthority: TargetAuthority? {
        get { tlsAndTunnel?.tunnelAuthority }
        set { if newValue != nil || tlsAndTunnel != nil { tlsAndTunnelState().tunnelAuthority = newValue } }
    }

    var pendingTunnel: Tunnel? {
        get { tlsAndTunnel?.pendingTunnel }
        set { if newValue != nil || tlsAndTunnel != nil { tlsAndTunnelState().pendingTunnel = newValue } }
    }

    var relay: RelayUpstream? {
        get { tlsAndTunnel?.relay }
        set { if newValue != nil || tlsAndTunnel != nil { tlsAndTunnelState().relay = newValue } }
    }

    /// Setting nil where nothing was set allocates nothing.
    private func tlsAndTunnelState() -> TLSAndTunnelState {
        if let tlsAndTunnel { return tlsAndTunnel }
        let state = TLSAndTunnelState()
        tlsAndTunnel = state
        return state
    }
}
