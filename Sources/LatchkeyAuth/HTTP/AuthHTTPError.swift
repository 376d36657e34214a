import LatchkeyUpstream

/// Why a control-plane request got no complete answer. `detail` never holds a URL, a
/// header value or body bytes (curl's text arrives already redacted by `UpstreamError`).
public struct AuthHTTPError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// Nothing listens there, or the connection was refused.
        case connectFailed
        case resolveFailed
        case tls
        /// A connect, first-byte or idle timeout, or the request's total timeout.
        case timeout
        /// The connection broke while sending or receiving.
        case connectionLost
        /// The response body is larger than the request's `maxResponseBytes`.
        case responseTooLarge
        /// The calling task was cancelled.
        case cancelled
        /// The client was shut down.
        case shutdown
        case other
    }

    public let code: Code
    public let detail: String

    public init(_ code: Code, detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { detail.isEmpty ? "\(code)" : "\(code): \(detail)" }
}

extension AuthHTTPError {
    init(_ error: UpstreamError) {
        let code: Code = switch error.code {
        // The auth client never guards destinations: an IdP is named by the configuration.
        case .connectFailed, .destinationRefused: .connectFailed
        case .resolveFailed: .resolveFailed
        case .tls: .tls
        case .connectTimeout, .firstByteTimeout, .idleTimeout: .timeout
        case .sendFailed, .receiveFailed: .connectionLost
        case .cancelled: .cancelled
        case .other: .other
        }
        self.init(code, detail: error.detail)
    }

    static let cancelled = AuthHTTPError(.cancelled, detail: "the request was cancelled")
    static let shutdown = AuthHTTPError(.shutdown, detail: "the HTTP client has been shut down")

    static func tooLarge(limit: Int) -> AuthHTTPError {
        AuthHTTPError(.responseTooLarge, detail: "the response body is larger than \(limit) bytes")
    }

    static func totalTimeout(_ timeout: Duration) -> AuthHTTPError {
        AuthHTTPError(.timeout, detail: "no complete response within \(timeout)")
    }
}
