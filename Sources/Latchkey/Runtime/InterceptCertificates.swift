import Foundation
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyTLS
import Logging
import Synchronization

/// The certificates a forward listener presents inside the CONNECT tunnels it intercepts:
/// one leaf per host from the local CA (LeafCache: at most 7 days, re-minted near its end
/// or when the CA changes), and one server context per leaf. A host's first tunnel mints on
/// its loop (an ECDSA P-256 key and a signature: a fraction of a millisecond); later ones
/// find its context here. One per process: the CA is opened once, at start, and hourly
/// (`check`), which renews it when its end is near.
final class InterceptCertificates: Sendable {
    private let leaves = LeafCache()
    /// Every intercepted context resumes sessions with these keys, and only intercepted
    /// ones: a ticket from a TLS listener is not accepted in a tunnel (resumption scope).
    private let ticketKeys: TicketKeyRing
    private let environment: [String: String]
    private let logger: Logger
    private let state: Mutex<State>

    static let resumptionScope = "forward-proxy interception"

    private struct State {
        var config: Config
        var authority: CertificateAuthority
        /// By host: the context and the leaf it presents, to tell a re-minted one.
        var contexts: [String: (leaf: Certificate, context: TLSServerContext)] = [:]
        var nextCheck: Date
    }

    /// Nil when no listener is a forward proxy. Opening the CA may make it (first use) or
    /// renew it; a CA that cannot be opened stops the start.
    static func open(config: Config, environment: [String: String], logger: Logger, now: Date = Date()) throws(RuntimeError) -> InterceptCertificates? {
        guard config.listeners.contains(where: { $0.mode == .forward }) else { return nil }
        return try InterceptCertificates(config: config, environment: environment, logger: logger, now: now)
    }

    private init(config: Config, environment: [String: String], logger: Logger, now: Date) throws(RuntimeError) {
        self.environment = environment
        self.logger = logger
        do {
            ticketKeys = try TicketKeyRing()
            let ca = try LocalCA.open(config: config, environment: environment, now: now)
            ListenerCertificates.announce(ca, environment: environment, logger: logger)
            state = Mutex(State(config: config, authority: ca.authority, nextCheck: now.addingTimeInterval(ListenerCertificates.renewalInterval)))
        } catch {
            throw RuntimeError("forward proxy: the local certificate authority: \(error)")
        }
    }

    /// The context for tunnels to `host` (lower-cased, as the CONNECT named it).
    func context(for host: String, now: Date = Date()) throws(TLSError) -> TLSServerContext {
        try state.withLock { state throws(TLSError) in
            let identity = try leaves.leaf(for: [host], authority: state.authority, now: now)
            if let kept = state.contexts[host], kept.leaf.isSame(as: identity.leaf) { return kept.context }
            let context = try TLSServerContext(identity: identity, clientCA: nil, ticketKeys: ticketKeys, resumptionScope: Self.resumptionScope)
            // As many contexts as leaves: past that, the oldest leaf is gone from the cache
            // and its context would be made again anyway.
            if state.contexts.count >= leaves.capacity, let any = state.contexts.keys.first { state.contexts[any] = nil }
            state.contexts[host] = (identity.leaf, context)
            return context
        }
    }

    /// The file watcher's pass: hourly, the CA is opened again, which renews it when under
    /// 30 days remain; the leaves then follow it (LeafCache re-mints for a changed CA).
    func check(now: Date = Date()) {
        state.withLock { state in
            guard now >= state.nextCheck else { return }
            state.nextCheck = now.addingTimeInterval(ListenerCertificates.renewalInterval)
            do {
                let ca = try LocalCA.open(config: state.config, environment: environment, now: now)
                ListenerCertificates.announce(ca, environment: environment, logger: logger)
                state.authority = ca.authority
            } catch {
                logger.error("cannot open the local certificate authority; intercepted tunnels keep the one in use",
                             metadata: ["error": .string("\(error)")])
            }
        }
    }
}
