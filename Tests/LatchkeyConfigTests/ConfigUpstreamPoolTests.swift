import LatchkeyTestSupport
import LatchkeyUpstream
import Testing
@testable import LatchkeyConfig

/// `limits.upstream_idle_connections`, `limits.upstream_idle_connections_total` and
/// `limits.upstream_idle_timeout`: the loops' pools of kept-alive upstream connections.
struct ConfigUpstreamPoolTests {
    @Test func defaultsAreNginxLike() throws {
        let config = try ConfigTestSupport.load(ConfigTestSupport.minimalRoutes)
        #expect(config.limits.upstreamPool == PoolLimits(perKey: 32, total: 512, idleTimeout: .seconds(30)))
    }

    @Test func theThreeKeysAreRead() throws {
        let config = try ConfigTestSupport.load(ConfigTestSupport.minimalRoutes + """

            limits: { upstream_idle_connections: 4, upstream_idle_connections_total: 64, upstream_idle_timeout: 2m }
            """)
        #expect(config.limits.upstreamPool == PoolLimits(perKey: 4, total: 64, idleTimeout: .seconds(120)))
    }

    @Test func zeroPerUpstreamKeepsNone() throws {
        let config = try ConfigTestSupport.load(ConfigTestSupport.minimalRoutes + "\nlimits: { upstream_idle_connections: 0 }\n")
        #expect(config.limits.upstreamPool.perKey == 0)
    }

    @Test(arguments: [
        ("upstream_idle_connections: -1", "limits.upstream_idle_connections", "out of range"),
        ("upstream_idle_connections_total: 0", "limits.upstream_idle_connections_total", "out of range"),
        ("upstream_idle_timeout: 0s", "limits.upstream_idle_timeout", "must be longer than zero"),
        ("upstream_idle_timeout: later", "limits.upstream_idle_timeout", "invalid duration"),
    ])
    func badValuesAreNamed(entry: String, path: String, message: String) {
        let problems = ConfigTestSupport.problems(ConfigTestSupport.minimalRoutes + "\nlimits: { \(entry) }\n")
        #expect(problems.map(\.path) == [path])
        #expect(problems.first?.message == message)
    }
}
