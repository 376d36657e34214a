#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyTLS

extension ConfigValidator {
    /// With `checkExternal`, reads the certificate and key files `config` names, as `serve`
    /// will at start: each problem at the key naming the file (unreadable, not PEM or cut
    /// short, no certificate, expired or not yet valid, a key not the certificate's, a key
    /// others can read), and a warning for a certificate that expires within 7 days.
    mutating func checkCertificateFiles(of config: Config, now: Date = Date()) {
        let listenersPath = ConfigPath.root / "listeners"
        for (index, listener) in config.listeners.enumerated() {
            if case .files(let certFile, let keyFile)? = listener.tls?.certificate {
                checkIdentityFiles(certFile: certFile, keyFile: keyFile, at: listenersPath[index] / "tls", now: now)
            }
            if case .clientCertificate(let caFile) = listener.inbound {
                checkCertificates(caFile, at: listenersPath[index] / "inbound" / "client_ca_file")
            }
        }
        if let ca = config.ca, let chain = checkIdentityFiles(certFile: ca.certFile, keyFile: ca.keyFile, at: ConfigPath.root / "ca", now: now),
           !chain[0].isCertificateAuthority {
            diagnostics.error(ConfigPath.root / "ca" / "cert_file", "certificate file \(ca.certFile) (\(chain[0].subject)) is not a CA certificate",
                              expected: "a CA certificate (basicConstraints CA:TRUE) that can sign the listeners' certificates")
        }
    }

    /// `cert_file` and `key_file` under `path`; the chain when the pair is good.
    @discardableResult
    private mutating func checkIdentityFiles(certFile: String, keyFile: String, at path: ConfigPath, now: Date) -> [Certificate]? {
        var chain: [Certificate]?
        do {
            chain = try Certificate.chain(file: certFile, now: now)
        } catch {
            diagnostics.error(path / "cert_file", error.message)
        }
        var key: PrivateKey?
        do {
            key = try PrivateKey.load(file: keyFile)
        } catch {
            diagnostics.error(path / "key_file", error.message)
        }
        guard let chain, let key else { return nil }
        do {
            _ = try TLSIdentity.pair(chain: chain, key: key, certFile: certFile, keyFile: keyFile)
        } catch {
            diagnostics.error(path / "key_file", error.message)
            return nil
        }
        if let warning = chain[0].expiryWarning(now: now, file: certFile) {
            diagnostics.warning(path / "cert_file", warning)
        }
        return chain
    }

    /// A file of CA certificates (`client_ca_file`): PEM certificates, whatever their dates
    /// (the handshake judges those).
    private mutating func checkCertificates(_ file: String, at path: ConfigPath) {
        do {
            _ = try Certificate.chain(file: file, now: nil)
        } catch {
            diagnostics.error(path, error.message)
        }
    }
}
