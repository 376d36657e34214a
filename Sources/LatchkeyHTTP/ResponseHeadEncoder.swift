/// Serialises a response head: `HTTP/1.1 200 OK\r\nName: value\r\n…\r\n` (RFC 9112 §4, §5).
public enum ResponseHeadEncoder {
    /// Appends the status line, the fields and the empty line to `buffer`.
    ///
    /// Fields reach this point from upstreams and from our own code, so the encoder is the
    /// last guard against response splitting: a field whose name is not a token is left
    /// out, and CR, LF, NUL or any other control byte in a value (HTAB excepted) is
    /// written as a space. A `status` outside 100…999 is written as 500.
    public static func encode(status: Int, fields: HTTPFields, into buffer: inout [UInt8]) {
        let code = (100...999).contains(status) ? status : 500
        var estimate = 17 + 32 + 2
        for field in fields { estimate += field.name.utf8.count + field.value.utf8.count + 4 }
        buffer.reserveCapacity(buffer.count + estimate)

        buffer.append(contentsOf: "HTTP/1.1 ".utf8)
        buffer.append(ASCII.zero + UInt8(code / 100))
        buffer.append(ASCII.zero + UInt8(code / 10 % 10))
        buffer.append(ASCII.zero + UInt8(code % 10))
        buffer.append(ASCII.sp)
        buffer.append(contentsOf: HTTPStatus.reasonPhrase(code).utf8)
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
        for field in fields {
            // withUTF8 hands over the string's own bytes (no copy for a native string): the
            // checks and copies below then run over a buffer instead of a UTF8View, which
            // was most of this function's cost.
            var name = field.name
            var value = field.value
            name.withUTF8 { name in
                guard isToken(name) else { return }
                buffer.append(contentsOf: name)
                buffer.append(ASCII.colon)
                buffer.append(ASCII.sp)
                value.withUTF8 { appendValue($0, to: &buffer) }
                buffer.append(ASCII.cr)
                buffer.append(ASCII.lf)
            }
        }
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
    }

    private static func isToken(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        !name.isEmpty && name.allSatisfy(ASCII.isTokenByte)
    }

    private static func appendValue(_ value: UnsafeBufferPointer<UInt8>, to buffer: inout [UInt8]) {
        if value.allSatisfy(ASCII.isFieldValueByte) {
            buffer.append(contentsOf: value)
        } else {
            for byte in value { buffer.append(ASCII.isFieldValueByte(byte) ? byte : ASCII.sp) }
        }
    }
}
