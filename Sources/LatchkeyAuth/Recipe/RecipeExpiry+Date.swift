#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyConfig

extension RecipeExpiry {
    /// When the result of a run at `now` with `captures` stops being good; nil for
    /// `never`. A capture that does not hold what its key says (a number of seconds, a
    /// time) is a misconfiguration of that key: the next run would read it the same way.
    func expiresAt(captures: [String: String], now: Date, identity: IdentityConfig, redaction: SecretRedaction) throws(AcquisitionFailure) -> Date? {
        let key: String, name: String, wanted: String
        switch self {
        case .never:
            return nil
        case .lifetime(let lifetime):
            return now.addingTimeInterval(lifetime.seconds)
        case .capturedSeconds(let capture):
            if let text = captures[capture], let seconds = Double(text.trimmingCharacters(in: .whitespaces)), seconds.isFinite {
                return now.addingTimeInterval(seconds)
            }
            (key, name, wanted) = ("expires_in", capture, "a number of seconds")
        case .capturedTime(let capture):
            if let text = captures[capture], let date = CapturedTime.parse(text) { return date }
            (key, name, wanted) = ("expires_at", capture, "a time (RFC 3339, YYYY-MM-DD HH:MM:SS UTC, or Unix seconds)")
        }
        let found = captures[name].map { redaction.reveals($0) ? "a secret value" : "\"\($0.prefix(60))\"" } ?? "nothing"
        throw AcquisitionFailure(.misconfigured(configKey: identity.configPath(key)),
                                 redaction.apply("capture \(name) holds \(found), not \(wanted)"))
    }
}
