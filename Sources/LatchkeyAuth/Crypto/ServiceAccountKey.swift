#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A Google-style service account key file: the private key and what a JWT-bearer
/// assertion signed with it needs.
public struct ServiceAccountKey: Sendable {
    /// The assertion's `iss`.
    public let clientEmail: String
    /// The assertion header's `kid`, when the file has one.
    public let privateKeyID: String?
    /// The token endpoint, and the assertion's `aud` unless configured otherwise.
    public let tokenURI: String
    public let signingKey: SigningKey

    /// Parses key file JSON; errors name a missing or malformed field, never a value.
    public init(json: String) throws(CryptoError) {
        try self.init(json: Data(json.utf8), origin: "service account key")
    }

    /// Reads and parses a key file; errors also name the path.
    public init(contentsOfFile path: String) throws(CryptoError) {
        let origin = "service account key file \(path)"
        try self.init(json: try KeyFile.read(path, origin: origin), origin: origin)
    }

    init(json: Data, origin: String) throws(CryptoError) {
        let fields: Fields
        do {
            fields = try JSONDecoder().decode(Fields.self, from: json)
        } catch let DecodingError.typeMismatch(_, context) where context.codingPath.count == 1 {
            let field = context.codingPath[0].stringValue
            throw CryptoError(.invalidServiceAccountKey, detail: "\(origin): field \(field) is not a string")
        } catch {
            // The decoder's own message could quote the file; say only what is wrong.
            throw CryptoError(.invalidServiceAccountKey, detail: "\(origin) is not a JSON object")
        }
        func required(_ value: String?, _ name: String) throws(CryptoError) -> String {
            guard let value, !value.isEmpty else {
                throw CryptoError(.invalidServiceAccountKey, detail: "\(origin) has no \(name)")
            }
            return value
        }
        let type = try required(fields.type, "type")
        guard type == "service_account" else {
            throw CryptoError(.invalidServiceAccountKey, detail: "\(origin) is of type \(type), not service_account")
        }
        let privateKey = try required(fields.privateKey, "private_key")
        clientEmail = try required(fields.clientEmail, "client_email")
        tokenURI = try required(fields.tokenURI, "token_uri")
        privateKeyID = fields.privateKeyID
        signingKey = try SigningKey(pem: Array(privateKey.utf8), algorithm: nil, origin: "private_key of \(origin)")
    }

    /// The fields Latchkey uses; the rest are ignored.
    private struct Fields: Decodable {
        var type: String?
        var privateKey: String?
        var privateKeyID: String?
        var clientEmail: String?
        var tokenURI: String?

        private enum CodingKeys: String, CodingKey {
            case type
            case privateKey = "private_key"
            case privateKeyID = "private_key_id"
            case clientEmail = "client_email"
            case tokenURI = "token_uri"
        }
    }
}
