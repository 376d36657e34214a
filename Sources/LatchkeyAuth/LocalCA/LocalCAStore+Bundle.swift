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
        let rootsFile = environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.systemRootsFile
        do {
            let roots = try Certificate.chain(file: rootsFile, now: nil)
            var bundle: [UInt8] = []
            for certificate in roots + [authority] {
                bundle += try certificate.pem()
            }
            try PrivateFile.replace(bundlePath, in: directory, with: bundle, permissions: 0o644)
        } catch let error as TLSError {
            throw LocalCAError("cannot read the system's trusted roots: \(error.message) (set SSL_CERT_FILE to the file that holds them)")
        } catch let error as TokenStoreError {
            throw LocalCAError(error)
        } catch {
            throw LocalCAError("cannot write \(bundlePath): \(error)")
        }
        return bundlePath
    }
}
