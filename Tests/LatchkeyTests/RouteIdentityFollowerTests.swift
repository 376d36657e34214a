import Foundation
import LatchkeyAuth
import Logging
import LatchkeyTestSupport
import LatchkeyConfig
import Testing
@testable import Latchkey

@Suite struct RouteIdentityFollowerTests {
    /// Removed with the suite's instance, after each test.
    let temporary: TemporaryDirectory
    var directory: URL { temporary.url }
    let file: RouteIdentityFile
    let table = RouteIdentitiesFixture.table()
    let log = LogCapture()

    init() throws {
        temporary = try TemporaryDirectory()
        file = try RouteIdentityFile(directory: temporary.url.appendingPathComponent("store").path)
    }

    func follower() -> RouteIdentityFollower {
        RouteIdentityFollower(file: file, routes: table.selectable, logger: Logger(label: "test") { _ in log })
    }

    var kii: RouteIdentities { table.selectable["kii"]! }

    @Test func theChoiceIsTakenAtStartAndWhenTheFileChanges() throws {
        try file.set("bob", forRoute: "kii")
        let follower = follower()
        follower.check()
        #expect(kii.current.name == "bob")
        try file.set(nil, forRoute: "kii")
        follower.check()
        #expect(kii.current.name == "alice")
        #expect(log.messages.filter { $0.contains("route identity changed") }.count == 2)
    }

    @Test func aChoiceTheRouteDoesNotAllowIsLeftAsideWithAWarning() throws {
        try file.set("bob", forRoute: "kii")
        let follower = follower()
        follower.check()
        try file.set("carol", forRoute: "kii")
        try file.set("alice", forRoute: "solo")
        follower.check()
        #expect(kii.current.name == "bob")
        #expect(log.messages.contains { $0.hasPrefix("warning the route identities name an identity the route does not allow") && $0.contains("carol") })
        #expect(log.messages.contains { $0.hasPrefix("warning the route identities name a route without a choice of identities") && $0.contains("solo") })
    }

    @Test func anUnreadableFileKeepsTheIdentitiesAndIsReportedOnce() throws {
        try file.set("bob", forRoute: "kii")
        let follower = follower()
        follower.check()
        try Data("{".utf8).write(to: URL(fileURLWithPath: file.path))
        follower.check()
        follower.check()
        #expect(kii.current.name == "bob")
        #expect(log.messages.filter { $0.contains("cannot read the route identities") }.count == 1)
    }
}
