import ArgumentParser
import Foundation
import Latchkey
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyLogging
import LatchkeyLoop
import LatchkeySystem
import LatchkeyUpstream
import Logging

/// `latchkey exec -- COMMAND`: runs the proxy in this process with a forward listener on a
/// free loopback port, then COMMAND with the proxy and Latchkey's CA in its environment and
/// no credential anywhere it can see; exits with COMMAND's status.
struct ExecCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exec",
        abstract: "Run a command whose HTTP and HTTPS calls get the credentials attached.",
        discussion: """
            The command runs with HTTPS_PROXY and HTTP_PROXY (both cases) naming a forward \
            proxy on 127.0.0.1 with a password made for this run, NO_PROXY for the local \
            addresses, and the trust variables (SSL_CERT_FILE, REQUESTS_CA_BUNDLE, \
            CURL_CA_BUNDLE, GIT_SSL_CAINFO, AWS_CA_BUNDLE, CARGO_HTTP_CAINFO, DENO_CERT: the \
            system's roots plus Latchkey's CA; NODE_EXTRA_CA_CERTS: the CA alone; \
            NODE_USE_ENV_PROXY=1), each replacing the parent's. Requests to a host a route \
            names get that route's credentials (HTTPS calls are intercepted with a \
            certificate from Latchkey's CA); hosts under a forward listener's tunnel: pass \
            through untouched; every other host is refused. When some route names no host, \
            LATCHKEY_URL is the base URL of a reverse listener for programs that take one. \
            The configuration's own listeners are not opened. Environment variables the \
            configuration reads secrets from are not passed on. SIGINT, SIGTERM and SIGHUP \
            reach the command; when it exits, requests in flight finish and exec exits with \
            its status (128+N if signal N ended it).
            """
    )

    @Option(name: .long, help: "The YAML configuration file: its routes, identities and credentials.")
    var config: String?

    @Option(name: .customLong("host"), help: "Quick start: a host whose requests get the headers (repeatable).")
    var hosts: [String] = []

    @Option(name: .long, help: "Quick start: where the hosts' requests go (default: https://HOST).")
    var upstream: String?

    @OptionGroup var attach: QuickStartHeaders

    @Option(name: .customLong("tunnel"), help: "A host (or *.domain) passed through untouched, no credentials added (repeatable).")
    var tunnels: [String] = []

    @Flag(name: .long, help: "Print the variables the command would get (the proxy password masked) and run nothing.")
    var printEnv = false

    @Option(name: .long, help: "Log level on standard error (default: warning).")
    var logLevel: String = "warning"

    @Flag(name: .long, help: "Log one line per request on standard error.")
    var accessLog = false

    @Argument(parsing: .postTerminator, help: "The command and its arguments, after --.")
    var command: [String] = []

    func validate() throws {
        let quickStart = !hosts.isEmpty || upstream != nil || !attach.isEmpty
        if config != nil && quickStart {
            throw ValidationError("--config cannot be combined with the quick-start flags (--host, --upstream, --header, --bearer-token-file).")
        }
        if config == nil && hosts.isEmpty { throw ValidationError("give --config FILE, or --host HOST for a quick start.") }
        if command.isEmpty && !printEnv { throw ValidationError("give the command to run after --, e.g. latchkey exec --config FILE -- ./report.sh") }
        if Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError("--log-level takes one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
    }

    func run() throws {
        ProcessSignals.prepare(also: [ExecSupervision.childEnded])
        // What the command may inherit: what exec itself was given, nothing it opens.
        let inherited = OpenDescriptors.current()
        initializeCurlGlobally()

        let loaded = try loadConfig()
        let secret = try SecureRandom.urlSafeString()
        var config = loaded.forExec(proxySecret: secret, tunnel: try tunnelPatterns())
        config.logging.level = logLevel
        config.logging.accessLog = accessLog
        let environment = ProcessInfo.processInfo.environment
        let (caPath, bundlePath) = try trust(config: config, environment: environment)
        let withheld = loaded.secretEnvironmentVariables.union([StoreKey.environmentVariable])

        if printEnv {
            let child = ChildEnvironment(proxyURL: "http://latchkey:\(secret)@127.0.0.1:PORT",
                                         reverseURL: config.listeners.count > 1 ? "http://127.0.0.1:PORT" : nil,
                                         bundlePath: bundlePath, caPath: caPath, withheld: withheld)
            for line in child.printed(masking: secret) { print(line) }
            say("(the ports are picked when the command runs)")
            return
        }

        let sink = config.logging.bootstrap()
        let logger = Logger(label: "latchkey")
        let runtime = try ProxyLaunch(config: config, source: self.config ?? Config.commandLineSource, sink: sink, logger: logger).runtime
        // However the command ends: requests in flight finish, then the ports close.
        defer { runtime.shutdown() }
        let child = ChildEnvironment(proxyURL: "http://latchkey:\(secret)@\(runtime.listeners[0].boundAddress)",
                                     reverseURL: runtime.listeners.dropFirst().first.map { "http://\($0.boundAddress)" },
                                     bundlePath: bundlePath, caPath: caPath, withheld: withheld)
        inherited.closeOnExecAllButThese()
        let process: ChildProcess
        do {
            process = try ChildProcess(command, environment: child.variables(inheriting: environment),
                                       defaultSignals: [SIGPIPE] + ProcessSignals.termination + [ExecSupervision.childEnded])
        } catch {
            say("Error: cannot run \(command[0]): \(error)")
            // As env(1) and timeout(1) say it: 127 for a command not found, 126 for one that
            // cannot be run.
            throw ExitCode(error.errno == ENOENT ? 127 : 126)
        }
        throw ExitCode(try wait(for: process).code)
    }

    /// Passes signals on until the command ends.
    private func wait(for process: ChildProcess) throws -> ProgramExit {
        let signals = try SignalReader(ProcessSignals.termination + [ExecSupervision.childEnded])
        // A command that ended before the reader existed left its SIGCHLD pending: read now.
        while true {
            if let status = try process.reap() { return status }
            let signal = try signals.nextSignal()
            switch ExecSupervision.action(for: signal, childSharesProcessGroup: process.sharesProcessGroup) {
            case .forward(let number): process.send(number)
            case .reap, .ignore: break
            }
        }
    }

    /// The CA the intercepted tunnels' certificates come from, made if there is none, and
    /// the bundle of the system's roots with it: the roots of the parent's SSL_CERT_FILE
    /// when it names a file that can be read (the roots it chose), else the system's.
    private func trust(config: Config, environment: [String: String]) throws -> (ca: String, bundle: String) {
        var environment = environment
        if let roots = environment["SSL_CERT_FILE"], !roots.isEmpty, !FileSystem.isReadable(roots) {
            say("warning: SSL_CERT_FILE names \(roots), which cannot be read: the command trusts the system's roots and Latchkey's CA")
            environment["SSL_CERT_FILE"] = nil
        }
        do throws(LocalCAError) {
            let ca = try LocalCA.open(config: config, environment: environment, now: Date())
            let store = if let own = ca.store { own } else { try LocalCA.store(config: config, environment: environment) }
            return (ca.certificatePath, try store.writeBundleForExec(authority: ca.authority.certificate, environment: environment))
        } catch {
            throw CommandFailure("the local certificate authority: \(error)")
        }
    }

    private func loadConfig() throws -> Config {
        do {
            if let path = config { return try ConfigLoader.load(path: path, options: .init(warn: { say("warning: \($0)") })) }
            return try Config.quickStart(hosts: hosts, upstream: upstream, headers: attach.headers, bearerTokenFile: attach.bearerTokenFile)
        } catch {
            throw CommandFailure(error.description)
        }
    }

    private func tunnelPatterns() throws -> [HostPattern] {
        do {
            return try Config.tunnelPatterns(tunnels)
        } catch {
            throw CommandFailure(error.description)
        }
    }
}
