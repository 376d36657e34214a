#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension TLSIdentity {
    /// The identity in `certFile` (PEM: the leaf, then its chain) and `keyFile` (PEM, closed
    /// to group and others), checked as a server would need it: every certificate within
    /// its validity period at `now`, the key belonging to the leaf. Each problem is a
    /// `TLSError` naming the file and what to fix.
    public static func load(certFile: String, keyFile: String, now: Date) throws(TLSError) -> TLSIdentity {
        try pair(chain: Certificate.chain(file: certFile, now: now), key: PrivateKey.load(file: keyFile), certFile: certFile, keyFile: keyFile)
    }

    /// The identity of a chain and a key read from the files named, or `.keyMismatch`.
    public static func pair(chain: [Certificate], key: PrivateKey, certFile: String, keyFile: String) throws(TLSError) -> TLSIdentity {
        guard chain[0].matches(key) else {
            throw TLSError(.keyMismatch, "key file \(keyFile) does not belong to the certificate in \(certFile) (\(chain[0].subject)); "
                + "give the key the certificate was issued for")
        }
        return TLSIdentity(chain: chain, key: key)
    }
}

extension Certificate {
    /// The certificates of the PEM file at `path`; with `now`, each must be within its
    /// validity period then (nil for CA files whose members are judged by their users).
    public static func chain(file path: String, now: Date?) throws(TLSError) -> [Certificate] {
        let file = try PEMFile(path: path, noun: "certificate file")
        let chain = try chain(pem: file.bytes, origin: "certificate file \(path)")
        if let now {
            for (index, certificate) in chain.enumerated() {
                try certificate.requireValid(at: now, in: path, position: index)
            }
        }
        return chain
    }

    /// Throws `.expired` or `.notYetValid` naming the file and the certificate.
    func requireValid(at now: Date, in path: String, position: Int) throws(TLSError) {
        let which = position == 0 ? "the certificate" : "certificate \(position + 1) of the chain"
        let subject = subject.isEmpty ? "" : " (\(subject))"
        if notAfter < now {
            throw TLSError(.expired, "certificate file \(path): \(which)\(subject) expired on \(Self.utc(notAfter)); renew it")
        }
        if notBefore > now {
            throw TLSError(.notYetValid, "certificate file \(path): \(which)\(subject) is not valid until \(Self.utc(notBefore)); check the clock or the certificate")
        }
    }

    /// How early `check` warns that a certificate is about to expire.
    public static let expiryWarningWindow: TimeInterval = 7 * 86_400

    /// A warning naming the file when the certificate ends within `expiryWarningWindow`
    /// of `now`; nil otherwise.
    public func expiryWarning(now: Date, file path: String) -> String? {
        guard notAfter.timeIntervalSince(now) < Self.expiryWarningWindow else { return nil }
        let subject = subject.isEmpty ? "" : " (\(subject))"
        return "certificate file \(path): the certificate\(subject) expires on \(Self.utc(notAfter)), within 7 days; renew it"
    }

    /// "2026-05-01T12:00:00Z".
    static func utc(_ date: Date) -> String {
        date.ISO8601Format()
    }
}

extension PrivateKey {
    /// Owner-only: a key others may read is refused, as ssh refuses its keys.
    public static let forbiddenPermissions: UInt32 = 0o077

    /// The key in the PEM file at `path`, which group and others must not be able to read
    /// or write (mode & 0o077 == 0).
    public static func load(file path: String) throws(TLSError) -> PrivateKey {
        var file = try PEMFile(path: path, noun: "key file")
        defer { file.wipe() }
        guard UInt32(file.permissions) & forbiddenPermissions == 0 else {
            throw TLSError(.notPrivate, "key file \(path) is accessible by others (mode 0\(String(file.permissions, radix: 8))); run chmod 600 \(path)")
        }
        return try load(pem: file.bytes, origin: "key file \(path)")
    }
}
