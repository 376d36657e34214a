import LatchkeyLoop
import LatchkeyTLS

extension LocalCAStore {
    /// Where the system's trusted roots are when `SSL_CERT_FILE` does not say (Debian,
    /// Ubuntu, Alpine with ca-certificates).
    public static let systemRootsFile = "/etc/ssl/certs/ca-certificates.crt"

    /// Writes `bundle.pem` (0644): the system's roots (`SSL_CERT_FILE`, else
    /// `systemRootsFile`) then `authority`'s certificate, so that a client given one CA file
    /// (`CURL_CA_BUNDLE`, `REQUESTS_CA_BUNDLE`) trusts both the Internet and Latchkey.
    /// Returns its path.
    public func writeBundle(authority: Certificate, environment: [String: String]) throws(LocalCAError) -> String {
        let bundle = try bundle(authority: authority, environment: environment)
        try write(bundle, to: bundlePath)
        return bundlePath
    }

    /// The same bundle for one `latchkey exec`, named after its content
    /// (`bundle-<digest>.pem`): a program that runs keeps the roots it was given, whatever
    /// roots the next exec's parent has, and execs with the same roots share one file,
    /// written only when it is not there yet.
    public func writeBundleForExec(authority: Certificate, environment: [String: String]) throws(LocalCAError) -> String {
        let bundle = try bundle(authority: authority, environment: environment)
        let digest: [UInt8]
        do {
            digest = try Digest.sha256(bundle)
        } catch {
            throw LocalCAError("cannot name the CA bundle: \(error)")
        }
        let path = directory + "/bundle-" + digest.prefix(8).map { String($0, radix: 16).leftPadded(to: 2) }.joined() + ".pem"
        if FileSignature(path: path) == nil { try write(bundle, to: path) }
        return path
    }

    /// The roots, without any copy of `authority` (the parent's `SSL_CERT_FILE` may be an
    /// earlier bundle: a nested exec), then `authority`.
    private func bundle(authority: Certificate, environment: [String: String]) throws(LocalCAError) -> [UInt8] {
        let rootsFile = environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.systemRootsFile
        do throws(TLSError) {
            let roots = try Certificate.chain(file: rootsFile, now: nil).filter { !$0.isSame(as: authority) }
            var bundle: [UInt8] = []
            for certificate in roots + [authority] {
                bundle += try certificate.pem()
            }
            return bundle
        } catch {
            throw LocalCAError("cannot read the system's trusted roots: \(error.message) (set SSL_CERT_FILE to the file that holds them)")
        }
    }

    private func write(_ bundle: [UInt8], to path: String) throws(LocalCAError) {
        do {
            try PrivateFile.replace(path, in: directory, with: bundle, permissions: 0o644)
        } catch {
            throw LocalCAError(error)
        }
    }
}
