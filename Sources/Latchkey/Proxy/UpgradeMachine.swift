/// The upstream side of a protocol switch (a WebSocket's opening handshake), as a value:
/// `UpgradeExchange` tells it what happened — the identity's token came, the upstream's
/// response head arrived, the answer ended or failed, the client left — and does what it
/// answers. A refused token is renewed and the handshake made again once, before the
/// switch; after `101` the server relays the bytes and this machine only waits for the end.
struct UpgradeMachine: Equatable {
    enum State: Equatable {
        case idle
        case waitingForToken
        /// A connection is being made and the handshake sent and answered. `renewed`: with
        /// a token renewed after a refusal; a second refusal goes to the client.
        case handshaking(renewed: Bool)
        /// The upstream refused the token: a renewed one is awaited.
        case renewing
        /// The upstream answered without switching: its response goes to the client.
        case answering
        /// The switch went through: the connection relays the new protocol.
        case switched
        case done
    }

    /// The route injects an identity's token (renewable or static).
    let injectsIdentity: Bool
    /// That identity can get a new token when the upstream refuses one.
    let renewable: Bool
    private(set) var state = State.idle

    init(injectsIdentity: Bool, renewable: Bool) {
        self.injectsIdentity = injectsIdentity
        self.renewable = renewable
    }

    enum Begin: Equatable {
        case handshake
        case waitForToken
    }

    mutating func start(tokenAtHand: Bool) -> Begin {
        guard state == .idle else { return .waitForToken }
        if injectsIdentity && !tokenAtHand {
            state = .waitingForToken
            return .waitForToken
        }
        state = .handshaking(renewed: false)
        return .handshake
    }

    enum TokenAction: Equatable {
        case handshake
        /// No token the route can use: the client is told why.
        case refuse
        case ignore
    }

    mutating func tokenArrived(usable: Bool) -> TokenAction {
        let renewed: Bool
        switch state {
        case .waitingForToken: renewed = false
        case .renewing: renewed = true
        default: return .ignore
        }
        guard usable else {
            state = .done
            return .refuse
        }
        state = .handshaking(renewed: renewed)
        return .handshake
    }

    enum HeadAction: Equatable {
        case switchProtocols
        /// Drop this connection, renew the token, and make the handshake again.
        case renewAndRetry
        /// A static token was refused: it cannot be renewed.
        case rejectToken
        /// Relay the upstream's response.
        case answer
        case ignore
    }

    /// The upstream's final response head. `refusesToken`: its status (or challenge) says
    /// the token is no longer good (the route's `renew_on`).
    mutating func responseHead(status: Int, refusesToken: Bool) -> HeadAction {
        guard case .handshaking(let renewed) = state else { return .ignore }
        if status == 101 {
            state = .switched
            return .switchProtocols
        }
        if refusesToken && injectsIdentity && !renewed {
            guard renewable else {
                state = .done
                return .rejectToken
            }
            state = .renewing
            return .renewAndRetry
        }
        state = .answering
        return .answer
    }

    /// The relayed response is complete.
    mutating func answerFinished() {
        if state == .answering { state = .done }
    }

    enum Failure: Equatable {
        /// Nothing was sent to the client yet: answer with the error.
        case answer
        /// The response was under way: cut it so that the client can tell.
        case cut
        case ignore
    }

    /// The upstream connection failed (connect, send, a malformed or cut response, a timeout).
    mutating func failed() -> Failure {
        switch state {
        case .handshaking:
            state = .done
            return .answer
        case .answering:
            state = .done
            return .cut
        case .idle, .waitingForToken, .renewing, .switched, .done:
            return .ignore
        }
    }

    /// The client left: whether there is work to stop (a stream already switched belongs to
    /// the connection, which ends it).
    mutating func clientGone() -> Bool {
        switch state {
        case .done, .switched:
            return false
        case .idle, .waitingForToken, .handshaking, .renewing, .answering:
            state = .done
            return true
        }
    }

    /// The switched stream ended.
    mutating func streamEnded() {
        if state == .switched { state = .done }
    }
}
