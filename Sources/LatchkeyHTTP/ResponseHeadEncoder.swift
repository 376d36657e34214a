/// Serialises a response head: `HTTP/1.1 200 OK\r\nName: value\r\n…\r\n` (RFC 9112 §4, §5).
public enum ResponseHeadEncoder {
    /// Appends the status line, the fields and the empty line to `buffer`. The fields are
    /// written as `FieldSectionEncoder` does, the last guard against response splitting. A
    /// `status` outside 100…999 is written as 500.
    public static func encode(status: Int, fields: HTTPFields, into buffer: inout [UInt8]) {
        let code = (100...999).contains(status) ? status : 500
        let reason = HTTPStatus.reasonPhrase(code)
        // `HTTP/1.1 200 ` and the reason's CRLF.
        let statusLineBytes = 13 + reason.utf8CodeUnitCount + 2
        buffer.append(atMost: statusLineBytes + FieldSectionEncoder.maxBytes(fields)) { sink in
            sink.write("HTTP/1.1 ")
            sink.write(ASCII.zero + UInt8(code / 100))
            sink.write(ASCII.zero + UInt8(code / 10 % 10))
            sink.write(ASCII.zero + UInt8(code % 10))
            sink.write(ASCII.sp)
            sink.write(reason)
            sink.write(ASCII.cr)
            sink.write(ASCII.lf)
            FieldSectionEncoder.append(fields, to: &sink)
        }
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
                guard fitsRequestLine(method: method, target: target) else { return false }
                buffer.reserveCapacity(buffer.count + method.count + target.count + 12 + FieldSectionEncoder.estimate(fields))
                appendRequestLine(method: method, target: target, to: &buffer)
                FieldSectionEncoder.append(fields, to: &buffer)
                return true
            }
        }
    }

    /// A method that is a token and a target of visible ASCII: what a request line can
    /// hold (a request line cannot be repaired the way a field value can).
    static func fitsRequestLine(method: UnsafeBufferPointer<UInt8>, target: UnsafeBufferPointer<UInt8>) -> Bool {
        !method.isEmpty && method.allSatisfy(ASCII.isTokenByte) && !target.isEmpty && target.allSatisfy { $0 > ASCII.sp && $0 < 0x7F }
    }

    static func appendRequestLine<Sink: ByteSink & ~Copyable>(method: UnsafeBufferPointer<UInt8>, target: UnsafeBufferPointer<UInt8>,
                                                             to sink: inout Sink) {
        sink.write(UnsafeRawBufferPointer(method))
        sink.write(ASCII.sp)
        sink.write(UnsafeRawBufferPointer(target))
        sink.write(" HTTP/1.1\r\n")
    }
}

/// The field lines and the empty line that end a head, for all the encoders. Fields reach
/// this point from clients, upstreams and our own code, so it is the last guard against
/// message splitting: a field whose name is not a token is left out, and CR, LF, NUL or any
/// other control byte in a value (HTAB excepted) is written as a space.
enum FieldSectionEncoder {
    static func estimate(_ fields: HTTPFields) -> Int {
        fields.lineCount - fields.deadBytes + 2
    }

    /// The most `append` writes: the live lines as stored, and for each line written anew
    /// (`appendCleaned`) the `: ` and CRLF its stored bytes may lack.
    static func maxBytes(_ fields: HTTPFields) -> Int {
        estimate(fields) + 4 * fields.entryCount
    }

    static func append<Sink: ByteSink & ~Copyable>(_ fields: HTTPFields, to sink: inout Sink) {
        appendLines(fields, to: &sink)
        sink.write(ASCII.cr)
        sink.write(ASCII.lf)
    }

    /// The field lines without the empty line; those named in `removed` left out.
    static func appendLines<Sink: ByteSink & ~Copyable>(_ fields: HTTPFields, removing removed: HTTPFields.NameSet? = nil,
                                                       to sink: inout Sink) {
        fields.withLines { lines in
            // Lines stored one after another go out in one copy: a whole section that was
            // parsed and forwarded without change is one run.
            var run = 0..<0
            for index in 0..<fields.entryCount {
                let entry = fields.entry(at: index)
                if removed?.contains(entry, in: lines) == true { continue }
                guard entry.sendsAsStored else {
                    sink.write(UnsafeRawBufferPointer(rebasing: lines[run]))
                    run = 0..<0
                    appendCleaned(entry, of: lines, to: &sink)
                    continue
                }
                let line = entry.lineRange
                if run.upperBound == line.lowerBound && !run.isEmpty {
                    run = run.lowerBound..<line.upperBound
                } else {
                    sink.write(UnsafeRawBufferPointer(rebasing: lines[run]))
                    run = line
                }
            }
            sink.write(UnsafeRawBufferPointer(rebasing: lines[run]))
        }
    }

    /// A line not sent as stored: written anew as `name: value`, or, when the last guard
    /// must change it, left out for a name that is not a token, its value's control bytes
    /// written as spaces.
    private static func appendCleaned<Sink: ByteSink & ~Copyable>(_ entry: HTTPFields.Entry, of lines: UnsafeRawBufferPointer,
                                                                 to sink: inout Sink) {
        let name = UnsafeRawBufferPointer(rebasing: lines[entry.nameRange])
        guard !name.isEmpty, name.allSatisfy(ASCII.isTokenByte) else { return }
        sink.write(name)
        sink.write(ASCII.colon)
        sink.write(ASCII.sp)
        for byte in lines[entry.valueRange] { sink.write(ASCII.isFieldValueByte(byte) ? byte : ASCII.sp) }
        sink.write(ASCII.cr)
        sink.write(ASCII.lf)
    }
}
