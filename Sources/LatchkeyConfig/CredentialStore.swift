#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyLogging
import LatchkeyLoop
import Logging
import Synchronization

/// One secret the proxy holds: a credential, or a listener's inbound shared secret or proxy
/// password.
public struct SecretEntry: Sendable, Equatable {
    /// The credential's name, `Config.inboundSecretName(listener:)` or
    /// `Config.proxyAuthSecretName(listener:)`.
    public var name: String
    public var source: SecretSource
    /// Where it is configured, for messages: `credentials.github`.
    public var configPath: String

    public init(name: String, source: SecretSource, configPath: String) {
        self.name = name
        self.source = source
        self.configPath = configPath
    }
}

/// The secret values at one moment. Immutable: the hot path takes one per request from
/// `CredentialStore.snapshot` and reads it without further locking.
public final class CredentialSnapshot: Sendable {
    /// Increases by one each time a value changes.
    public let generation: UInt64
    public let values: [String: String]
    /// Every distinct value, for log redaction.
    public let redactionMask: SecretMask
    /// `values`, for the requests' lookups.
    private let table: StringTable<String>

    public init(generation: UInt64, values: [String: String]) {
        self.generation = generation
        self.values = values
        redactionMask = SecretMask(values.values)
        table = StringTable(values)
    }

    /// Every distinct non-empty value, longest first.
    public var redactionValues: [String] { redactionMask.values }

    public subscript(name: String) -> String? { table[name] }
}

/// What one reload pass found.
public struct CredentialReload: Sendable, Equatable {
    /// Names whose value changed, sorted.
    public var changed: [String]
    /// Names whose file could not be read this time (the last good value stays in use),
    /// with the reason; never the value.
    public var failures: [String: String]
}

/// Holds the resolved secrets and re-reads `file:` sources when they change.
///
/// Readers call `snapshot` (a lock held for one reference copy). One background timer calls
/// `reloadIfChanged()` every second or so; the file reads happen under a separate lock, so
/// readers never wait for I/O. A configuration reload `replace`s the whole set: the store
/// stays the one object that identities and the log's redaction hold.
public final class CredentialStore: Sendable {
    fileprivate struct WatchedFile: Sendable {
        var name: String
        var path: String
        var signature: FileSignature?
        var value: String
        /// Read again on the next pass even if the signature is the same.
        var recheck: Bool
        /// The last failure, to log a problem once rather than every second.
        var failure: String?
    }

    /// The secrets of one configuration, every one resolved: what `replace(with:)` installs.
    public struct Resolved: Sendable {
        fileprivate var values: [String: String]
        fileprivate var files: [WatchedFile]
    }

    private let current: Mutex<CredentialSnapshot>
    /// Taken before `current` by whoever needs both: a reload's `replace` never comes
    /// between a file's read and its value's update.
    private let watched: Mutex<Watched>
    private let logger: Logger

    /// The files watched, and where the next pass starts among them.
    private struct Watched {
        var files: [WatchedFile]
        var next = 0
    }

    /// The files a pass stats at most, besides those that failed or changed too recently to
    /// trust: with more, each is checked every `count / filesPerPass` passes, so that
    /// 10,000 secret files cost an idle server a thousand stats a second, not ten thousand.
    private let filesPerPass: Int

    /// Resolves every entry; throws every one that cannot be resolved.
    public convenience init(
        entries: [SecretEntry],
        environment: [String: String] = ProcessInfo.processInfo.environment,
        sourceName: String = "config",
        logger: Logger = Logger(label: "latchkey.credentials")
    ) throws(ConfigErrors) {
        self.init(try Self.resolve(entries, environment: environment, sourceName: sourceName), logger: logger)
    }

    public init(_ resolved: Resolved, logger: Logger = Logger(label: "latchkey.credentials"), filesPerPass: Int = 1000) {
        precondition(filesPerPass > 0, "a pass checks at least one file")
        self.filesPerPass = filesPerPass
        self.current = Mutex(CredentialSnapshot(generation: 0, values: resolved.values))
        self.watched = Mutex(Watched(files: resolved.files))
        self.logger = logger
    }

    /// Reads every entry's value; throws every one that cannot be read, each as a problem at
    /// the entry's place in `sourceName`.
    public static func resolve(
        _ entries: [SecretEntry], environment: [String: String] = ProcessInfo.processInfo.environment, sourceName: String = "config"
    ) throws(ConfigErrors) -> Resolved {
        var values: [String: String] = [:]
        var files: [WatchedFile] = []
        var problems: [ConfigProblem] = []
        for entry in entries {
            // Stat before reading: a change between the two is then seen on the next pass.
            let signature: FileSignature? = if case .file(let path) = entry.source { FileSignature(path: path) } else { nil }
            do {
                let value = try SecretResolver.resolve(entry.source, environment: environment)
                values[entry.name] = value
                if case .file(let path) = entry.source {
                    files.append(WatchedFile(
                        name: entry.name, path: path, signature: signature, value: value,
                        recheck: signature?.isRecent ?? true
                    ))
                }
            } catch {
                problems.append(ConfigProblem(file: sourceName, path: entry.configPath, message: error.message))
            }
        }
        guard problems.isEmpty else { throw ConfigErrors(problems) }
        return Resolved(values: values, files: files)
    }

    /// Every credential and inbound secret of `config`.
    public convenience init(
        config: Config,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        sourceName: String = "config",
        logger: Logger = Logger(label: "latchkey.credentials")
    ) throws(ConfigErrors) {
        try self.init(entries: config.secretEntries, environment: environment, sourceName: sourceName, logger: logger)
    }

    /// The values now. Cheap: one lock round trip and a reference copy.
    public var snapshot: CredentialSnapshot {
        current.withLock { $0 }
    }

    public subscript(name: String) -> String? { snapshot[name] }

    /// Re-reads the files whose stat signature changed (or whose last read failed, or that
    /// changed too recently for the signature to be trusted), logs
    /// failures without values, and returns the names whose value changed.
    @discardableResult
    public func reloadIfChanged() -> [String] {
        reload().changed
    }

    /// Like `reloadIfChanged()`, also returning the files that could not be read. `now`:
    /// seconds since the epoch, for what counts as changed too recently to trust.
    public func reload(now: Int64 = FileSignature.now) -> CredentialReload {
        var updates: [String: String] = [:]
        var failures: [String: String] = [:]
        watched.withLock { watched in
            let count = watched.files.count
            let start = watched.next < count ? watched.next : 0
            let checked = min(count, filesPerPass)
            watched.next = start + checked
            for index in watched.files.indices {
                let file = watched.files[index]
                // The files from `start` on, wrapping round, are this pass's.
                let inTurn = (index >= start ? index - start : index + count - start) < checked
                if !inTurn, file.failure == nil, !file.recheck { continue }
                let signature = FileSignature(path: file.path)
                if let signature, signature == file.signature, file.failure == nil, !file.recheck { continue }
                do throws(SecretError) {
                    guard let signature else {
                        throw SecretError("cannot stat \(file.path)")
                    }
                    let value = try SecretResolver.resolve(.file(file.path), environment: [:])
                    watched.files[index].signature = signature
                    watched.files[index].recheck = signature.isRecent(at: now)
                    if file.failure != nil {
                        watched.files[index].failure = nil
                        logger.notice("credential file readable again", metadata: ["credential": "\(file.name)", "path": "\(file.path)"])
                    }
                    if value != file.value {
                        watched.files[index].value = value
                        updates[file.name] = value
                    }
                } catch {
                    failures[file.name] = error.message
                    watched.files[index].signature = nil
                    if file.failure != error.message {
                        watched.files[index].failure = error.message
                        logger.error(
                            "cannot reload credential file; keeping the last good value",
                            metadata: ["credential": "\(file.name)", "path": "\(file.path)", "error": "\(error.message)"]
                        )
                    }
                }
            }
            if !updates.isEmpty { update { $0.merging(updates) { $1 } } }
        }
        if !updates.isEmpty {
            for name in updates.keys.sorted() {
                logger.info("credential reloaded from its file", metadata: ["credential": "\(name)"])
            }
        }
        return CredentialReload(changed: updates.keys.sorted(), failures: failures)
    }

    /// A configuration reload: from now on the values are `resolved`'s, and its files are
    /// the ones watched. Names it lacks keep their value until `retain(only:)`: a loop that
    /// still routes by the previous configuration while the loops switch may need them.
    public func replace(with resolved: Resolved) {
        watched.withLock { watched in
            watched = Watched(files: resolved.files)
            update { $0.merging(resolved.values) { $1 } }
        }
    }

    /// Forgets the names `resolved` lacks, once no loop routes by the previous configuration.
    public func retain(only resolved: Resolved) {
        watched.withLock { _ in
            update { $0.filter { resolved.values[$0.key] != nil } }
        }
    }

    /// A new snapshot made from the current values.
    private func update(_ change: ([String: String]) -> [String: String]) {
        current.withLock { snapshot in
            snapshot = CredentialSnapshot(generation: snapshot.generation + 1, values: change(snapshot.values))
        }
    }
}

extension Config {
    /// The key under which a listener's inbound shared secret is held in a
    /// `CredentialStore`. The ':' keeps it apart from credential names, which cannot
    /// contain one.
    public static func inboundSecretName(listener: String) -> String {
        "inbound:" + listener
    }

    /// The key under which a forward listener's `inbound.proxy_auth` password is held in a
    /// `CredentialStore`: redacted from logs and re-read when its file changes, as the
    /// inbound shared secret is.
    public static func proxyAuthSecretName(listener: String) -> String {
        "proxy-auth:" + listener
    }

    /// The environment variables this configuration reads secrets from (`env:` sources):
    /// what a program Latchkey starts must not inherit.
    public var secretEnvironmentVariables: Set<String> {
        Set(secretEntries.compactMap { entry in
            if case .environment(let name) = entry.source { name } else { nil }
        })
    }

    /// Every secret this configuration needs: its credentials, its identities' secrets, then
    /// its listeners' inbound shared secrets and proxy passwords.
    public var secretEntries: [SecretEntry] {
        var entries = credentials.keys.sorted().map { name in
            SecretEntry(name: name, source: credentials[name]!, configPath: "credentials.\(name)")
        }
        entries += identities.flatMap(\.secretEntries)
        for (index, listener) in listeners.enumerated() {
            if case .sharedSecret(_, let secret) = listener.inbound {
                entries.append(SecretEntry(
                    name: Self.inboundSecretName(listener: listener.name), source: secret,
                    configPath: "listeners[\(index)].inbound.shared_secret"
                ))
            }
            if let secret = listener.proxyAuth {
                entries.append(SecretEntry(
                    name: Self.proxyAuthSecretName(listener: listener.name), source: secret,
                    configPath: "listeners[\(index)].inbound.proxy_auth"
                ))
            }
        }
        return entries
    }
}
