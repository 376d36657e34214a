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
        for field in fields where isToken(field.name) {
            buffer.append(contentsOf: field.name.utf8)
            buffer.append(ASCII.colon)
            buffer.append(ASCII.sp)
            appendValue(field.value, to: &buffer)
            buffer.append(ASCII.cr)
            buffer.append(ASCII.lf)
        }
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
    }

    static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy(ASCII.isTokenByte)
    }

    private static func appendValue(_ value: String, to buffer: inout [UInt8]) {
        let utf8 = value.utf8
        if utf8.allSatisfy(ASCII.isFieldValueByte) {
            buffer.append(contentsOf: utf8)
        } else {
            for byte in utf8 { buffer.append(ASCII.isFieldValueByte(byte) ? byte : ASCII.sp) }
        }
    }
}
