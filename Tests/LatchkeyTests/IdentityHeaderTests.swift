import Foundation
import LatchkeyAuth
import LatchkeyHTTP
import LatchkeyServer
import LatchkeyConfig
import Testing
@testable import Latchkey

/// Routes with identities for the tests: `kii` injects alice and lets a request pick bob,
/// `solo` injects alice only, `plain` injects a credential; carol exists but no route
/// allows her.
enum RouteIdentitiesFixture {
    /// An identity that is never asked for a token here: only its name matters.
    struct Unused: TokenSource {
        var canGrant: Bool { false }
        var renewable: Bool { false }
        func acquire(_ kind: AcquisitionKind, refreshToken: String?, now: Date) async throws(AcquisitionFailure) -> TokenSet {
            throw AcquisitionFailure(.rejected, "not in this test")
        }
    }

    struct Silent: AuthEventSink {
        func record(_ event: AuthEvent) {}
    }

    static func identities() -> [String: Identity] {
        Dictionary(uniqueKeysWithValues: ["alice", "bob", "carol"].map { name in
            (name, Identity(name: name, source: Unused(), store: MemoryTokenStore(), events: Silent()))
        })
    }

    static func table(_ identities: [String: Identity] = identities()) -> RouteTable {
        let upstream = UpstreamConfig(url: "http://up.example")
        let alice = Injection(target: .header("Authorization"), source: .identity("alice"), template: CredentialTemplate(prefix: "Bearer "))
        let config = Config(listeners: [ListenerConfig(name: "main", address: .tcp(host: "127.0.0.1", port: 8080))], routes: [
            RouteConfig(name: "kii", pathPrefix: "/kii", upstream: upstream, injections: [alice], selectableIdentities: ["bob"]),
            RouteConfig(name: "solo", pathPrefix: "/solo", upstream: upstream, injections: [alice]),
            RouteConfig(name: "plain", pathPrefix: "/plain", upstream: upstream,
                        injections: [Injection(target: .header("X-Key"), source: .credential("key"), template: .token)]),
        ])
        return RouteTable(config: config, identities: identities)
    }
}

@Suite struct IdentityHeaderTests {
    let identities = RouteIdentitiesFixture.identities()

    func table() -> RouteTable { RouteIdentitiesFixture.table(identities) }

    func choose(_ path: Substring, _ fields: HTTPFields, in table: RouteTable) -> Result<Identity?, ErrorDocument> {
        let route = table.match(listener: 0, path: path, host: nil)!
        return Result { () throws(ErrorDocument) in try IdentityHeader.choose(for: route, fields: fields, isKnown: { identities[$0] != nil }) }
    }

    func chosen(_ choice: Result<Identity?, ErrorDocument>) -> String? {
        if case .success(let identity) = choice { return identity?.name }
        return nil
    }

    func refusal(_ choice: Result<Identity?, ErrorDocument>) -> ErrorDocument? {
        if case .failure(let document) = choice { return document }
        return nil
    }

    @Test func withoutTheHeaderARequestGetsTheRoutesDefault() {
        let table = table()
        #expect(chosen(choose("/kii", ["Host": "h"], in: table)) == "alice")
        #expect(table.selectable["kii"]?.use("bob") == true)
        #expect(chosen(choose("/kii", ["Host": "h"], in: table)) == "bob")
        #expect(chosen(choose("/solo", ["Host": "h"], in: table)) == "alice")
        guard case .success(nil) = choose("/plain", ["Host": "h"], in: table) else {
            Issue.record("a route without identities injects none")
            return
        }
    }

    @Test func theHeaderPicksAnAllowedIdentityWhateverTheDefault() {
        let table = table()
        #expect(chosen(choose("/kii", ["latchkey-identity": "bob"], in: table)) == "bob")
        #expect(table.selectable["kii"]?.use("bob") == true)
        #expect(chosen(choose("/kii", ["Latchkey-Identity": "alice"], in: table)) == "alice")
        #expect(chosen(choose("/solo", ["Latchkey-Identity": "alice"], in: table)) == "alice")
    }

    @Test func anIdentityTheRouteDoesNotAllowIsRefusedNeverReplaced() {
        let table = table()
        let carol = refusal(choose("/kii", ["Latchkey-Identity": "carol"], in: table))
        #expect(carol == ErrorDocument(status: 403, error: "identity_not_allowed",
            message: "the Latchkey-Identity header names identity carol, which route kii does not allow (allowed: alice, bob)", route: "kii"))
        let bob = refusal(choose("/solo", ["Latchkey-Identity": "bob"], in: table))
        #expect(bob?.message == "the Latchkey-Identity header names identity bob, which route solo does not allow (allowed: alice)")
    }

    @Test func whatTheClientSentIsNeverRepeated() {
        let document = refusal(choose("/kii", ["Latchkey-Identity": "\"<script>alert(1)</script>"], in: table()))
        #expect(document?.status == 403)
        #expect(document?.message == "the Latchkey-Identity header names an identity this configuration does not have, "
            + "which route kii does not allow (allowed: alice, bob)")
    }

    @Test func aRouteWithoutIdentitiesRefusesTheHeader() {
        let document = refusal(choose("/plain", ["Latchkey-Identity": "alice"], in: table()))
        #expect(document == ErrorDocument(status: 403, error: "identity_not_allowed",
            message: "route plain injects no identity; send no Latchkey-Identity header", route: "plain"))
    }

    @Test func twoHeadersAreAnAmbiguityNotAChoice() {
        let document = refusal(choose("/kii", ["Latchkey-Identity": "bob", "Latchkey-Identity": "alice"], in: table()))
        #expect(document?.status == 400)
        #expect(document?.message == "more than one Latchkey-Identity header")
    }

    @Test func onlyAllowedIdentitiesBecomeTheDefault() throws {
        let kii = try #require(table().selectable["kii"])
        #expect(kii.use("carol") == false)
        #expect(kii.current.name == "alice")
        #expect(kii.names == ["alice", "bob"])
        // A route with one identity has no choice to make.
        #expect(table().selectable["solo"] == nil)
    }
}
