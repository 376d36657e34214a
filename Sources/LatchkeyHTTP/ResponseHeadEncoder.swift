/// Serialises a response head: `HTTP/1.1 200 OK\r\nName: value\r\n…\r\n` (RFC 9112 §4, §5).
public enum ResponseHeadEncoder {
    /// Appends the status line, the fields and the empty line to `buffer`. The fields are
    /// written as `FieldSectionEncoder` does, the last guard against response splitting. A
    /// `status` outside 100…999 is written as 500.
    public static func encode(status: Int, fields: HTTPFields, into buffer: inout [UInt8]) {
        let code = (100...999).contains(status) ? status : 500
        buffer.reserveCapacity(buffer.count + 17 + 32 + FieldSectionEncoder.estimate(fields))
        append("HTTP/1.1 ", to: &buffer)
        buffer.append(ASCII.zero + UInt8(code / 100))
        buffer.append(ASCII.zero + UInt8(code / 10 % 10))
        buffer.append(ASCII.zero + UInt8(code % 10))
        buffer.append(ASCII.sp)
        append(HTTPStatus.reasonPhrase(code), to: &buffer)
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
        FieldSectionEncoder.append(fields, to: &buffer)
    }

    /// The text's bytes in one copy.
    private static func append(_ text: StaticString, to buffer: inout [UInt8]) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }
}

/// Serialises a request head for an upstream Latchkey writes to itself (an Upgrade
/// handshake): `GET /path HTTP/1.1\r\nName: value\r\n…\r\n` (RFC 9112 §3, §5).
public enum RequestHeadEncoder {
    /// Appends the request line, the fields and the empty line to `buffer`; false, with
    /// nothing appended, when `method` is not a token or `target` holds a byte outside
    /// visible ASCII (the request line cannot be repaired the way a field value can).
    public static func encode(method: String, target: String, fields: HTTPFields, into buffer: inout [UInt8]) -> Bool {
        var method = method, target = target
        // Over the strings' bytes in place: iterating their UTF-8 views cost more than the
        // rest of the head.
        return method.withUTF8 { method in
            target.withUTF8 { target in
                guard !method.isEmpty, method.allSatisfy(ASCII.isTokenByte),
                      !target.isEmpty, target.allSatisfy({ $0 > ASCII.sp && $0 < 0x7F }) else { return false }
                buffer.reserveCapacity(buffer.count + method.count + target.count + 12 + FieldSectionEncoder.estimate(fields))
                buffer.append(contentsOf: method)
                buffer.append(ASCII.sp)
                buffer.append(contentsOf: target)
                buffer.append(contentsOf: versionAndLineEnd)
                FieldSectionEncoder.append(fields, to: &buffer)
                return true
            }
        }
    }

    private static let versionAndLineEnd: [UInt8] = Array(" HTTP/1.1\r\n".utf8)
}

/// The field lines and the empty line that end a head, for both encoders. Fields reach this
/// point from clients, upstreams and our own code, so it is the last guard against message
/// splitting: a field whose name is not a token is left out, and CR, LF, NUL or any other
/// control byte in a value (HTAB excepted) is written as a space.
enum FieldSectionEncoder {
    static func estimate(_ fields: HTTPFields) -> Int {
        fields.lines.count - fields.deadBytes + 2
    }

    static func append(_ fields: HTTPFields, to buffer: inout [UInt8]) {
        fields.lines.withUnsafeBufferPointer { lines in
            // Lines stored one after another go out in one copy: a whole section that was
            // parsed and forwarded without change is one run.
            var run = 0..<0
            for entry in fields.entries {
                guard entry.sendsAsStored else {
                    buffer.append(contentsOf: UnsafeBufferPointer(rebasing: lines[run]))
                    run = 0..<0
                    appendCleaned(entry, of: lines, to: &buffer)
                    continue
                }
                let line = entry.lineRange
                if run.upperBound == line.lowerBound && !run.isEmpty {
                    run = run.lowerBound..<line.upperBound
                } else {
                    buffer.append(contentsOf: UnsafeBufferPointer(rebasing: lines[run]))
                    run = line
                }
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: lines[run]))
        }
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
    }

    /// A line not sent as stored: written anew as `name: value`, or, when the last guard
    /// must change it, left out for a name that is not a token, its value's control bytes
    /// written as spaces.
    private static func appendCleaned(_ entry: HTTPFields.Entry, of lines: UnsafeBufferPointer<UInt8>,
                                      to buffer: inout [UInt8]) {
        let name = lines[entry.nameRange]
        guard !name.isEmpty, name.allSatisfy(ASCII.isTokenByte) else { return }
        buffer.append(contentsOf: name)
        buffer.append(ASCII.colon)
        buffer.append(ASCII.sp)
        for byte in lines[entry.valueRange] { buffer.append(ASCII.isFieldValueByte(byte) ? byte : ASCII.sp) }
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
    }
}
