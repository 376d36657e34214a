import Testing
@testable import Latchkey

@Suite struct IdentityChangesTests {
    typealias Support = ReloadTestSupport

    @Test func equalIdentitiesAreKeptChangedOnesMadeAndMissingOnesRemoved() throws {
        let running = try Support.config(identities: [Support.identity("alice"), Support.identity("bob"), Support.identity("carol")],
                                         routes: [Support.route("a", identity: "alice"), Support.route("b", identity: "bob"),
                                                  Support.route("c", identity: "carol")])
        let loaded = try Support.config(identities: [Support.identity("alice"), Support.identity("bob", scope: "write"), Support.identity("dave")],
                                        routes: [Support.route("a", identity: "alice"), Support.route("b", identity: "bob"),
                                                 Support.route("d", identity: "dave")])
        let changes = IdentityChanges(running: running, loaded: loaded)
        #expect(changes == IdentityChanges(kept: ["alice"], added: ["dave"], changed: ["bob"], removed: ["carol"]))
        #expect(changes.made == ["bob", "dave"])
    }

    @Test func anIdentityWhoseCookiesTheProxyNowKeepsIsMadeAnew() throws {
        let running = try Support.config(identities: [Support.identity("alice")], routes: [Support.route("a", identity: "alice")])
        let loaded = try Support.config(identities: [Support.identity("alice")], routes: [Support.route("a", identity: "alice", jar: "proxy")])
        #expect(IdentityChanges(running: running, loaded: loaded) == IdentityChanges(changed: ["alice"]))
        #expect(IdentityChanges(running: loaded, loaded: running) == IdentityChanges(changed: ["alice"]))
    }

    @Test func aChangeOfTheRoutesAloneKeepsEveryIdentity() throws {
        let running = try Support.config(identities: [Support.identity("alice")], routes: [Support.route("a", identity: "alice")])
        let loaded = try Support.config(identities: [Support.identity("alice")],
                                        routes: [Support.route("a", identity: "alice", upstream: "https://other.example.com"),
                                                 Support.route("plain")])
        #expect(IdentityChanges(running: running, loaded: loaded) == IdentityChanges(kept: ["alice"]))
    }

    @Test func theSameConfigurationChangesNothing() throws {
        let config = try Support.config(identities: [Support.identity("alice")], routes: [Support.route("a", identity: "alice")])
        #expect(IdentityChanges(running: config, loaded: config) == IdentityChanges(kept: ["alice"]))
        #expect(RouteChanges(running: config, loaded: config) == RouteChanges())
    }
}
