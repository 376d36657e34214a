#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import LatchkeyLoop
import LatchkeySystem
import LatchkeyTLS

/// The CA Latchkey makes for itself, kept in `<store directory>/ca/` (mode 0700):
/// `ca.pem` (0644, the certificate clients trust), `ca.key` (0600, sealed with the store
/// key when there is one) and `bundle.pem` (0644, the system's roots plus the CA, for
/// clients that take one CA file). Made on first use, valid a year, renewed with a new
/// key when less than 30 days remain. `latchkey ca rotate` beside a running `serve` is
/// serialised by the directory's lock file.
///
/// Every method blocks on file I/O: for the CLI, start-up and a watcher's own thread.
public final class LocalCAStore: Sendable {
    public static let directoryName = "ca"
    public static let lifetime = Duration.seconds(365 * 86_400)
    /// Renewal starts 30 days before the end: clients that copied the certificate have a
    /// month to take the new one from `ca.pem`.
    public static let renewalMargin: TimeInterval = 30 * 86_400

    public let directory: String
    public var certificatePath: String { directory + "/ca.pem" }
    public var keyPath: String { directory + "/ca.key" }
    public var bundlePath: String { directory + "/bundle.pem" }

    private let files: StoreDirectory
    private let lock: StoreLock
    private let storeKey: StoreKey?

    /// Opens `<storeDirectory>/ca`, creating it (and the store directory) with mode 0700.
    public init(storeDirectory: String, storeKey: StoreKey?) throws(LocalCAError) {
        do {
            files = try StoreDirectory(creating: storeDirectory + "/" + Self.directoryName)
            lock = try StoreLock(directory: files.path)
        } catch {
            throw LocalCAError(error)
        }
        directory = files.path
        self.storeKey = storeKey
    }

    /// What `loadOrMake` did.
    public enum Outcome: Sendable, Equatable {
        case loaded
        case made
        /// The old one had less than `renewalMargin` left.
        case renewed
    }

    /// The CA in the directory; a new one when there is none or the one there ends within
    /// `renewalMargin`.
    public func loadOrMake(now: Date) throws(LocalCAError) -> (authority: CertificateAuthority, outcome: Outcome) {
        try locked { () throws(LocalCAError) in
            guard let current = try read() else { return (try make(now: now), .made) }
            guard current.certificate.notAfter.timeIntervalSince(now) < Self.renewalMargin else { return (current, .loaded) }
            return (try make(now: now), .renewed)
        }
    }

    /// A new CA now, replacing the one there (clients must trust the new certificate).
    public func rotate(now: Date) throws(LocalCAError) -> CertificateAuthority {
        try locked { () throws(LocalCAError) in try make(now: now) }
    }

    /// The CA there, or nil when there is none yet.
    func read() throws(LocalCAError) -> CertificateAuthority? {
        guard FileSignature(path: certificatePath) != nil else { return nil }
        let certificate: Certificate
        do {
            certificate = try Certificate.chain(file: certificatePath, now: nil)[0]
        } catch {
            throw LocalCAError(error.message + "; run `latchkey ca rotate` to make a new CA")
        }
        let file: (bytes: [UInt8], status: FileStatus)?
        do throws(TokenStoreError) {
            file = try PrivateFile.read(keyPath, .certificateAuthorityKey)
        } catch {
            throw LocalCAError(error)
        }
        guard var bytes = file?.bytes else {
            throw LocalCAError("CA key file \(keyPath) is missing beside \(certificatePath); run `latchkey ca rotate` to make a new CA")
        }
        defer { StoreKey.wipe(&bytes) }
        let key = try LocalCAKeyFile.decode(bytes, path: keyPath, storeKey: storeKey)
        guard certificate.matches(key) else {
            throw LocalCAError("CA key file \(keyPath) does not belong to \(certificatePath); run `latchkey ca rotate` to make a new CA")
        }
        return CertificateAuthority(certificate: certificate, key: key)
    }

    /// Writes a new CA: the key first, so that a crash between the two leaves a
    /// certificate whose key is missing (reported), never a key that went unsaved.
    private func make(now: Date) throws(LocalCAError) -> CertificateAuthority {
        do {
            let authority = try CertificateAuthority.make(commonName: Self.commonName(), lifetime: Self.lifetime, now: now)
            var key = try LocalCAKeyFile.encode(authority.key, storeKey: storeKey)
            defer { StoreKey.wipe(&key) }
            try PrivateFile.replace(keyPath, in: directory, with: key)
            try PrivateFile.replace(certificatePath, in: directory, with: try authority.certificate.pem(), permissions: 0o644)
            return authority
        } catch let error as LocalCAError {
            throw error
        } catch let error as TLSError {
            throw LocalCAError(error)
        } catch let error as TokenStoreError {
            throw LocalCAError(error)
        } catch {
            throw LocalCAError("cannot make the local CA: \(error)")
        }
    }

    private func locked<T>(_ body: () throws(LocalCAError) -> T) throws(LocalCAError) -> T {
        let outcome: Result<T, LocalCAError>
        do throws(TokenStoreError) {
            outcome = try lock.exclusive { () throws(TokenStoreError) -> Result<T, LocalCAError> in
                do throws(LocalCAError) { return .success(try body()) } catch { return .failure(error) }
            }
        } catch {
            throw LocalCAError(error)
        }
        return try outcome.get()
    }

    /// "Latchkey local CA (<hostname>)", the host name cut so that the CN stays within 64
    /// characters (RFC 5280 ub-common-name).
    static func commonName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let host = gethostname(&buffer, buffer.count) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "localhost"
        return "Latchkey local CA (\(host.prefix(44)))"
    }
}
