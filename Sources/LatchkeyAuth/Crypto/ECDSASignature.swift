import COpenSSL
import LatchkeyTLS

/// OpenSSL writes an ECDSA signature as a DER SEQUENCE of two INTEGERs; JWS wants r and s
/// as fixed-width big-endian numbers, concatenated (RFC 7518 §3.4).
enum ECDSASignature {
    /// r||s from a DER signature, each left-padded with zeros to `coordinateWidth` bytes
    /// (32 for P-256): DER drops leading zeros, JWS keeps them.
    static func jose(fromDER der: [UInt8], coordinateWidth: Int) throws(CryptoError) -> [UInt8] {
        try OpenSSLErrorQueue.isolating { () throws(CryptoError) in
            let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
                var cursor = buffer.baseAddress
                return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
            }
            guard let parsed else {
                throw CryptoError(.signingFailed, detail: "d2i_ECDSA_SIG failed: \(OpenSSLErrors.drainReasons())")
            }
            defer { ECDSA_SIG_free(parsed) }
            var jose = [UInt8](repeating: 0, count: 2 * coordinateWidth)
            let written = jose.withUnsafeMutableBufferPointer { out in
                let width = Int32(coordinateWidth)
                return BN_bn2binpad(ECDSA_SIG_get0_r(parsed), out.baseAddress, width) == width
                    && BN_bn2binpad(ECDSA_SIG_get0_s(parsed), out.baseAddress! + coordinateWidth, width) == width
            }
            guard written else {
                throw CryptoError(.signingFailed, detail: "an ECDSA signature value is wider than \(coordinateWidth) bytes")
            }
            return jose
        }
    }
}
