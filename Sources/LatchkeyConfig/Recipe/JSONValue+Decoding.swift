#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension JSONValue {
    /// `bytes` read as one JSON document (RFC 8259): a recipe step's answer, or a refusal
    /// a `renew_on` body match looks into. Nil when they are not one.
    public init?(decoding bytes: [UInt8]) {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes)) else { return nil }
        self = value
    }
}
