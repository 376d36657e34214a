/// What the fields of a request head say about its framing and connection, gathered while
/// the field lines are parsed (on bytes, before any string exists) and judged at the end.
struct HeadSemantics {
    var hostCount = 0
    var contentLength: UInt64?
    /// Values across all Content-Length lines; more than one means the field is rewritten.
    var contentLengthValueCount = 0
    var hasTransferEncoding = false
    var codingCount = 0
    var chunkedCount = 0
    var lastCodingIsChunked = false
    var hasUnknownCoding = false
    var connectionClose = false
    var connectionKeepAlive = false
    /// `Connection: upgrade` and an `Upgrade` field: the request may switch protocols.
    var connectionUpgrade = false
    var hasUpgrade = false
    var expectsContinue = false

    mutating func observe(_ kind: FieldName, _ bytes: UnsafeRawBufferPointer, _ value: Range<Int>) throws(HTTPParseError) {
        switch kind {
        case .host:
            hostCount += 1
            // RFC 9112 §3.2: more than one Host line is a 400.
            guard hostCount == 1 else { throw HTTPParseError(.multipleHost) }
            try Self.validateHost(bytes, value)
        case .contentLength:
            try observeContentLength(bytes, value)
        case .transferEncoding:
            hasTransferEncoding = true
            try ASCII.forEachListElement(bytes, value) { (coding: Range<Int>) throws(HTTPParseError) in
                codingCount += 1
                // RFC 9112 §7: coding names are case-insensitive. A parameter makes it a
                // coding we do not know.
                let isChunked = ASCII.equalsCaseInsensitive(bytes, coding, "chunked")
                if isChunked { chunkedCount += 1 } else { hasUnknownCoding = true }
                lastCodingIsChunked = isChunked
            }
        case .connection:
            try ASCII.forEachListElement(bytes, value) { (option: Range<Int>) throws(HTTPParseError) in
                if ASCII.equalsCaseInsensitive(bytes, option, "close") { connectionClose = true }
                if ASCII.equalsCaseInsensitive(bytes, option, "keep-alive") { connectionKeepAlive = true }
                if ASCII.equalsCaseInsensitive(bytes, option, "upgrade") { connectionUpgrade = true }
            }
        case .upgrade:
            hasUpgrade = true
        case .expect:
            try ASCII.forEachListElement(bytes, value) { (expectation: Range<Int>) throws(HTTPParseError) in
                if ASCII.equalsCaseInsensitive(bytes, expectation, "100-continue") { expectsContinue = true }
            }
        default:
            return
        }
    }

    /// RFC 9110 §8.6: Content-Length = 1*DIGIT. A line may repeat the value as a list
    /// (`5, 5`) and the field may appear more than once; all values must be equal. Empty
    /// list elements are refused here: a length is not a list of optional things.
    mutating func observeContentLength(_ bytes: UnsafeRawBufferPointer, _ value: Range<Int>) throws(HTTPParseError) {
        var start = value.lowerBound
        while true {
            var end = start
            while end < value.upperBound, bytes[end] != ASCII.comma { end += 1 }
            let element = ASCII.trimmed(bytes, start..<end)
            guard !element.isEmpty else { throw HTTPParseError(.invalidContentLength) }
            var length: UInt64 = 0
            for position in element {
                let byte = bytes[position]
                guard ASCII.isDigit(byte) else { throw HTTPParseError(.invalidContentLength) }
                let (times10, overflow1) = length.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte &- ASCII.zero))
                guard !overflow1, !overflow2 else { throw HTTPParseError(.invalidContentLength) }
                length = sum
            }
            if let previous = contentLength, previous != length {
                throw HTTPParseError(.conflictingContentLength)
            }
            contentLength = length
            contentLengthValueCount += 1
            guard end < value.upperBound else { return }
            start = end + 1
        }
    }

    /// RFC 9112 §3.2 / RFC 3986 §3.2.2: `uri-host [ ":" port ]`, which may be empty. Only
    /// the bytes an authority can hold are allowed (`ASCII.isAuthorityByte`).
    private static func validateHost(_ bytes: UnsafeRawBufferPointer, _ value: Range<Int>) throws(HTTPParseError) {
        for position in value where !ASCII.isAuthorityByte(bytes[position]) {
            throw HTTPParseError(.invalidHost)
        }
    }

    /// The verdict once every field line has been seen.
    func finish(version: HTTPVersion) throws(HTTPParseError) -> (framing: BodyFraming, keepAlive: Bool, expectsContinue: Bool, asksUpgrade: Bool) {
        // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400.
        if hostCount == 0, version == .http1_1 { throw HTTPParseError(.missingHost) }
        let framing: BodyFraming
        if hasTransferEncoding {
            // RFC 9112 §6.1: a sender must not send both; a proxy that picked one would
            // disagree with some next hop about where the body ends.
            if contentLength != nil { throw HTTPParseError(.contentLengthWithTransferEncoding) }
            // RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 means faulty framing.
            if version == .http1_0 { throw HTTPParseError(.transferEncodingInHTTP10) }
            // RFC 9112 §6.3 rule 4: chunked must be the final coding, applied once (§7).
            if chunkedCount > 1 || (chunkedCount == 1 && !lastCodingIsChunked) || codingCount == 0 {
                throw HTTPParseError(.chunkedNotFinal)
            }
            // RFC 9112 §6.1: a coding we do not understand is a 501.
            if hasUnknownCoding { throw HTTPParseError(.unsupportedTransferEncoding) }
            framing = .chunked
        } else if let contentLength {
            framing = .length(contentLength)
        } else {
            framing = .none
        }
        // RFC 9112 §9.3.
        let keepAlive = version == .http1_1 ? !connectionClose : connectionKeepAlive && !connectionClose
        // RFC 9110 §10.1.1: a 100-continue expectation in an HTTP/1.0 request is ignored.
        // RFC 9110 §7.8: Upgrade is an HTTP/1.1 field, meant only when Connection names it.
        return (framing, keepAlive, expectsContinue && version == .http1_1, hasUpgrade && connectionUpgrade && version == .http1_1)
    }
}
