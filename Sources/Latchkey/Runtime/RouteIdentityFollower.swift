import LatchkeyAuth
import LatchkeyLoop
import Logging
import Synchronization

/// Takes up `latchkey use` in a running server: reads the route identity file at start
/// and again whenever its signature moves (checked about once a second), and makes each
/// selectable route's default the identity chosen there, or its configured one when the
/// file names none. A choice the configuration does not allow (an identity since taken
/// off `selectable_identities`) is logged and left aside; so is a file that cannot be
/// read, and the routes keep the identities they have.
final class RouteIdentityFollower: Sendable {
    private let file: RouteIdentityFile
    /// The routes with a choice to make, by name.
    private let routes: [String: RouteIdentities]
    private let logger: Logger
    private let seen = Mutex(Seen())

    private struct Seen {
        var read = false
        var signature: FileSignature?
        /// Changed too recently for the signature to prove it unchanged.
        var recheck = false
        var applied: [String: String]?
    }

    init(file: RouteIdentityFile, routes: [String: RouteIdentities], logger: Logger) {
        self.file = file
        self.routes = routes
        self.logger = logger
    }

    /// Blocks on file I/O: at start-up, then on the file watcher's thread.
    func check() {
        let signature = file.signature
        let due = seen.withLock { !$0.read || $0.signature != signature || $0.recheck }
        guard due else { return }
        let chosen: [String: String]
        do {
            chosen = try file.read()
        } catch {
            seen.withLock { $0 = Seen(read: true, signature: signature, recheck: false, applied: $0.applied) }
            logger.warning("cannot read the route identities; routes keep the identities they have", metadata: ["detail": .string(error.message)])
            return
        }
        let changed = seen.withLock { seen -> Bool in
            let changed = seen.applied != chosen
            seen = Seen(read: true, signature: signature, recheck: signature?.isRecent ?? false, applied: chosen)
            return changed
        }
        if changed { apply(chosen) }
    }

    private func apply(_ chosen: [String: String]) {
        for (route, identity) in chosen.sorted(by: { $0.key < $1.key }) where routes[route] == nil {
            logger.warning("the route identities name a route without a choice of identities; ignored", metadata: [
                "route": .string(route), "identity": .string(identity),
            ])
        }
        for (name, identities) in routes.sorted(by: { $0.key < $1.key }) {
            let wanted = chosen[name] ?? identities.configured.name
            let before = identities.current.name
            guard wanted != before else { continue }
            guard identities.use(wanted) else {
                logger.warning("the route identities name an identity the route does not allow; it keeps its identity", metadata: [
                    "route": .string(name), "identity": .string(wanted), "kept": .string(before),
                    "allowed": .string(identities.names.joined(separator: ", ")),
                ])
                continue
            }
            logger.info("route identity changed", metadata: [
                "route": .string(name), "identity": .string(wanted), "configured": .string(identities.configured.name),
            ])
        }
    }
}
