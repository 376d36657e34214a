/// CONNECT tunnels: the 200, then interception (TLS, then requests) or a relay.
extension ServerConnection {
    func openTunnel(_ exchange: ServerExchange, _ tunnel: Tunnel) {
        // Being built: the connection machine's intercepting and relaying states.
        exchange.respond(ErrorDocument(status: 501, error: "not_implemented", message: "CONNECT tunnels are being built"))
    }
}
