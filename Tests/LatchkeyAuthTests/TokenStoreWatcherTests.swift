import Foundation
import Testing
@testable import LatchkeyAuth

@Suite struct TokenStoreWatcherTests {
    @Test func aTokenStoredByAnotherProcessReachesTheIdentity() async throws {
        let directory = try TemporaryDirectory()
        let key = try testStoreKey()
        let server = try FileTokenStore(directory: directory.appending("store"), key: key, identities: ["podio"])
        let cli = try FileTokenStore(directory: directory.appending("store"), key: key)
        let source = ScriptedSource(canGrant: false, answers: [])
        let identity = Identity(name: "podio", source: source, store: server, events: RecordingEvents())
        let watcher = TokenStoreWatcher(store: server, identities: [identity], interval: .milliseconds(20))
        defer { watcher.stop() }

        let login = TokenSet(accessToken: "from-login", refreshToken: "r", expiresAt: Date().addingTimeInterval(3600), obtainedAt: Date())
        try await cli.save(login, identity: "podio")
        #expect(await eventually { identity.current()?.accessToken == "from-login" })

        try await cli.save(nil, identity: "podio")
        #expect(await eventually { identity.current() == nil })
        #expect(source.requests.withLock { $0.isEmpty })
    }

    /// Polls `condition` for up to five seconds.
    private func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<500 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }
}
