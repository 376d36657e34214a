import CoreMetrics
import Foundation
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyLogging
import LatchkeyLoop
import LatchkeyServer
import Logging
import Synchronization

/// A running proxy: the listening sockets, one event loop per configured loop count,
/// each with its server and upstream client, and the secret-file watcher. `init` returns
/// once every loop is accepting; `reload` replaces the configuration in force
/// (ProxyRuntime+Reload.swift); `shutdown` drains the loops.
public final class ProxyRuntime: Sendable {
    public let listeners: [ListenerInfo]
    private let sockets: [ListeningSocket]
    private let loops: [EventLoopThread]
    private let logger: Logger
    private let watcher: FileWatcher
    let services: RuntimeServices
    /// The TLS listeners' server contexts, kept current.
    let certificates: ListenerCertificates
    /// The configuration in force, replaced whole by a reload.
    let running: Mutex<RunningConfiguration>
    /// Held through a reload: one completes before the next begins.
    let reloading = Mutex(())

    /// The configuration in force.
    public var config: Config { running.withLock { $0.config } }

    /// `sink` receives the access log, and masks the credentials and the identities' secret
    /// captures in every line from then on; nil disables it. The runtime's series are made with
    /// `metrics`, and `/.latchkey/metrics` renders its registry: the executable passes the
    /// factory it bootstrapped swift-metrics with, so that one endpoint shows everything.
    /// `routeIdentities` holds what `latchkey use` chose, followed while the proxy runs.
    /// `environment` gives the token store's directory and key, beside which the local CA is kept.
    public init(config: Config, credentials: CredentialStore, logger: Logger, sink: LogSink?,
                tokenStore: any TokenStore = MemoryTokenStore(), routeIdentities: RouteIdentityFile? = nil,
                metrics: MetricsRegistry = MetricsRegistry(),
                environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        self.logger = logger
        services = RuntimeServices(credentials: credentials, sink: sink, redaction: HeldSecretsRedaction(credentials: credentials),
                                   metrics: metrics, handoffMarks: HandoffMarks(signer: try MessageSigner.ephemeral()),
                                   tlsFailureLog: TLSFailureLog(logger: logger),
                                   interception: try InterceptCertificates.open(config: config, environment: environment, logger: logger),
                                   logger: logger)
        sink?.countDroppedLines(in: CoreMetrics.Counter(label: "latchkey_log_lines_dropped_total", factory: metrics))
        // One HTTP client for the control plane: token requests and handoff calls.
        let client = try RuntimeServices.client(for: config, running: nil)
        let identities = try services.identities(for: config, store: tokenStore, client: client)
        // Before any identity restores a token: its secret captures are masked from the first line.
        services.redaction.follow(identities)
        sink?.redact(services.redaction)
        // A certificate that does not load stops the start, before any socket is bound.
        certificates = try ListenerCertificates(config: config, logger: logger, environment: environment)
        var sockets: [ListeningSocket] = []
        for (index, listener) in config.listeners.enumerated() {
            do {
                sockets.append(try ListeningSocket(address: listener.address.socketAddress, index: index, tls: certificates.listeners[index]))
            } catch {
                throw RuntimeError("cannot listen on \(listener.address) (listener \(listener.name)): \(error)")
            }
        }
        self.sockets = sockets
        listeners = sockets.map(\.info)

        let running = services.running(config: config, identities: identities, tokenStore: OpenTokenStore(tokenStore, for: config),
                                       routeIdentities: routeIdentities,
                                       client: client, policies: try Self.policies(config, bound: listeners))
        self.running = Mutex(running)
        let context = running.context
        let settings = ConnectionSettings(config.limits)
        let count = config.server.resolvedLoops
        let connectionCount = ConnectionCount()
        var loops: [EventLoopThread] = []
        for index in 0..<count {
            let sockets = self.sockets
            loops.append(try EventLoopThread(index: index) { loop in
                let handler = try ProxyHandler(loop: loop, context: context)
                let server = HTTPServer(loop: loop, settings: settings, handler: handler, connectionCount: connectionCount)
                for socket in sockets { try server.listen(on: socket) }
                loop.attach(handler)
                loop.attach(server)
            })
        }
        self.loops = loops
        StoreMetrics.observe(tokenStore, factory: metrics)
        watcher = FileWatcher(checks: Self.fileChecks(for: running, services: services, certificates: certificates))
        identities.start()
    }

    /// Each listener's checks. `previous`: the running policies, in the same order (a reload
    /// keeps the listeners as they are), whose session gates hand their redeemed links on.
    static func policies(_ config: Config, bound: [ListenerInfo], previous: [ListenerPolicy] = []) throws -> [ListenerPolicy] {
        var policies: [ListenerPolicy] = []
        for (index, (listener, info)) in zip(config.listeners, bound).enumerated() {
            do {
                policies.append(try ListenerPolicy(config: listener, bound: info.boundAddress,
                                                   previous: previous.indices.contains(index) ? previous[index] : nil))
            } catch {
                throw RuntimeError("listener \(listener.name): \(error.detail)")
            }
        }
        return policies
    }

    /// Gives every loop `context` for its new requests and `settings` for its connections,
    /// each on its own loop, and returns once all have them.
    func install(_ context: ProxyContext, settings: ConnectionSettings) {
        let installed = DispatchGroup()
        for loop in loops {
            installed.enter()
            loop.handle.execute { loop in
                loop.attachment(ProxyHandler.self)?.context = context
                loop.attachment(HTTPServer.self)?.update(settings: settings)
                installed.leave()
            }
        }
        installed.wait()
    }

    /// From now on, the file watcher checks `running`'s files.
    func watchFiles(of running: RunningConfiguration) {
        watcher.watch(Self.fileChecks(for: running, services: services, certificates: certificates))
    }

    /// The secret files and the rest of `running`'s (RuntimeServices), and the TLS listeners'.
    private static func fileChecks(for running: RunningConfiguration, services: RuntimeServices,
                                   certificates: ListenerCertificates) -> [FileWatcher.Check] {
        services.fileChecks(for: running) + [{ certificates.check() }] + (services.interception.map { interception in [{ interception.check() }] } ?? [])
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
        let running = running.withLock { $0 }
        running.identities.shutdown()
        running.client?.shutdown()
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
    init(_ limits: Limits) {
        self.init(
            http: HTTPLimits(
                maxRequestLineBytes: limits.maxRequestLineBytes,
                maxHeaderBytes: limits.maxHeaderBytes,
                maxHeaderCount: limits.maxHeaderCount
            ),
            headTimeout: limits.headTimeout,
            idleTimeout: limits.idleTimeout,
            bodyTimeout: limits.bodyTimeout,
            tunnelIdleTimeout: limits.tunnelIdleTimeout,
            upgradeIdleTimeout: limits.upgradeIdleTimeout,
            // The cap is for the process: the loops' servers share one count.
            maxConnections: limits.maxConnections,
            maxRequestBodyBytes: limits.maxRequestBodyBytes
        )
    }
}
