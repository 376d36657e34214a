import Testing
@testable import Latchkey

/// Reads what `/.latchkey/metrics` would answer for a test's own registry.
enum MetricsTestSupport {
    /// The exposition's samples, `name{labels}` → value, after checking the response around it.
    static func samples(_ registry: MetricsRegistry) -> [String: String] {
        let response = MetricsEndpoint(registry: registry).response(method: "GET")
        #expect(response.status == 200)
        var samples: [String: String] = [:]
        for line in String(decoding: response.body, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            samples[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        return samples
    }
}
