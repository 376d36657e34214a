#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyConfig

extension RecipeExpiry {
    /// The furthest expiry kept: later ones (an API's "never", or a number that is not
    /// one) are read as this, which keeps every later computation with the date in range.
    static let longest: TimeInterval = 10 * 365 * 86_400

    /// When the result of a run at `now` with `captures` stops being good; nil for
    /// `never`. A capture that does not hold what its key says (a number of seconds, a
    /// time) is a misconfiguration of that key: the next run would read it the same way.
    /// A result that has expired already when it arrives is a failure, to be retried after
    /// the back-off: used, it would make the recipe run again at once, and again.
    func expiresAt(captures: [String: String], now: Date, identity: IdentityConfig, redaction: SecretRedaction) throws(AcquisitionFailure) -> Date? {
        let key: String, name: String, wanted: String
        let date: Date
        switch self {
        case .never:
            return nil
        case .lifetime(let lifetime):
            return now.addingTimeInterval(min(lifetime.seconds, Self.longest))
        case .capturedSeconds(let capture):
            (key, name, wanted) = ("expires_in", capture, "a number of seconds")
            guard let text = captures[capture], let seconds = Double(text.trimmingCharacters(in: .whitespaces)), seconds.isFinite else {
                throw Self.unreadable(key: key, capture: name, wanted: wanted, captures: captures, identity: identity, redaction: redaction)
            }
            date = now.addingTimeInterval(min(seconds, Self.longest))
        case .capturedTime(let capture):
            (key, name, wanted) = ("expires_at", capture, "a time (RFC 3339, YYYY-MM-DD HH:MM:SS UTC, or Unix seconds)")
            guard let text = captures[capture], let time = CapturedTime.parse(text) else {
                throw Self.unreadable(key: key, capture: name, wanted: wanted, captures: captures, identity: identity, redaction: redaction)
            }
            date = min(time, now.addingTimeInterval(Self.longest))
        }
        guard date > now else {
            throw AcquisitionFailure(.transient, "capture \(name) (\(key)) says the result has expired already; "
                                     + "check the capture and the clocks of this machine and the API")
        }
        return date
    }

    private static func unreadable(
        key: String, capture name: String, wanted: String, captures: [String: String], identity: IdentityConfig, redaction: SecretRedaction
    ) -> AcquisitionFailure {
        let found = captures[name].map { redaction.reveals($0) ? "a secret value" : "\"\(RecipeStepFailure.excerpt($0))\"" } ?? "nothing"
        return AcquisitionFailure(.misconfigured(configKey: identity.configPath(key)),
                                  redaction.apply("capture \(name) holds \(found), not \(wanted)"))
    }
}
