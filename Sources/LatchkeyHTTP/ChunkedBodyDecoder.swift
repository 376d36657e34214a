/// The chunked transfer coding of a message body (RFC 9112 §7.1), one byte of framing at a
/// time so that any split of the input gives the same result.
///
///     chunked-body = *chunk last-chunk trailer-section CRLF
///     chunk        = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
///     chunk-ext    = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
///
/// A request's framing lines must end in CRLF: a lenient reading of a client's framing is
/// what request smuggling relies on. An upstream's may end in a bare LF, read as nginx and
/// libcurl read it: its body is framed anew for the client, so nothing downstream sees
/// the upstream's framing.
struct ChunkedBodyDecoder: Sendable {
    enum Phase: Sendable {
        case size
        /// Whitespace after the size: only a chunk extension may follow.
        case sizeWhitespace
        /// After the `;` of a chunk extension, up to CRLF.
        case chunkExtension
        /// After the CR that ends a chunk-size line.
        case sizeLF
        case data
        case dataCR
        case dataLF
        /// Boxed: inline, the scanner would make every request decoder, idle ones
        /// included, 32 bytes larger for the rare request that sends trailer fields.
        indirect case trailers(FieldSectionScanner)
    }

    /// At most 16 hex digits: the size fits in 64 bits and a client cannot make us read an
    /// unbounded run of leading zeros.
    static let maxSizeDigits = 16

    var phase = Phase.size
    /// Whose body: a response's framing lines may end in a bare LF, and its trailer fields
    /// are read as a response's head fields are.
    let strictness: FieldLine.Strictness
    var size: UInt64 = 0
    var sizeDigits = 0
    var remaining: UInt64 = 0
    /// Chunk-extension bytes so far in this body, bounded by `maxChunkExtensionBytes`.
    var extensionBytes = 0

    init(_ strictness: FieldLine.Strictness) {
        self.strictness = strictness
    }

    private var acceptsBareLF: Bool { strictness == .response }

    mutating func decode(
        _ input: UnsafeRawBufferPointer,
        limits: HTTPLimits,
        trailers: inout HTTPFields
    ) -> RequestDecoder.Step {
        var index = 0
        let count = input.count
        func failure(_ code: HTTPParseError.Code) -> RequestDecoder.Step {
            RequestDecoder.Step(consumed: index, event: .error(HTTPParseError(code)))
        }
        while true {
            switch phase {
            case .data:
                guard index < count else { return RequestDecoder.Step(consumed: index, event: .needMore) }
                let length = Int(min(remaining, UInt64(count - index)))
                remaining -= UInt64(length)
                if remaining == 0 { phase = .dataCR }
                return RequestDecoder.Step(consumed: index + length, event: .body(index..<(index + length)))

            case .trailers(var scanner):
                let rest = UnsafeRawBufferPointer(rebasing: input[index...])
                switch scanner.scan(rest, limits: limits) {
                case .needMore:
                    phase = .trailers(scanner)
                    return RequestDecoder.Step(consumed: index, event: .needMore)
                case .failure(let code):
                    return failure(code)
                case .complete(let end):
                    do {
                        trailers = try HTTPFields(parsing: rest, scanner.fieldLines, fieldCount: scanner.fieldLineCount, strictness)
                    } catch {
                        return failure(error.code)
                    }
                    return RequestDecoder.Step(consumed: index + end, event: .end)
                }

            default:
                guard index < count else { return RequestDecoder.Step(consumed: index, event: .needMore) }
                if let code = framingByte(input[index], limits) { return failure(code) }
                index += 1
            }
        }
    }

    /// Advances over one byte of a chunk-size line or of the CRLF after chunk data.
    private mutating func framingByte(_ byte: UInt8, _ limits: HTTPLimits) -> HTTPParseError.Code? {
        switch phase {
        case .size:
            if let digit = ASCII.hexValue(byte) {
                guard sizeDigits < Self.maxSizeDigits else { return .badChunkSize }
                size = size << 4 | UInt64(digit)
                sizeDigits += 1
                return nil
            }
            // An empty size, or anything but CR, BWS or ";" after it ("-1", "0x10", "1 2").
            guard sizeDigits > 0 else { return .badChunkSize }
            switch byte {
            case ASCII.cr:
                phase = .sizeLF
                return nil
            case ASCII.lf where acceptsBareLF:
                return sizeLineEnded()
            case ASCII.sp, ASCII.htab: phase = .sizeWhitespace
            case ASCII.semicolon: phase = .chunkExtension
            default: return .badChunkSize
            }
            return countExtensionByte(limits)
        case .sizeWhitespace:
            switch byte {
            case ASCII.sp, ASCII.htab: break
            case ASCII.semicolon: phase = .chunkExtension
            default: return .badChunkSize // "5 \r\n": whitespace is only allowed before ";"
            }
            return countExtensionByte(limits)
        case .chunkExtension:
            if byte == ASCII.cr {
                phase = .sizeLF
                return nil
            }
            if byte == ASCII.lf, acceptsBareLF { return sizeLineEnded() }
            // Names, values and quoted strings are not interpreted, but they cannot hold
            // control bytes (RFC 9110 §5.6.2, §5.6.4): a bare LF here would end the line
            // for a lenient next hop.
            guard ASCII.isFieldValueByte(byte) else { return .invalidChunkExtension }
            return countExtensionByte(limits)
        case .sizeLF:
            guard byte == ASCII.lf else { return .badChunkFraming }
            return sizeLineEnded()
        case .dataCR:
            if byte == ASCII.lf, acceptsBareLF {
                phase = .size
                return nil
            }
            guard byte == ASCII.cr else { return .badChunkFraming }
            phase = .dataLF
            return nil
        case .dataLF:
            guard byte == ASCII.lf else { return .badChunkFraming }
            phase = .size
            return nil
        case .data, .trailers:
            preconditionFailure("not a framing phase")
        }
    }

    /// A chunk-size line ended: the chunk's data follows, or the trailer section after the
    /// last chunk.
    private mutating func sizeLineEnded() -> HTTPParseError.Code? {
        if size == 0 {
            phase = .trailers(FieldSectionScanner(expectingRequestLine: false, acceptingBareLF: acceptsBareLF))
        } else {
            remaining = size
            phase = .data
        }
        size = 0
        sizeDigits = 0
        return nil
    }

    private mutating func countExtensionByte(_ limits: HTTPLimits) -> HTTPParseError.Code? {
        extensionBytes += 1
        return extensionBytes > limits.maxChunkExtensionBytes ? .invalidChunkExtension : nil
    }
}
