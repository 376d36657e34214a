import CCurlShims
import LatchkeyHTTP

/// The request's header lines as a `curl_slist` (CURLOPT_HTTPHEADER) built in one
/// allocation: nodes first, then the NUL-terminated lines they point at. curl only reads
/// the list (it neither copies nor frees it), so building it ourselves replaces two
/// mallocs per header (curl_slist_append's node and its copy of the line) with one per
/// request. The list must live until the easy handle is removed from the multi.
final class CurlHeaderList {
    private(set) var list: UnsafeMutablePointer<curl_slist>?
    private let storage: UnsafeMutableRawPointer

    /// Builds `Name: value` lines in order. curl adds `Accept: */*` unless told otherwise and
    /// `Expect: 100-continue` for uploads; an empty `Accept:` / `Expect:` entry suppresses
    /// them when the caller did not send its own. Fields whose name or value hold CR, LF or
    /// NUL are dropped (they would inject lines).
    init(_ fields: HTTPFields) {
        var sawAccept = false
        var sawExpect = false
        var nodeCount = 0
        var textBytes = 0
        for field in fields where Self.isSafe(field) {
            // "Name: value\0", or "Name;\0" for an empty value: curl reads "Name:" as
            // "remove this header".
            nodeCount += 1
            textBytes += field.name.utf8.count + (field.value.isEmpty ? 2 : 3 + field.value.utf8.count)
            if field.hasName("Accept") { sawAccept = true }
            if field.hasName("Expect") { sawExpect = true }
        }
        // The usual case, every field safe, needs no second scan while copying.
        let allSafe = nodeCount == fields.count
        let acceptSuppression: StaticString = "Accept:"
        let expectSuppression: StaticString = "Expect:"
        if !sawAccept {
            nodeCount += 1
            textBytes += acceptSuppression.utf8CodeUnitCount + 1
        }
        if !sawExpect {
            nodeCount += 1
            textBytes += expectSuppression.utf8CodeUnitCount + 1
        }
        let nodeBytes = nodeCount * MemoryLayout<curl_slist>.stride
        storage = UnsafeMutableRawPointer.allocate(byteCount: nodeBytes + textBytes, alignment: MemoryLayout<curl_slist>.alignment)

        let nodes = storage.bindMemory(to: curl_slist.self, capacity: nodeCount)
        var text = (storage + nodeBytes).assumingMemoryBound(to: UInt8.self)
        var node = 0
        func link(_ write: (inout UnsafeMutablePointer<UInt8>) -> Void) {
            let start = text
            write(&text)
            text.pointee = 0
            text += 1
            let next = node + 1 < nodeCount ? nodes + node + 1 : nil
            (nodes + node).initialize(to: curl_slist(data: UnsafeMutableRawPointer(start).assumingMemoryBound(to: CChar.self), next: next))
            node += 1
        }
        for field in fields where allSafe || Self.isSafe(field) {
            link { out in
                Self.copy(field.name, to: &out)
                if field.value.isEmpty {
                    out.pointee = UInt8(ascii: ";")
                    out += 1
                } else {
                    out.pointee = UInt8(ascii: ":")
                    (out + 1).pointee = UInt8(ascii: " ")
                    out += 2
                    Self.copy(field.value, to: &out)
                }
            }
        }
        func linkLiteral(_ line: StaticString) {
            link { out in
                line.withUTF8Buffer { bytes in
                    for byte in bytes {
                        out.pointee = byte
                        out += 1
                    }
                }
            }
        }
        if !sawAccept { linkLiteral(acceptSuppression) }
        if !sawExpect { linkLiteral(expectSuppression) }
        list = nodeCount > 0 ? nodes : nil
    }

    deinit {
        storage.deallocate()
    }

    private static func isSafe(_ field: HTTPField) -> Bool {
        !field.name.isEmpty && isSafe(field.name) && isSafe(field.value)
    }

    // Over the string's own bytes (withUTF8) rather than its UTF8View, which was most of
    // the cost of building the list.
    private static func isSafe(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in !bytes.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 } }
    }

    private static func copy(_ text: String, to out: inout UnsafeMutablePointer<UInt8>) {
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            out.initialize(from: base, count: bytes.count)
            out += bytes.count
        }
    }
}
