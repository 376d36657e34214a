import Foundation
import LatchkeyAuth
import LatchkeyConfig
import Logging
import Testing
@testable import Latchkey

/// What a registry stops: at shutdown every identity with the tasks it started; at a
/// reload only the identities the next registry does not keep.
@Suite struct IdentityRegistryTests {
    static let reloaded = IdentityUnavailable.failing(reason: "removed by a reload", retryAt: Date(timeIntervalSince1970: 0))

    func registry(_ config: Config, previous: IdentityRegistry? = nil, kept: [String] = []) throws -> IdentityRegistry {
        try IdentityRegistry(config: config, credentials: CredentialStore(config: config), store: MemoryTokenStore(), client: nil,
                             logger: Logger(label: "test"), metrics: MetricsRegistry(),
                             recorder: AuthEventRecorder(), previous: previous, kept: kept)
    }

    func demand(_ identity: Identity?) async -> Result<IssuedToken, IdentityUnavailable>? {
        guard let identity else { return nil }
        return await withCheckedContinuation { continuation in identity.demand { continuation.resume(returning: $0) } }
    }

    @Test func aReloadStopsTheReplacedIdentitiesAndShutdownStopsTheKeptOnesToo() async throws {
        let config = try ReloadTestSupport.config(identities: [ReloadTestSupport.identity("kept"), ReloadTestSupport.identity("gone")],
                                                  routes: [ReloadTestSupport.route("r", identity: "kept")])
        let running = try registry(config)
        running.start()
        let next = try registry(config, previous: running, kept: ["kept"])
        next.start()
        running.retire(replacedBy: next, reason: Self.reloaded)
        #expect(await demand(running.identities["gone"]) == .failure(Self.reloaded))
        let kept = await demand(next.identities["kept"])
        #expect(kept != .failure(Self.reloaded) && kept != .failure(Identity.shutDownReason))
        next.shutdown()
        #expect(await demand(next.identities["kept"]) == .failure(Identity.shutDownReason))
    }
}
