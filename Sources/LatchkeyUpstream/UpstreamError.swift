import CCurlShims

/// Why a transfer failed. `detail` is curl's error text with anything URL-like removed; it
/// never contains header values.
public struct UpstreamError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable, CaseIterable {
        case connectFailed
        case resolveFailed
        case connectTimeout
        case firstByteTimeout
        case idleTimeout
        case tls
        case sendFailed
        /// The upstream reset or closed the connection mid-response (or sent nothing).
        case receiveFailed
        case cancelled
        /// The destination guard refused every address the host resolved to
        /// (`UpstreamOptions.refusesLocalDestinations`).
        case destinationRefused
        case other
    }

    public let code: Code
    public let detail: String

    public init(_ code: Code, detail: String) {
        self.code = code
        self.detail = detail
    }

    /// The caller answers 504 for these and 502 for the rest.
    public var isTimeout: Bool {
        switch code {
        case .connectTimeout, .firstByteTimeout, .idleTimeout: true
        default: false
        }
    }

    public var description: String { detail.isEmpty ? "\(code)" : "\(code): \(detail)" }
}

extension UpstreamError.Code {
    /// The one mapping from curl's result codes to ours. Meaningful only for codes other
    /// than CURLE_OK.
    init(curlCode code: CURLcode) {
        switch code {
        case CURLE_COULDNT_CONNECT:
            self = .connectFailed
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            self = .resolveFailed
        case CURLE_OPERATION_TIMEDOUT:
            // We set neither CURLOPT_TIMEOUT nor the low-speed limits: the only curl timeout
            // left is CURLOPT_CONNECTTIMEOUT_MS (resolve + connect + TLS handshake).
            self = .connectTimeout
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
             CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ENGINE_NOTFOUND,
             CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_USE_SSL_FAILED,
             CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR,
             CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT:
            self = .tls
        case CURLE_SEND_ERROR, CURLE_UPLOAD_FAILED, CURLE_READ_ERROR, CURLE_SEND_FAIL_REWIND:
            self = .sendFailed
        case CURLE_RECV_ERROR, CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING, CURLE_HTTP2,
             CURLE_HTTP2_STREAM:
            self = .receiveFailed
        case CURLE_ABORTED_BY_CALLBACK:
            self = .cancelled
        default:
            self = .other
        }
    }
}

extension UpstreamError {
    /// Builds the error for a finished curl transfer from its code and CURLOPT_ERRORBUFFER.
    init(curlCode code: CURLcode, errorBuffer: UnsafePointer<CChar>?) {
        var text = ""
        if let errorBuffer, errorBuffer.pointee != 0 {
            text = String(cString: errorBuffer)
        } else if let message = curl_easy_strerror(code) {
            text = String(cString: message)
        }
        self.init(Code(curlCode: code), detail: Self.redacted(text))
    }

    /// Drops every word that looks like a URL or carries a query (`://`, `?`, `=`, `@`):
    /// curl's messages name hosts and ports, but a URL may carry an api_key.
    static func redacted(_ text: String) -> String {
        var words: [Substring] = []
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            if word.contains("://") || word.contains("?") || word.contains("=") || word.contains("@") {
                words.append("[redacted]")
            } else {
                words.append(word)
            }
        }
        var result = words.joined(separator: " ")
        while result.last == "\n" || result.last == " " { result.removeLast() }
        return result
    }
}
