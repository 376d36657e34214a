import Foundation
import LatchkeyConfig
import LatchkeyHTTP
import Testing
@testable import Latchkey

@Suite struct ProxyAuthorizationTests {
    private static func basic(_ pair: String) -> String {
        "Basic " + Data(pair.utf8).base64EncodedString()
    }

    @Test(arguments: [
        (basic("latchkey:s3cret"), ProxyAuthorization.Verdict.authorized),
        (basic("anyone:s3cret"), .authorized),
        (basic(":s3cret"), .authorized),
        (basic("user:s3cr:et"), .refused),  // split at the first colon: the password is s3cr:et
        (basic("s3cret:s3cret:"), .refused),
        ("basic " + Data("u:s3cret".utf8).base64EncodedString(), .authorized),
        ("BASIC   " + Data("u:s3cret".utf8).base64EncodedString(), .authorized),
        (basic("latchkey:wrong"), .refused),
        (basic("latchkey:s3cre"), .refused),
        (basic("latchkey:s3crett"), .refused),
        (basic("latchkey:"), .refused),
        (basic("s3cret"), .refused),  // no colon
        ("Basic", .refused),
        ("Basic ", .refused),
        ("Basic bGF0Y2hrZXk6czNjcmV0", .authorized),  // latchkey:s3cret
        ("Basic bGF0Y2hrZXk6czNjcm!0", .refused),  // not base64
        ("Basic bGF0Y2hr ZXk6czNjcmV0", .refused),
        ("Bearer s3cret", .refused),
        ("s3cret", .refused),
        ("Digest username=\"latchkey\"", .refused),
        ("Basic " + Data([0x75, 0x3A, 0xFF, 0xFE]).base64EncodedString(), .refused),  // not UTF-8
    ])
    func oneField(_ value: String, _ verdict: ProxyAuthorization.Verdict) {
        #expect(ProxyAuthorization.judge([value], password: "s3cret") == verdict, "\(value)")
    }

    @Test func aMissingFieldAsksForCredentials() {
        #expect(ProxyAuthorization.judge([], password: "s3cret") == .missing)
    }

    @Test func twoFieldsAreRefusedEvenIfOneIsRight() {
        let right = Self.basic("latchkey:s3cret")
        #expect(ProxyAuthorization.judge([right, right], password: "s3cret") == .refused)
    }

    @Test func noPasswordHeldRefusesEveryone() {
        #expect(ProxyAuthorization.judge([Self.basic("latchkey:s3cret")], password: nil) == .refused)
    }

    @Test func aUTF8Password() {
        #expect(ProxyAuthorization.judge([Self.basic("latchkey:pässwörd")], password: "pässwörd") == .authorized)
    }

    @Test func judgesTheRequestsFieldsAgainstTheListenersSecret() {
        let authorization = ProxyAuthorization(listener: "agent")
        let credentials = CredentialSnapshot(generation: 0, values: [Config.proxyAuthSecretName(listener: "agent"): "s3cret"])
        var fields = HTTPFields()
        fields.append(name: "Host", value: "api.github.com")
        #expect(authorization.judge(fields, credentials: credentials) == .missing)
        fields.append(name: "proxy-authorization", value: Self.basic("latchkey:s3cret"))
        #expect(authorization.judge(fields, credentials: credentials) == .authorized)
        #expect(authorization.judge(fields, credentials: CredentialSnapshot(generation: 0, values: [:])) == .refused)
    }

    @Test(arguments: [ProxyAuthorization.Verdict.missing, .refused])
    func theRefusalIsA407WithAChallenge(_ verdict: ProxyAuthorization.Verdict) {
        let (document, fields) = ProxyAuthorization.refusal(verdict)
        #expect(document.status == 407)
        #expect(document.error == "proxy_authentication_required")
        #expect(fields["Proxy-Authenticate"] == "Basic realm=\"latchkey\"")
        #expect(!document.message.contains("s3cret"))
    }
}
