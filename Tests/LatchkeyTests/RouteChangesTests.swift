import Testing
@testable import Latchkey

@Suite struct RouteChangesTests {
    typealias Support = ReloadTestSupport

    @Test func routesAreAddedChangedAndRemovedByName() throws {
        let running = try Support.config(routes: [Support.route("kept"), Support.route("moved"), Support.route("gone")])
        let loaded = try Support.config(routes: [Support.route("new"), Support.route("moved", upstream: "https://other.example.com"),
                                                 Support.route("kept")])
        #expect(RouteChanges(running: running, loaded: loaded) == RouteChanges(added: ["new"], changed: ["moved"], removed: ["gone"]))
    }

    @Test func reorderingTheRoutesChangesNone() throws {
        let running = try Support.config(routes: [Support.route("a"), Support.route("b")])
        let loaded = try Support.config(routes: [Support.route("b"), Support.route("a")])
        #expect(RouteChanges(running: running, loaded: loaded) == RouteChanges())
    }
}
