#if canImport(Glibc)
import Glibc
#endif

/// Finds the end of a head (request line and field lines) or of a trailer section without
/// consuming it, checking line endings and limits on the way. Lines end in CRLF; a response
/// head's may end in a bare LF too (`acceptsBareLF`), as RFC 9112 §2.2 lets a recipient
/// accept and nginx and libcurl do.
///
/// The caller hands the same unconsumed bytes back with more appended, so the scanner keeps
/// its position and never looks at a byte twice: feeding a head one byte at a time costs
/// the same as feeding it whole. Every decision depends only on the bytes before the
/// position reached, in order, so any split of the input yields the same outcome.
struct FieldSectionScanner: Sendable, Equatable {
    enum Phase: Sendable, Equatable {
        /// Before a request line: RFC 9112 §2.2 asks servers to ignore at least one empty
        /// line there (clients sent a stray CRLF after a POST body); any number is skipped.
        case leadingEmptyLines
        /// Inside the request line that began at `start`.
        case requestLine(start: Int)
        case fieldLines
    }

    enum Outcome: Sendable, Equatable {
        case needMore
        /// The section is complete: it ends (CRLFCRLF or, for trailers without fields,
        /// CRLF included) at `end`.
        case complete(end: Int)
        case failure(HTTPParseError.Code)
    }

    /// The next byte to examine.
    private(set) var position = 0
    /// Where the line being scanned began.
    private(set) var lineStart = 0
    private(set) var phase: Phase
    /// Where the request line or (for trailers) the section began; limits count from here.
    private(set) var sectionStart = 0
    /// The request line, CRLF excluded, once it is complete.
    private(set) var requestLine: Range<Int> = 0..<0
    /// A response's first line: the status line, in the request line's place.
    var statusLine: Range<Int> { requestLine }
    /// Where the field lines start: after the request line's terminator.
    private var fieldsStart = 0
    /// The field lines, terminators included, up to the empty line that ends the section;
    /// once it is complete.
    private(set) var fieldLines: Range<Int> = 0..<0
    private(set) var fieldLineCount = 0
    let expectsRequestLine: Bool
    /// A bare LF ends a line as CRLF does (a response head); else it is refused.
    let acceptsBareLF: Bool

    /// A scanner for a head (with a request line) or a trailer section (without).
    init(expectingRequestLine: Bool, acceptingBareLF: Bool = false) {
        expectsRequestLine = expectingRequestLine
        acceptsBareLF = acceptingBareLF
        phase = expectingRequestLine ? .leadingEmptyLines : .fieldLines
    }

    /// Empty lines before the request line, which the decoder consumes as soon as it has
    /// seen them, so that a stray CRLF does not sit in the caller's buffer looking like a
    /// request in progress (and so that what stays unconsumed does not depend on how the
    /// input was split).
    var skippedBytes: Int {
        switch phase {
        case .leadingEmptyLines: lineStart
        case .requestLine(let start): start
        case .fieldLines: expectsRequestLine ? sectionStart : 0
        }
    }

    /// Moves every position back by `skippedBytes` once the caller has consumed them.
    mutating func dropSkippedBytes() {
        let skipped = skippedBytes
        guard skipped > 0 else { return }
        position -= skipped
        lineStart -= skipped
        sectionStart -= skipped
        switch phase {
        case .leadingEmptyLines: break
        case .requestLine(let start): phase = .requestLine(start: start - skipped)
        case .fieldLines:
            requestLine = (requestLine.lowerBound - skipped)..<(requestLine.upperBound - skipped)
            fieldsStart -= skipped
        }
    }

    mutating func scan(_ bytes: UnsafeRawBufferPointer, limits: HTTPLimits) -> Outcome {
        // The caller broke the contract (handed back fewer bytes than before): start over
        // rather than index past the end.
        if position > bytes.count { self = FieldSectionScanner(expectingRequestLine: expectsRequestLine, acceptingBareLF: acceptsBareLF) }
        let count = bytes.count
        var p = position
        defer { position = p }
        while p < count {
            // Only the LF that ends a line and the CR before it matter here: libc's memchr
            // finds the LF many bytes at a time. The parsers check every byte of a complete
            // section, and refuse a CR anywhere else.
            guard let lf = Self.firstLineFeed(in: bytes, from: p) else {
                // The line runs past what has come; a CR at the end may be its terminator's.
                let lineEnd = bytes[count - 1] == ASCII.cr ? count - 1 : count
                if lineEnd > lineStart {
                    beginRequestLine()
                    if let failure = checkLimits(at: lineEnd, limits) { return .failure(failure) }
                }
                p = count
                break
            }
            // The line's bytes are judged against the limits first, as they would have been
            // had the input stopped before its terminator: the outcome must not depend on
            // how the input was split.
            let terminatedByCRLF = lf > lineStart && bytes[lf - 1] == ASCII.cr
            let lineEnd = terminatedByCRLF ? lf - 1 : lf
            if lineEnd > lineStart {
                beginRequestLine()
                if let failure = checkLimits(at: lineEnd, limits) { return .failure(failure) }
            }
            // RFC 9112 §2.2: a bare LF is accepted as a line terminator in a response head
            // alone.
            guard terminatedByCRLF || acceptsBareLF else { return .failure(.invalidLineEnding) }
            p = lf + 1
            switch phase {
            case .leadingEmptyLines:
                lineStart = p
            case .requestLine(let start):
                if p - sectionStart > limits.maxHeaderBytes { return .failure(.headersTooLarge) }
                requestLine = start..<lineEnd
                phase = .fieldLines
                lineStart = p
                fieldsStart = p
            case .fieldLines:
                if p - sectionStart > limits.maxHeaderBytes { return .failure(.headersTooLarge) }
                if lineEnd == lineStart {
                    fieldLines = fieldsStart..<lineStart
                    return .complete(end: p)
                }
                fieldLineCount += 1
                if fieldLineCount > limits.maxHeaderCount { return .failure(.tooManyHeaders) }
                lineStart = p
            }
        }
        return .needMore
    }

    /// The first line with bytes before its terminator, while empty lines are skipped, is
    /// the request line.
    private mutating func beginRequestLine() {
        guard phase == .leadingEmptyLines else { return }
        phase = .requestLine(start: lineStart)
        sectionStart = lineStart
    }

    private static func firstLineFeed(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard let base = bytes.baseAddress, let found = memchr(base + start, Int32(ASCII.lf), bytes.count - start) else {
            return nil
        }
        return UnsafeRawPointer(found) - base
    }

    /// Which limit the bytes up to `position` break, if any. When both are broken the one
    /// broken first (the smaller) is reported, so the answer does not depend on how far
    /// the input reached when the check ran.
    private func checkLimits(at position: Int, _ limits: HTTPLimits) -> HTTPParseError.Code? {
        let size = position - sectionStart
        let inRequestLine = if case .requestLine = phase { true } else { false }
        guard size > limits.maxHeaderBytes || (inRequestLine && size > limits.maxRequestLineBytes) else {
            return nil
        }
        return inRequestLine && limits.maxRequestLineBytes <= limits.maxHeaderBytes ? .requestLineTooLong : .headersTooLarge
    }
}
