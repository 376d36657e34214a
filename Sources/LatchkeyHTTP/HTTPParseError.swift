/// Why a request could not be decoded. The caller answers with `status` and closes the
/// connection: after a framing error the position of the next request is unknown
/// (RFC 9112 §11.2), so the decoder stays failed.
public struct HTTPParseError: Error, Sendable, Equatable, Hashable {
    public enum Code: Sendable, Equatable, Hashable, CaseIterable {
        /// The request line is not `method SP request-target SP HTTP-version` (RFC 9112 §3).
        case badRequestLine
        /// The request-target is empty or holds a byte outside visible ASCII (RFC 9112 §3.2).
        case invalidTarget
        /// The request line is longer than `maxRequestLineBytes` (414).
        case requestLineTooLong
        /// A well-formed version other than HTTP/1.0 or HTTP/1.1 (505).
        case unsupportedVersion
        /// A CR not followed by LF, or an LF not preceded by CR, in a head or chunk line.
        /// RFC 9112 §2.2 allows a lone LF as a terminator; a proxy must not, since the next
        /// hop may disagree about where the line ends.
        case invalidLineEnding
        /// The head (or trailer section) is longer than `maxHeaderBytes` (431).
        case headersTooLarge
        /// More field lines than `maxHeaderCount` (431).
        case tooManyHeaders
        /// A field line without a colon, with an empty name, or with a byte outside tchar
        /// in its name (RFC 9110 §5.1).
        case invalidFieldName
        /// Whitespace between a field name and its colon (RFC 9112 §5.1: MUST reject).
        case whitespaceBeforeColon
        /// A control byte (NUL, CR, DEL, …) or invalid UTF-8 in a field value.
        case invalidFieldValue
        /// A field line starting with SP or HTAB (RFC 9112 §5.2: obsolete line folding).
        case obsFold
        /// An HTTP/1.1 request without `Host` (RFC 9112 §3.2).
        case missingHost
        /// More than one `Host` line (RFC 9112 §3.2).
        case multipleHost
        /// A `Host` value that is not `uri-host [ ":" port ]` (RFC 9112 §3.2).
        case invalidHost
        /// `Content-Length` that is not 1*DIGIT or does not fit in 64 bits (RFC 9110 §8.6).
        case invalidContentLength
        /// Several `Content-Length` values that differ (RFC 9112 §6.3 rule 5).
        case conflictingContentLength
        /// Both `Content-Length` and `Transfer-Encoding` (RFC 9112 §6.1: the classic
        /// smuggling vector; a proxy rejects rather than guesses).
        case contentLengthWithTransferEncoding
        /// `Transfer-Encoding` in an HTTP/1.0 request (RFC 9112 §6.1: framing is faulty).
        case transferEncodingInHTTP10
        /// `Transfer-Encoding` whose final coding is not a single `chunked`
        /// (RFC 9112 §6.3 rule 4: 400).
        case chunkedNotFinal
        /// A transfer coding other than `chunked` (RFC 9112 §6.1: 501).
        case unsupportedTransferEncoding
        /// A chunk size that is empty, not hex, longer than 16 digits, or followed by
        /// anything but CRLF or a chunk extension (RFC 9112 §7.1).
        case badChunkSize
        /// A control byte in a chunk extension, or more extension bytes than
        /// `maxChunkExtensionBytes`.
        case invalidChunkExtension
        /// Chunk data not followed by CRLF, or a chunk-size line not ended by CRLF.
        case badChunkFraming
        /// A response's first line is not `HTTP-version SP 3DIGIT [SP reason]` (RFC 9112
        /// §4), or a field line of a response head is malformed (ResponseDecoder).
        case badStatusLine
        /// A response ended before the length its framing promised (ResponseDecoder).
        case truncatedResponse
    }

    public let code: Code

    public init(_ code: Code) {
        self.code = code
    }
}
