import COpenSSL
import LatchkeyTLS

extension SigningKey {
    /// Signs `message` with SHA-256 as `algorithm` says: RSASSA-PKCS1-v1_5 for RS256, and for
    /// ES256 the 64-byte r||s form JWS uses (RFC 7518 §3.4), not OpenSSL's DER.
    public func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        let signature = try OpenSSLErrorQueue.isolating { () throws(CryptoError) in
            // A context per signature is what makes one key safe to share across threads.
            guard let context = EVP_MD_CTX_new() else { throw signingError("EVP_MD_CTX_new") }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else {
                throw signingError("EVP_DigestSignInit")
            }
            var length = 0
            guard EVP_DigestSign(context, nil, &length, message, message.count) == 1 else {
                throw signingError("EVP_DigestSign")
            }
            var signature = [UInt8](repeating: 0, count: length)
            guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
                throw signingError("EVP_DigestSign")
            }
            return Array(signature.prefix(length))
        }
        switch algorithm {
        case .rs256: return signature
        case .es256: return try ECDSASignature.jose(fromDER: signature, coordinateWidth: 32)
        }
    }

    /// Call inside `OpenSSLErrorQueue.isolating`, where the queue holds this call's reasons.
    private func signingError(_ call: String) -> CryptoError {
        CryptoError(.signingFailed, detail: "\(call) failed: \(OpenSSLErrors.drainReasons())")
    }
}
