/// application/x-www-form-urlencoded, as the WHATWG URL standard defines it (§5): the
/// format of OAuth request bodies and of the query of authorization and redirect URLs
/// (RFC 6749 Appendix B).
public enum FormEncoding {
    /// The urlencoded serializer: UTF-8, space as `+`, and every byte outside ASCII
    /// alphanumerics and `*-._` percent-encoded with upper-case hex (so `~` is `%7E`,
    /// as browsers send it; servers decode either).
    public static func encode(_ pairs: some Sequence<(String, String)>) -> String {
        pairs.map { encode($0.0) + "=" + encode($0.1) }.joined(separator: "&")
    }

    /// `url` with `pairs` added to its query, after any it has; no `?` for no pairs.
    public static func appending(_ pairs: [(String, String)], toQueryOf url: String) -> String {
        guard !pairs.isEmpty else { return url }
        let separator = !url.contains("?") ? "?" : url.hasSuffix("?") || url.hasSuffix("&") ? "" : "&"
        return url + separator + encode(pairs)
    }

    /// One name or value, serialized as above.
    public static func encode(_ text: String) -> String {
        encode(text, spaceAsPlus: true)
    }

    /// `text` with the same bytes kept, and a space as `%20`: for a value put into a URL's
    /// path, where `+` is a plus (RFC 3986 §2.1).
    public static func percentEncode(_ text: String) -> String {
        encode(text, spaceAsPlus: false)
    }

    private static func encode(_ text: String, spaceAsPlus: Bool) -> String {
        var out = String.UnicodeScalarView()
        for byte in text.utf8 {
            if isKept(byte) {
                out.append(Unicode.Scalar(byte))
            } else if byte == UInt8(ascii: " "), spaceAsPlus {
                out.append("+")
            } else {
                out.append("%")
                out.append(Unicode.Scalar(hexDigits[Int(byte >> 4)]))
                out.append(Unicode.Scalar(hexDigits[Int(byte & 0xF)]))
            }
        }
        return String(out)
    }

    /// The urlencoded parser: pairs in order, duplicates kept, empty sequences skipped, a
    /// missing `=` read as an empty value, `+` as space, a `%` not followed by two hex
    /// digits kept as it is, and bytes that are not UTF-8 replaced with U+FFFD.
    public static func decode(_ text: some StringProtocol) -> [(String, String)] {
        Array(text.utf8).split(separator: UInt8(ascii: "&")).map { sequence in
            let equals = sequence.firstIndex(of: UInt8(ascii: "=")) ?? sequence.endIndex
            return (decode(sequence[..<equals]), decode(sequence[min(equals + 1, sequence.endIndex)...]))
        }
    }

    /// One name or value, parsed as above.
    public static func decodeComponent(_ text: some StringProtocol) -> String {
        decode(Array(text.utf8)[...])
    }

    private static func decode(_ bytes: ArraySlice<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.endIndex,
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    private static func isKept(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"),
             UInt8(ascii: "."), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)
}
