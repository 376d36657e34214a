#if canImport(Glibc)
import Glibc
#endif
import COpenSSL

/// A certificate or key file read whole, with its permission bits (fstat(2) of the
/// descriptor read, so that both describe the same file even if it is replaced meanwhile).
struct PEMFile {
    /// Larger than any certificate chain or key file; stops `/dev/zero` from eating memory.
    static let maxBytes = 1 << 20

    var bytes: [UInt8]
    var permissions: mode_t

    /// `noun` names the file in messages: "certificate file /etc/latchkey/tls/fullchain.pem".
    /// Links are followed (Kubernetes mounts secrets through them).
    init(path: String, noun: String) throws(TLSError) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw TLSError(.unreadable, "cannot read \(noun) \(path): \(Self.reason(errno))") }
        defer { Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw TLSError(.unreadable, "cannot read \(noun) \(path): \(Self.reason(errno))") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw TLSError(.unreadable, "cannot read \(noun) \(path): not a regular file") }
        guard info.st_size <= Self.maxBytes else { throw TLSError(.malformed, "\(noun) \(path) is larger than \(Self.maxBytes) bytes") }
        // Sized from fstat, so that growing never copies a key's bytes into memory that is
        // freed without being wiped (only a file growing while it is read could).
        var contents: [UInt8] = []
        contents.reserveCapacity(Int(info.st_size) + 1)
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        defer { chunk.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw TLSError(.unreadable, "cannot read \(noun) \(path): \(Self.reason(errno))") }
            if count == 0 { break }
            contents.append(contentsOf: chunk[..<count])
            guard contents.count <= Self.maxBytes else { throw TLSError(.malformed, "\(noun) \(path) is larger than \(Self.maxBytes) bytes") }
        }
        bytes = contents
        permissions = info.st_mode & 0o7777
    }

    /// Overwrites the bytes read (a key's) once they are parsed.
    mutating func wipe() {
        bytes.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
    }

    private static func reason(_ code: Int32) -> String {
        String(cString: strerror(code)).lowercased()
    }
}
