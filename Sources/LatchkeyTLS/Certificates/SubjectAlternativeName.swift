import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// One name a leaf certificate is valid for: a DNS name, or an IP address (RFC 5280
/// §4.2.1.6: an address is an iPAddress entry of 4 or 16 bytes, never a dNSName; clients
/// match `https://127.0.0.1/` only against the former).
enum SubjectAlternativeName: Hashable, Sendable {
    case dns(String)
    case ip([UInt8])

    /// `name` as a host name or an address literal ("127.0.0.1", "::1", "[::1]"). Refuses
    /// what is neither, so that a name from a request (SNI) cannot smuggle anything into
    /// the certificate.
    init(_ name: String) throws(TLSError) {
        let literal = name.hasPrefix("[") && name.hasSuffix("]") ? String(name.dropFirst().dropLast()) : name
        if let address = Self.address(literal) {
            self = .ip(address)
            return
        }
        let lowered = name.lowercased()
        guard Self.isHostName(lowered) else {
            throw TLSError(.setup, "cannot mint a certificate for \(Self.printable(name)): not a DNS name or an IP address")
        }
        self = .dns(lowered)
    }

    /// The text form, as `Certificate.names` reports it.
    var text: String {
        switch self {
        case .dns(let name): name
        case .ip(let bytes): Self.text(ofAddress: bytes)
        }
    }

    /// A GENERAL_NAME holding this name, owned by the caller.
    func generalName() throws(TLSError) -> UnsafeMutablePointer<GENERAL_NAME> {
        guard let name = GENERAL_NAME_new() else { throw TLSError(.setup, "GENERAL_NAME_new failed: \(OpenSSLErrors.drainReasons())") }
        let (type, bytes): (Int32, [UInt8]) = switch self {
        case .dns(let host): (GEN_DNS, Array(host.utf8))
        case .ip(let address): (GEN_IPADD, address)
        }
        // An IA5String (dNSName) and an OCTET STRING (iPAddress) are both ASN1_STRINGs
        // that differ only in their type tag.
        guard let value = ASN1_STRING_type_new(type == GEN_DNS ? V_ASN1_IA5STRING : V_ASN1_OCTET_STRING),
              ASN1_STRING_set(value, bytes, Int32(bytes.count)) == 1
        else {
            GENERAL_NAME_free(name)
            throw TLSError(.setup, "ASN1_STRING_set failed: \(OpenSSLErrors.drainReasons())")
        }
        GENERAL_NAME_set0_value(name, type, UnsafeMutableRawPointer(value))
        return name
    }

    static func text(ofDNS value: UnsafeMutablePointer<ASN1_IA5STRING>?) -> String? {
        guard let value, let data = ASN1_STRING_get0_data(value) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(value))), as: UTF8.self)
    }

    static func text(ofIP value: UnsafeMutablePointer<ASN1_OCTET_STRING>?) -> String? {
        guard let value, let data = ASN1_STRING_get0_data(value) else { return nil }
        return text(ofAddress: Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(value)))))
    }

    /// inet_ntop(3) of 4 or 16 bytes.
    private static func text(ofAddress bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        guard inet_ntop(family, bytes, &buffer, socklen_t(buffer.count)) != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// inet_pton(3) for IPv4, then IPv6.
    private static func address(_ text: String) -> [UInt8]? {
        var v4 = [UInt8](repeating: 0, count: 4)
        if inet_pton(AF_INET, text, &v4) == 1 { return v4 }
        var v6 = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET6, text, &v6) == 1 { return v6 }
        return nil
    }

    /// RFC 1123 §2.1 labels of letters, digits and '-' (and '_', which real names carry),
    /// at most 253 bytes, optionally under one leading "*." wildcard (RFC 6125 §6.4.3).
    private static func isHostName(_ name: String) -> Bool {
        let bare = name.hasPrefix("*.") ? name.dropFirst(2) : Substring(name)
        guard !bare.isEmpty, name.utf8.count <= 253 else { return false }
        return bare.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            (1...63).contains(label.utf8.count) && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D || $0 == 0x5F }
        }
    }

    /// The name for a message: control bytes and anything long are not echoed.
    private static func printable(_ name: String) -> String {
        name.utf8.count <= 253 && name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) ? "\"\(name)\"" : "a name"
    }
}
