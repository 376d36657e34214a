#if canImport(Glibc)
import Glibc
#endif

/// The addresses a forward proxy must not reach on a client's say-so: a client that may
/// name any destination could otherwise reach services that trust the proxy's machine
/// (loopback), the local link, or a cloud's metadata service, whose answers hold the
/// machine's own credentials (SSRF). Checked on every address a name resolves to, at
/// connect time, so a name that resolves to one of them is refused as well as a literal.
public enum DestinationGuard {
    /// What kind of refused address `bytes` (4 or 16, network order) is; nil when allowed.
    public static func refusal(address bytes: [UInt8]) -> String? {
        switch bytes.count {
        case 4:
            return refusal(ipv4: bytes)
        case 16:
            // IPv4-mapped (::ffff:a.b.c.d, RFC 4291 §2.5.5.2) reaches the IPv4 address.
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                return refusal(ipv4: Array(bytes[12...]))
            }
            return refusal(ipv6: bytes)
        default:
            return nil
        }
    }

    private static func refusal(ipv4 a: [UInt8]) -> String? {
        switch (a[0], a[1]) {
        // RFC 1122 §3.2.1.3: 0.0.0.0/8 is "this host"; Linux connects 0.0.0.0 to loopback.
        case (0, _): return "unspecified"
        case (127, _): return "loopback"
        // RFC 3927; 169.254.169.254 is the metadata service of AWS, GCP, Azure, OpenStack.
        case (169, 254): return "link-local"
        default: break
        }
        // Alibaba Cloud's metadata service.
        if a == [100, 100, 100, 200] { return "cloud metadata" }
        return nil
    }

    private static func refusal(ipv6 a: [UInt8]) -> String? {
        if a[0..<15].allSatisfy({ $0 == 0 }) {
            switch a[15] {
            case 0: return "unspecified"
            case 1: return "loopback"
            default: break
            }
        }
        // fe80::/10 (RFC 4291 §2.5.6).
        if a[0] == 0xFE && a[1] & 0xC0 == 0x80 { return "link-local" }
        // fd00:ec2::254, the AWS instance metadata service over IPv6.
        if a == [0xFD, 0x00, 0x0E, 0xC2] + Array(repeating: 0, count: 10) + [0x02, 0x54] { return "cloud metadata" }
        return nil
    }

    /// The refusal for a socket address curl is about to connect to, and its text.
    static func refusal(_ address: UnsafePointer<sockaddr>) -> (kind: String, address: String)? {
        var bytes: [UInt8]
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            bytes = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                withUnsafeBytes(of: v4.pointee.sin_addr) { Array($0) }
            }
        case AF_INET6:
            bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                withUnsafeBytes(of: v6.pointee.sin6_addr) { Array($0) }
            }
        default:
            return nil
        }
        guard let kind = refusal(address: bytes) else { return nil }
        return (kind, text(bytes))
    }

    /// inet_ntop(3).
    static func text(_ bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        return bytes.withUnsafeBytes { raw in
            buffer.withUnsafeMutableBufferPointer { text in
                inet_ntop(family, raw.baseAddress, text.baseAddress, socklen_t(text.count)).map { String(cString: $0) } ?? "?"
            }
        }
    }
}
