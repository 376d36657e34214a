/// Why a certificate, key or TLS context could not be made. `message` names the file and
/// the problem (never what the file holds), ready for `check` and the log.
public struct TLSError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The file cannot be read (missing, permissions).
        case unreadable
        /// Not PEM, truncated, or no object of the kind expected.
        case malformed
        /// A private key that others can read.
        case notPrivate
        /// Outside its validity period.
        case expired
        case notYetValid
        /// The key does not belong to the certificate.
        case keyMismatch
        /// OpenSSL refused to build a context or a session.
        case setup
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
