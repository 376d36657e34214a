/// One `name: value` line located in a byte buffer (RFC 9112 §5).
struct FieldLine {
    var name: Range<Int>
    /// Trimmed of leading and trailing SP/HTAB (RFC 9110 §5.5).
    var value: Range<Int>
    /// Where the line ends: the CR or LF that terminates it, or the end of the range given.
    var end: Int
    /// Where the next line starts: after the CRLF or LF, or the end of the range given.
    var next: Int
    /// Whether the value holds obs-text (bytes ≥ 0x80), so it needs UTF-8 validation.
    var valueHasNonASCII: Bool

    /// How to treat whitespace between the name and the colon.
    enum Strictness {
        /// Requests: RFC 9112 §5.1 says a server MUST reject it with 400.
        case request
        /// Responses: the same section says a proxy MUST remove it before forwarding.
        case response
    }

    /// Parses the line starting at `start` and ending at the first CRLF, at a LF (where the
    /// scanner let a bare one through, in a response head) or at `limit`.
    @inline(__always)
    static func parse(
        _ bytes: UnsafeRawBufferPointer,
        from start: Int,
        upTo limit: Int,
        _ strictness: Strictness
    ) throws(HTTPParseError) -> FieldLine {
        guard start < limit else { throw HTTPParseError(.invalidFieldName) }
        // RFC 9112 §5.2: a line starting with whitespace continues the previous one
        // (obs-fold). A server must reject it or unfold it; unfolding changes what a
        // field means to the next hop, so it is rejected.
        if ASCII.isWhitespace(bytes[start]) { throw HTTPParseError(.obsFold) }
        var index = start
        // Eight bytes at a time while they are letters, digits or "-", as names mostly are. A
        // load may reach past `limit` into the rest of the buffer; nothing past it is taken.
        while index + 8 <= bytes.count {
            let plain = ASCII.nameBytePrefix(ASCII.loadWord(bytes, index))
            index += plain
            guard plain == 8, index < limit else { break }
        }
        index = min(index, limit)
        while index < limit, ASCII.isTokenByte(bytes[index]) { index += 1 }
        let name = start..<index
        // A CR not followed by LF where a name or colon belongs is a bare CR, which the
        // scanner leaves to the parsers.
        func badName(at index: Int) -> HTTPParseError {
            let bareCR = index < limit && bytes[index] == ASCII.cr && !(index + 1 < limit && bytes[index + 1] == ASCII.lf)
            return HTTPParseError(bareCR ? .invalidLineEnding : .invalidFieldName)
        }
        guard !name.isEmpty, index < limit else { throw badName(at: index) }
        if ASCII.isWhitespace(bytes[index]) {
            var afterSpace = index
            while afterSpace < limit, ASCII.isWhitespace(bytes[afterSpace]) { afterSpace += 1 }
            guard afterSpace < limit, bytes[afterSpace] == ASCII.colon else { throw badName(at: afterSpace) }
            if strictness == .request { throw HTTPParseError(.whitespaceBeforeColon) }
            index = afterSpace
        }
        guard bytes[index] == ASCII.colon else { throw badName(at: index) }
        index += 1
        while index < limit, ASCII.isWhitespace(bytes[index]) { index += 1 }
        let valueStart = index
        var nonASCII = false
        // The value runs to the CR; every byte on the way must be a field-value byte.
        scan: while true {
            // Eight bytes at a time to the first that is not SP or visible ASCII. A load
            // may reach past `limit` into the rest of the buffer; nothing past it is taken.
            while index + 8 <= bytes.count {
                let plain = ASCII.plainVisiblePrefix(ASCII.loadWord(bytes, index))
                index += plain
                guard plain == 8, index < limit else { break }
            }
            guard index < limit else {
                index = limit
                break
            }
            let byte = bytes[index]
            switch byte {
            case 0x20...0x7E, ASCII.htab:
                index += 1
            case 0x80...0xFF:
                nonASCII = true
                index += 1
            case ASCII.cr:
                // RFC 9112 §2.2: a CR is only ever the start of a line's CRLF.
                guard index + 1 >= limit || bytes[index + 1] == ASCII.lf else { throw HTTPParseError(.invalidLineEnding) }
                break scan
            case ASCII.lf:
                break scan
            default:
                throw HTTPParseError(.invalidFieldValue)
            }
        }
        var valueEnd = index
        while valueEnd > valueStart, ASCII.isWhitespace(bytes[valueEnd - 1]) { valueEnd -= 1 }
        let next = index == limit ? limit : index + (bytes[index] == ASCII.cr ? 2 : 1)
        return FieldLine(name: name, value: valueStart..<valueEnd, end: index, next: next, valueHasNonASCII: nonASCII)
    }

    /// Calls `body` with each field line of `region`, a run of lines the scanner has
    /// checked to end in CRLF (or in a bare LF, where it let one through: a response's).
    /// Inlined, so that the caller's handling of each line is too: called through the
    /// closure, a response head cost some 200 instructions more.
    @inline(__always)
    static func forEach(in bytes: UnsafeRawBufferPointer, _ region: Range<Int>, _ strictness: Strictness,
                        _ body: (FieldLine) throws(HTTPParseError) -> Void) throws(HTTPParseError) {
        var lineStart = region.lowerBound
        while lineStart < region.upperBound {
            let line = try parse(bytes, from: lineStart, upTo: region.upperBound, strictness)
            try body(line)
            lineStart = line.next
        }
    }

    /// Indexes the field in `fields`, whose `section` holds the bytes of the section this
    /// line is in (`HTTPFields.storeSection`). A request's value must be valid UTF-8:
    /// replacing invalid bytes would forward something other than what was sent. An
    /// upstream's Latin-1 bytes are kept and forwarded as they came (`HTTPFields.value(at:)`
    /// repairs them for a reader) rather than failing its response.
    func append(to fields: inout HTTPFields, _ section: HTTPFields.StoredSection, from bytes: UnsafeRawBufferPointer,
                _ known: FieldName, _ strictness: Strictness) throws(HTTPParseError) {
        if valueHasNonASCII, strictness == .request, ASCII.validatedString(bytes, value) == nil {
            throw HTTPParseError(.invalidFieldValue)
        }
        // `name: value` and CRLF, as the encoder would write it: the line goes out as it
        // came. Other spacing (none after the colon, some before it or after the value) and a
        // bare LF's end are written anew.
        let asWritten = value.lowerBound == name.upperBound + 2 && bytes[name.upperBound] == ASCII.colon
            && bytes[name.upperBound + 1] == ASCII.sp && end == value.upperBound && next == end + 2
        fields.indexParsed(section, name: name, value: value, known: known, asWritten: asWritten)
    }

    /// The field with its name and value as strings, for a response line read on its own;
    /// an upstream's Latin-1 bytes are repaired rather than failing its response.
    func responseField(in bytes: UnsafeRawBufferPointer) -> HTTPField {
        HTTPField(name: ASCII.string(bytes, name), value: ASCII.string(bytes, value))
    }
}

extension HTTPFields {
    /// The fields of `region` of `bytes`, a section the scanner has checked (a response's
    /// head, a trailer section), each line read as `strictness` says; room is made for
    /// `fieldCount` fields, which the scanner counted or a head usually has.
    init(parsing bytes: UnsafeRawBufferPointer, _ region: Range<Int>, fieldCount: Int,
         _ strictness: FieldLine.Strictness) throws(HTTPParseError) {
        var fields = HTTPFields()
        let section = fields.storeSection(bytes, region, fields: fieldCount)
        try FieldLine.forEach(in: bytes, region, strictness) { (line: FieldLine) throws(HTTPParseError) in
            try line.append(to: &fields, section, from: bytes, FieldName.classify(bytes, line.name), strictness)
        }
        self = fields
    }
}
