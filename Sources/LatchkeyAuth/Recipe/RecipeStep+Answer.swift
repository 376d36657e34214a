#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyConfig
import LatchkeyHTTP

extension RecipeStep {
    /// Checks `response` against the step's expectation and takes its captures, by name.
    /// `now` reads `Retry-After` dates and cookie expiry dates.
    func read(_ response: AuthHTTPResponse, now: Date) throws(RecipeStepFailure) -> [String: String] {
        guard expect.accepts(status: response.status) else {
            throw .status(response.status, expected: expect.statuses, retryAfter: RetryAfter.parse(response.fields["Retry-After"], now: now))
        }
        let document = readsJSON ? try Self.json(response) : nil
        for match in expect.fields {
            let found = document?[match.path]
            if found != match.value { throw .fieldMismatch(match, found: found) }
        }
        var captured: [String: String] = [:]
        for capture in captures {
            guard let value = Self.value(of: capture.source, document: document, response: response, now: now) else {
                throw .captureMissing(capture)
            }
            guard !value.isEmpty else { throw .captureUnusable(capture, empty: true) }
            guard !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw .captureUnusable(capture, empty: false)
            }
            captured[capture.name] = value
        }
        return captured
    }

    private static func value(of source: RecipeCapture.Source, document: JSONValue?, response: AuthHTTPResponse, now: Date) -> String? {
        switch source {
        case .json(let path):
            return document?[path]?.scalarText
        case .header(let name):
            // RFC 9110 §5.3: repeated field lines are one comma-separated value.
            let values = response.fields.values(named: HTTPField.Name(name))
            return values.isEmpty ? nil : values.joined(separator: ", ")
        case .cookie(let name):
            return SetCookie.value(named: name, in: response.fields, now: now)
        }
    }

    /// The body as JSON, whatever its `Content-Type` says (some servers call JSON
    /// `text/plain`); an HTML error page is not.
    private static func json(_ response: AuthHTTPResponse) throws(RecipeStepFailure) -> JSONValue {
        guard let document = JSONValue(decoding: response.body) else {
            throw .notJSON(mediaType: response.mediaType)
        }
        return document
    }
}
