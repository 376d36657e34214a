import Testing
@testable import Latchkey

@Suite struct MetricsEndpointTests {
    private let registry = MetricsRegistry()

    @Test func getAndHeadAnswerTheTextFormat() {
        for method in ["GET", "HEAD"] {
            let response = MetricsEndpoint(registry: registry).response(method: method)
            #expect(response.status == 200)
            #expect(response.fields["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8")
            #expect(response.fields["Cache-Control"] == "no-store")
        }
    }

    @Test func otherMethodsGet405WithAllow() {
        let response = MetricsEndpoint(registry: registry).response(method: "POST")
        #expect(response.status == 405)
        #expect(response.fields["Allow"] == "GET, HEAD")
        #expect(String(decoding: response.body, as: UTF8.self).contains(#""error":"method_not_allowed""#))
    }

    @Test func servesItsPathOnly() {
        #expect(MetricsEndpoint.serves(path: "/.latchkey/metrics"))
        #expect(!MetricsEndpoint.serves(path: "/.latchkey/metricz"))
        #expect(!MetricsEndpoint.serves(path: "/.latchkey/metrics/x"))
        #expect(!MetricsEndpoint.serves(path: "/"))
    }
}
