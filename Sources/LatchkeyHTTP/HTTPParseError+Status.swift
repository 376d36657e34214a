extension HTTPParseError {
    /// The status to answer with: the one place a decoding error becomes an HTTP status.
    public var status: Int {
        switch code {
        case .requestLineTooLong: 414 // RFC 9112 §3, RFC 9110 §15.5.15
        case .headersTooLarge, .tooManyHeaders: 431 // RFC 6585 §5
        case .unsupportedTransferEncoding: 501 // RFC 9112 §6.1
        case .unsupportedVersion: 505 // RFC 9110 §15.6.6
        // An upstream's response the proxy cannot read: RFC 9110 §15.6.3.
        case .badStatusLine, .truncatedResponse: 502
        case .badRequestLine, .invalidTarget, .invalidLineEnding, .invalidFieldName,
             .whitespaceBeforeColon, .invalidFieldValue, .obsFold, .missingHost, .multipleHost,
             .invalidHost, .invalidContentLength, .conflictingContentLength,
             .contentLengthWithTransferEncoding, .transferEncodingInHTTP10, .chunkedNotFinal,
             .badChunkSize, .invalidChunkExtension, .badChunkFraming:
            400
        }
    }
}

extension HTTPParseError: CustomStringConvertible {
    /// A fixed sentence per code: safe for logs and error bodies because it never quotes
    /// the request (whose fields may carry credentials).
    public var description: String {
        switch code {
        case .badRequestLine: "malformed request line"
        case .invalidTarget: "invalid request-target"
        case .requestLineTooLong: "request line too long"
        case .unsupportedVersion: "HTTP version not supported"
        case .invalidLineEnding: "line not terminated by CRLF"
        case .headersTooLarge: "header section too large"
        case .tooManyHeaders: "too many header fields"
        case .invalidFieldName: "invalid header field name"
        case .whitespaceBeforeColon: "whitespace between header field name and colon"
        case .invalidFieldValue: "invalid header field value"
        case .obsFold: "obsolete line folding in header section"
        case .missingHost: "missing Host header field"
        case .multipleHost: "more than one Host header field"
        case .invalidHost: "invalid Host header field"
        case .invalidContentLength: "invalid Content-Length"
        case .conflictingContentLength: "conflicting Content-Length values"
        case .contentLengthWithTransferEncoding: "both Content-Length and Transfer-Encoding"
        case .badStatusLine: "malformed response head"
        case .truncatedResponse: "response cut short"
        case .transferEncodingInHTTP10: "Transfer-Encoding in an HTTP/1.0 request"
        case .chunkedNotFinal: "Transfer-Encoding does not end in a single chunked"
        case .unsupportedTransferEncoding: "unsupported transfer coding"
        case .badChunkSize: "invalid chunk size"
        case .invalidChunkExtension: "invalid or oversized chunk extension"
        case .badChunkFraming: "chunk not terminated by CRLF"
        }
    }
}
