import Testing
@testable import Latchkey

/// The proxy's answers when an identity has nothing a route can inject.
@Suite struct IdentityRefusalTests {
    @Test func aTokenWithoutTheCaptureARouteInjectsIsACredentialWithoutAValue() {
        let refusal = IdentityRefusal(missingCapture: "session_id", identity: "tmdb-user", route: "tmdb")
        #expect(refusal.document.status == 503)
        #expect(refusal.document.error == "credential_unavailable")
        #expect(refusal.document.message.contains("identity tmdb-user holds no capture session_id"))
        #expect(refusal.document.message.contains("latchkey login tmdb-user"))
        #expect(refusal.fields.isEmpty, "no Retry-After: nothing changes by waiting")
    }
}
