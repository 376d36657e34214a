import Foundation
@testable import LatchkeyAuth

/// A compact JWS taken apart with Base64URL and JSONDecoder, to compare with what was signed.
struct DecodedJWT {
    var headerJSON: String
    var header: [String: Value]
    var claims: [String: Value]
    var signingInput: [UInt8]
    var signature: [UInt8]

    init(_ token: String) throws {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let header = Base64URL.decode(parts[0]),
              let payload = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2])
        else { throw Malformed() }
        headerJSON = String(decoding: header, as: UTF8.self)
        self.header = try JSONDecoder().decode([String: Value].self, from: Data(header))
        claims = try JSONDecoder().decode([String: Value].self, from: Data(payload))
        signingInput = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        self.signature = signature
    }

    struct Malformed: Error {}

    /// The JSON values a JWT of ours holds.
    enum Value: Decodable, Equatable {
        case string(String)
        case number(Double)
        case array([Value])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let string = try? container.decode(String.self) {
                self = .string(string)
            } else if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else {
                self = .array(try container.decode([Value].self))
            }
        }
    }
}

extension DecodedJWT.Value: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByArrayLiteral {
    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int) { self = .number(Double(value)) }
    init(arrayLiteral elements: DecodedJWT.Value...) { self = .array(elements) }
}
