extension HTTPFields {
    /// Makes `Content-Length: length` the only Content-Length line; a section that has just
    /// that line already (the usual upstream response) is left as it is.
    public mutating func setContentLength(_ length: UInt64) {
        var lines = 0
        var canonical = true
        forEachValue(of: .contentLength) { value in
            lines += 1
            canonical = Self.isDecimal(length, value)
            return canonical
        }
        if lines == 1 && canonical { return }
        set(name: .contentLength, value: String(length))
    }

    /// Whether `bytes` is `value` in decimal as `String(value)` writes it: no sign, no
    /// leading zero, nothing else.
    private static func isDecimal(_ value: UInt64, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !bytes.isEmpty, bytes.count <= 20, bytes[0] != ASCII.zero || bytes.count == 1 else { return false }
        var parsed: UInt64 = 0
        for byte in bytes {
            guard ASCII.isDigit(byte) else { return false }
            let (times10, overflow) = parsed.multipliedReportingOverflow(by: 10)
            guard !overflow else { return false }
            parsed = times10 &+ UInt64(byte &- ASCII.zero)
            guard parsed >= times10 else { return false }
        }
        return parsed == value
    }
}
