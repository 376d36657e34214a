import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

/// `allow_methods` on a route and `allowed_origins` on a listener.
@Suite("Config allow_methods and allowed_origins")
struct ConfigMethodsAndOriginsTests {
    @Test func routeAllowsTraceAndConnect() throws {
        let config = try ConfigTestSupport.load("""
            routes:
              - { name: api, upstream: https://api.example.com, allow_methods: [TRACE, CONNECT] }
            """)
        #expect(config.routes[0].allowedMethods == ["TRACE", "CONNECT"])
    }

    @Test func routeAllowsNothingByDefault() throws {
        #expect(try ConfigTestSupport.load(ConfigTestSupport.minimalRoutes).routes[0].allowedMethods.isEmpty)
    }

    @Test(arguments: ["trace", "GET", "DELETE"])
    func otherMethodsAreNamedAsTheProblem(_ method: String) throws {
        let problems = ConfigTestSupport.problems("""
            routes:
              - { name: api, upstream: https://api.example.com, allow_methods: [\(method)] }
            """)
        let problem = try #require(problems.first)
        #expect(problems.count == 1)
        #expect(problem.path == "routes[0].allow_methods[0]")
        #expect(problem.message.contains(method))
    }

    @Test func listenerOriginsAreLowerCased() throws {
        let config = try ConfigTestSupport.load("""
            listeners:
              - { listen: 127.0.0.1:8080, allowed_origins: ["http://LOCALHOST:3000", "https://[::1]:5173"] }
            """ + "\n" + ConfigTestSupport.minimalRoutes)
        #expect(config.listeners[0].allowedOrigins == ["http://localhost:3000", "https://[::1]:5173"])
    }

    @Test(arguments: ["localhost:3000", "http://localhost:3000/", "ftp://localhost", "http://", "http://local host"])
    func invalidOrigins(_ origin: String) throws {
        let problems = ConfigTestSupport.problems("""
            listeners:
              - { listen: 127.0.0.1:8080, allowed_origins: ["\(origin)"] }
            """ + "\n" + ConfigTestSupport.minimalRoutes)
        #expect(problems.map(\.path) == ["listeners[0].allowed_origins[0]"], "\(origin)")
    }
}
