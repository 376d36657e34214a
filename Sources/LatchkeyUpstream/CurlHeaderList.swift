import CCurlShims
import LatchkeyHTTP

/// Owns one `curl_slist` of request header lines (CURLOPT_HTTPHEADER); curl_slist_free_all
/// in `deinit`. curl does not copy the list: it must live until the easy handle is removed
/// from the multi.
final class CurlHeaderList {
    private(set) var list: UnsafeMutablePointer<curl_slist>?
    /// False if curl_slist_append ran out of memory.
    private(set) var complete = true

    /// Builds `Name: value` lines in order. curl adds `Accept: */*` unless told otherwise and
    /// `Expect: 100-continue` for uploads; an empty `Accept:` / `Expect:` entry suppresses
    /// them when the caller did not send its own. Fields whose name or value hold CR, LF or
    /// NUL are dropped (they would inject lines). `scratch` is a reusable line buffer.
    init(_ fields: HTTPFields, scratch: inout [UInt8]) {
        var sawAccept = false
        var sawExpect = false
        for field in fields {
            scratch.removeAll(keepingCapacity: true)
            guard Self.appendSafe(field.name.utf8, to: &scratch), !scratch.isEmpty else { continue }
            let isAccept = !sawAccept && Self.equalsLowercase(scratch, "accept")
            let isExpect = !sawExpect && Self.equalsLowercase(scratch, "expect")
            if field.value.isEmpty {
                // curl reads "Name:" as "remove this header"; "Name;" sends it empty.
                scratch.append(UInt8(ascii: ";"))
            } else {
                scratch.append(UInt8(ascii: ":"))
                scratch.append(UInt8(ascii: " "))
                guard Self.appendSafe(field.value.utf8, to: &scratch) else { continue }
            }
            append(&scratch)
            if isAccept { sawAccept = true }
            if isExpect { sawExpect = true }
        }
        if !sawAccept { appendLiteral("Accept:", scratch: &scratch) }
        if !sawExpect { appendLiteral("Expect:", scratch: &scratch) }
    }

    deinit {
        curl_slist_free_all(list)
    }

    private func appendLiteral(_ line: StaticString, scratch: inout [UInt8]) {
        scratch.removeAll(keepingCapacity: true)
        line.withUTF8Buffer { scratch.append(contentsOf: $0) }
        append(&scratch)
    }

    /// curl_slist_append copies the NUL-terminated line.
    private func append(_ line: inout [UInt8]) {
        line.append(0)
        let appended = line.withUnsafeBufferPointer { bytes in
            bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                curl_slist_append(list, $0)
            }
        }
        if let appended { list = appended } else { complete = false }
    }

    private static func appendSafe(_ bytes: String.UTF8View, to buffer: inout [UInt8]) -> Bool {
        for byte in bytes {
            if byte == 0x0D || byte == 0x0A || byte == 0 { return false }
            buffer.append(byte)
        }
        return true
    }

    private static func equalsLowercase(_ bytes: [UInt8], _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        return lowercase.withUTF8Buffer { expected in
            for i in 0..<bytes.count {
                let byte = bytes[i]
                // ASCII lowercase: set 0x20 on A-Z only.
                let lower = byte &- 0x41 < 26 ? byte | 0x20 : byte
                if lower != expected[i] { return false }
            }
            return true
        }
    }
}
