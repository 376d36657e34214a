import Foundation
import LatchkeyAuth
import LatchkeyHTTP
import LatchkeyLoop
import LatchkeyServer
import Logging
import Prometheus
import Synchronization

/// A running proxy: the listening sockets, one event loop per configured loop count,
/// each with its server and upstream client, and the secret-file watcher. `init` returns
/// once every loop is accepting; `shutdown` drains them.
public final class ProxyRuntime: Sendable {
    public let config: Config
    public let listeners: [ListenerInfo]
    private let sockets: [ListeningSocket]
    private let loops: [EventLoopThread]
    private let logger: Logger
    private let watcher: FileWatcher
    private let identities: IdentityRegistry

    /// `sink` receives the access log; nil disables it. The runtime's series are made with
    /// `metrics`, and `/.latchkey/metrics` renders its registry: the executable passes the
    /// factory it bootstrapped swift-metrics with, so that one endpoint shows everything.
    /// `routeIdentities` holds what `latchkey use` chose, followed while the proxy runs.
    public init(config: Config, credentials: CredentialStore, logger: Logger, sink: LogSink?,
                tokenStore: any TokenStore = MemoryTokenStore(), routeIdentities: RouteIdentityFile? = nil,
                metrics: PrometheusMetricsFactory = PrometheusMetricsFactory(registry: PrometheusCollectorRegistry())) throws {
        self.config = config
        self.logger = logger
        let startedAt = Date()
        // The status page's recent auth events, fed by every identity.
        let authEvents = AuthEventRecorder()
        // One HTTP client for the control plane: token requests and handoff calls.
        let hasHandoffs = config.routes.contains { $0.handoff != nil }
        let client = IdentityRegistry.needsHTTPClient(config) || hasHandoffs ? try AuthHTTPClient() : nil
        identities = try IdentityRegistry(config: config, credentials: credentials, store: tokenStore, client: client,
                                          logger: Logger(label: "latchkey.auth"), metrics: metrics, recorder: authEvents)
        var sockets: [ListeningSocket] = []
        for (index, listener) in config.listeners.enumerated() {
            do {
                sockets.append(try ListeningSocket(address: listener.address.socketAddress, index: index))
            } catch {
                throw RuntimeError("cannot listen on \(listener.address) (listener \(listener.name)): \(error)")
            }
        }
        self.sockets = sockets
        listeners = sockets.map(\.info)

        var policies: [ListenerPolicy] = []
        for (listener, socket) in zip(config.listeners, sockets) {
            do {
                policies.append(try ListenerPolicy(config: listener, bound: socket.info.boundAddress))
            } catch {
                throw RuntimeError("listener \(listener.name): \(error.detail)")
            }
        }
        let routes = RouteTable(config: config, identities: identities.identities)
        let identitiesEndpoint = IdentitiesEndpoint(config: config, identities: identities.identities, selectable: routes.selectable)
        // Before any request: the first one already gets the identity `latchkey use` chose.
        let follower = routeIdentities.map { RouteIdentityFollower(file: $0, routes: routes.selectable, logger: logger) }
        follower?.check()
        let context = ProxyContext(
            routes: routes,
            policies: policies,
            credentials: credentials,
            identities: identities.identities,
            accessLog: AccessLog(sink: sink, enabled: config.logging.accessLog,
                                 // Requests that match no route include login links.
                                 secretQueryParameters: routes.allSecretQueryParameters.union([SessionGate.tokenParameter])),
            metrics: ProxyMetrics(config: config, factory: metrics),
            metricsEndpoint: MetricsEndpoint(registry: metrics.registry),
            readiness: Readiness(store: tokenStore as? any AvailabilityReportingStore, identities: Array(identities.identities.values)),
            identitiesEndpoint: identitiesEndpoint,
            statusPage: StatusPageEndpoint(identities: identitiesEndpoint, routes: config.routes, events: authEvents, startedAt: startedAt),
            handoffCaller: hasHandoffs ? client.map(HandoffCaller.init(client:)) : nil,
            handoffMarks: HandoffMarks(signer: try MessageSigner.ephemeral()),
            logger: logger
        )
        let settings = ConnectionSettings(config.limits, loops: config.server.resolvedLoops)
        let count = config.server.resolvedLoops
        var loops: [EventLoopThread] = []
        for index in 0..<count {
            let sockets = self.sockets
            loops.append(try EventLoopThread(index: index) { loop in
                let handler = try ProxyHandler(loop: loop, context: context)
                let server = HTTPServer(loop: loop, settings: settings, handler: handler)
                for socket in sockets { try server.listen(on: socket) }
                loop.attach(handler)
                loop.attach(server)
            })
        }
        self.loops = loops
        StoreMetrics.observe(tokenStore, factory: metrics)
        let secrets: @Sendable () -> Void = { [identities] in
            let changed = credentials.reloadIfChanged()
            if !changed.isEmpty {
                logger.info("secret files changed", metadata: ["credentials": .array(changed.map { .string($0) })])
            }
            identities.secretsReloaded(changed)
        }
        watcher = FileWatcher(checks: [secrets] + (follower.map { [$0.check] } ?? []))
        identities.start()
    }

    /// Graceful stop: stop accepting, let in-flight requests finish within the grace
    /// period, then close what is left and stop the loops. Blocks the caller.
    public func shutdown() {
        watcher.stop()
        let stoppedAccepting = DispatchGroup()
        for loop in loops {
            stoppedAccepting.enter()
            loop.handle.execute { loop in
                loop.attachment(HTTPServer.self)?.stopAccepting()
                stoppedAccepting.leave()
            }
        }
        stoppedAccepting.wait()
        for socket in sockets { socket.close() }

        let drained = DispatchGroup()
        for loop in loops {
            drained.enter()
            loop.handle.execute { loop in
                guard let server = loop.attachment(HTTPServer.self) else { return drained.leave() }
                server.drain { drained.leave() }
            }
        }
        let grace = config.server.gracePeriod
        let deadline = DispatchTime.now() + .nanoseconds(Int(grace.nanosecondsClamped))
        if drained.wait(timeout: deadline) == .timedOut {
            logger.warning("grace period over; closing the remaining connections", metadata: ["grace_s": "\(grace)"])
        }
        for loop in loops {
            loop.handle.execute { loop in
                loop.attachment(HTTPServer.self)?.closeAll()
                loop.stop()
            }
        }
        for loop in loops { loop.join() }
        identities.shutdown()
    }
}

/// A start-up failure explained for the operator.
public struct RuntimeError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension ServerSettings {
    /// Loops to run: as configured, else one per core.
    public var resolvedLoops: Int {
        max(1, loops ?? ProcessInfo.processInfo.activeProcessorCount)
    }
}

extension ListenAddress {
    var socketAddress: SocketAddress {
        switch self {
        case .tcp(let host, let port): SocketAddress.numeric(host: host, port: port) ?? .ipv4(host: host, port: port)
        case .unix(let path): .unix(path: path)
        }
    }
}

extension ConnectionSettings {
    init(_ limits: Limits, loops: Int) {
        self.init(
            http: HTTPLimits(
                maxRequestLineBytes: limits.maxRequestLineBytes,
                maxHeaderBytes: limits.maxHeaderBytes,
                maxHeaderCount: limits.maxHeaderCount
            ),
            headTimeout: limits.headTimeout,
            idleTimeout: limits.idleTimeout,
            // The cap is for the process; each loop takes its share.
            maxConnections: max(1, (limits.maxConnections + loops - 1) / loops),
            maxRequestBodyBytes: limits.maxRequestBodyBytes
        )
    }
}
