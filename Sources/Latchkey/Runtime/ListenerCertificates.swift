import Foundation
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyLoop
import LatchkeyServer
import LatchkeyTLS
import Logging
import Synchronization

/// The server contexts of the TLS listeners, kept current while the process runs: made at
/// start (a certificate that does not load stops the start), made again when one of the
/// files they are read from changes (checked by the file watcher each second), when a
/// local-CA leaf nears its end or the CA is renewed (checked hourly), and when a reload
/// changes a listener's `tls`. A new context that cannot be made is logged naming the file,
/// and the listener keeps the one it has. New connections get the new context; open ones
/// keep theirs. File I/O and minting happen here, on the watcher's or the reload's thread,
/// never on a loop.
final class ListenerCertificates: Sendable {
    /// By listener index; nil for a plain listener. The sockets hold these from the start:
    /// only their contexts change.
    let listeners: [ListenerTLS?]
    /// One ring for every context, so that a new certificate keeps sessions resumable.
    let ticketKeys: TicketKeyRing
    let leaves = LeafCache()
    let environment: [String: String]
    let logger: Logger
    let state: Mutex<State>

    /// How often leaves and Latchkey's own CA are checked for renewal: far inside the two
    /// days a leaf has left when it is minted again.
    static let renewalInterval: TimeInterval = 3600

    struct State {
        /// By listener index, as `listeners`.
        var plans: [ListenerTLSPlan?]
        /// The configuration's `ca` and `store`, which say where the local CA is.
        var config: Config
        /// The local CA's certificate and key files, once a listener has used it.
        var caFiles: [String] = []
        /// The leaf each context presents, to tell a re-minted one.
        var leaves: [Int: Certificate] = [:]
        /// Each watched file's signature when its contexts were last made (nil: could not
        /// stat it).
        var signatures: [String: FileSignature?] = [:]
        /// The last failure logged per listener, so that a broken file is logged once.
        var failures: [Int: String] = [:]
        var nextRenewal: Date
    }

    init(config: Config, logger: Logger, environment: [String: String], now: Date = Date()) throws(RuntimeError) {
        self.logger = logger
        self.environment = environment
        do {
            ticketKeys = try TicketKeyRing()
        } catch {
            throw RuntimeError("TLS: \(error)")
        }
        var state = State(plans: config.listeners.map(ListenerTLSPlan.init), config: config,
                          nextRenewal: now.addingTimeInterval(Self.renewalInterval))
        var listeners: [ListenerTLS?] = []
        for (index, listener) in config.listeners.enumerated() {
            guard let plan = state.plans[index], let tls = listener.tls else {
                listeners.append(nil)
                continue
            }
            let context: TLSServerContext
            do {
                let identity = try Self.identity(for: plan, state: &state, leaves: leaves, environment: environment, logger: logger, now: now)
                context = try Self.context(identity, for: plan, ticketKeys: ticketKeys)
                state.leaves[index] = identity.leaf
            } catch {
                throw RuntimeError("listener \(listener.name): \(error.description)")
            }
            listeners.append(ListenerTLS(context: context, handshakeTimeout: tls.handshakeTimeout))
        }
        state.signatures = FileSignature.of(Self.watchedFiles(state))
        self.listeners = listeners
        self.state = Mutex(state)
    }

    /// The identity `plan` presents now: its files, or a leaf of the local CA (the one in
    /// use unless it nears its end or the CA changed: LeafCache). Opening the CA renews
    /// Latchkey's own when its end is near.
    static func identity(for plan: ListenerTLSPlan, state: inout State, leaves: LeafCache, environment: [String: String],
                         logger: Logger, now: Date) throws(RuntimeError) -> TLSIdentity {
        do {
            switch plan.identity {
            case .files(let certFile, let keyFile):
                return try TLSIdentity.load(certFile: certFile, keyFile: keyFile, now: now)
            case .localCA(let names):
                let ca = try LocalCA.open(config: state.config, environment: environment, now: now)
                state.caFiles = [ca.certificatePath, ca.keyPath]
                announce(ca, environment: environment, logger: logger)
                return try leaves.leaf(for: names, authority: ca.authority, now: now)
            }
        } catch {
            throw RuntimeError("\(error)")
        }
    }

    /// A CA made or renewed here changes what clients must trust: say so, naming the file,
    /// and keep an existing `bundle.pem` in step (clients given the bundle keep working
    /// once they read it again).
    static func announce(_ ca: LocalCA, environment: [String: String], logger: Logger) {
        guard ca.outcome != .loaded, let store = ca.store else { return }
        // Made on first use is expected; renewed means trusted clients start failing.
        let (level, what): (Logger.Level, String) = ca.outcome == .made ? (.info, "made") : (.warning, "renewed with a new key")
        logger.log(level: level, "local certificate authority \(what): clients must trust the new certificate", metadata: [
            "certificate": .string(ca.certificatePath), "not_after": .string(ca.authority.certificate.notAfter.formatted(.iso8601)),
        ])
        guard FileManager.default.fileExists(atPath: store.bundlePath) else { return }
        do {
            _ = try store.writeBundle(authority: ca.authority.certificate, environment: environment)
        } catch {
            logger.error("cannot update the local certificate authority's bundle", metadata: ["error": .string(error.description)])
        }
    }

    /// The server context presenting `identity`, asking for client certificates when
    /// `plan` says so.
    static func context(_ identity: TLSIdentity, for plan: ListenerTLSPlan, ticketKeys: TicketKeyRing) throws(RuntimeError) -> TLSServerContext {
        do {
            let clientCA = try plan.clientCAFile.map { file throws(TLSError) in try Certificate.chain(file: file, now: nil) }
            return try TLSServerContext(identity: identity, clientCA: clientCA, ticketKeys: ticketKeys, resumptionScope: plan.resumptionScope)
        } catch {
            throw RuntimeError(error.description)
        }
    }

    static func watchedFiles(_ state: State) -> [String] {
        state.plans.compactMap { $0 }.flatMap(\.files) + state.caFiles
    }
}
