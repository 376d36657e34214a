import LatchkeyConfig
import LatchkeyHTTP

/// `renew_on` entries that look into the answer (`{ status: 401, json: { status_code: 3 } }`):
/// such a status refuses the token only when the answer's JSON body holds the fields.
extension RenewalPolicy {
    /// At most this much of an answer's body is read to judge it; a longer body matches
    /// nothing, and is relayed as it comes.
    static let bodyReadLimit = 64 * 1024

    /// Whether an answer with `status` must be read to tell whether it refuses the token:
    /// a body match names the status, and it is not a plain `renew_on` status (which
    /// refuses whatever the body says). One emptiness check on the path of every answer.
    func judgesBody(of status: Int) -> Bool {
        guard !bodyMatches.isEmpty, !statuses.contains(status) else { return false }
        return bodyMatches.contains { $0.status == status }
    }

    /// Whether `body`, the answer's whole body, refuses the token: a JSON document holding
    /// every field of one of the status's matches. A body that is not JSON, or longer
    /// than `bodyReadLimit`, matches nothing.
    func bodyRefuses(status: Int, body: [UInt8]) -> Bool {
        guard body.count <= Self.bodyReadLimit,
              let document = JSONValue(decoding: body) else { return false }
        return bodyMatches.contains { match in
            match.status == status && match.fields.allSatisfy { $0.holds(in: document) }
        }
    }

    /// Whether a whole answer (a handoff endpoint's, read at once) refuses the token, by
    /// its head or by its body.
    func refuses(status: Int, fields: HTTPFields, body: [UInt8]) -> Bool {
        refuses(status: status, fields: fields) || (judgesBody(of: status) && bodyRefuses(status: status, body: body))
    }
}
