import LatchkeyAuth
import LatchkeyHTTP
import LatchkeyServer
import LatchkeyConfig
import Testing
@testable import Latchkey

@Suite struct ListenerPolicyTests {
    private func policy(_ allowed: [String] = [], bound: SocketAddress = .ipv4(host: "127.0.0.1", port: 8080)) -> ListenerPolicy {
        try! ListenerPolicy(config: ListenerConfig(name: "main", address: .tcp(host: "127.0.0.1", port: 8080), allowedHosts: allowed), bound: bound)
    }

    @Test func loopbackNamesWithThePortAreAccepted() {
        let p = policy()
        for host in ["localhost:8080", "127.0.0.1:8080", "[::1]:8080", "LOCALHOST:8080"] {
            #expect(p.acceptsHost(host), "\(host)")
        }
    }

    @Test func rebindingNamesAndWrongPortsAreRefused() {
        let p = policy()
        for host in ["evil.example", "evil.example:8080", "127.0.0.1:9999", "localhost", "127.0.0.1.evil:8080"] {
            #expect(!p.acceptsHost(host), "\(host)")
        }
        #expect(!p.acceptsHost(nil))
    }

    @Test func configuredNamesAreAcceptedWithAndWithoutPort() {
        let p = policy(["api.local"])
        #expect(p.acceptsHost("api.local"))
        #expect(p.acceptsHost("api.local:8080"))
    }

    /// A few names are compared in turn, many are hashed (`StringTable`): the same answers.
    @Test func manyConfiguredNamesAreLookedUpAsAFewAre() {
        let names = (1...12).map { "api\($0).local" }
        let p = policy(names)
        for name in names {
            #expect(p.acceptsHost(name) && p.acceptsHost(name + ":8080") && p.acceptsHost(name.uppercased() + ":8080"), "\(name)")
        }
        #expect(p.acceptsHost("localhost:8080"))
        for host in ["api13.local", "api1.local:9999", "localhost", "api1.locall"] {
            #expect(!p.acceptsHost(host), "\(host)")
        }
    }

    @Test func aWildcardAcceptsTheNamesUnderItsDomainWithTheListenPort() {
        let p = policy(["*.example.com"])
        for host in ["api.example.com", "API.example.com:8080", "a.b.example.com"] {
            #expect(p.acceptsHost(host), "\(host)")
        }
        for host in ["example.com", "example.com:8080", "api.example.com:9999", "api.example.com.evil:8080", "evilexample.com"] {
            #expect(!p.acceptsHost(host), "\(host)")
        }
        let withPort = policy(["*.example.com:443"])
        #expect(withPort.acceptsHost("api.example.com:443"))
        #expect(!withPort.acceptsHost("api.example.com"))
    }

    @Test func wildcardAndUnixSocketsAcceptAnyHost() {
        #expect(policy(["*"]).acceptsHost("anything:1"))
        #expect(policy(bound: .unix(path: "/tmp/x.sock")).acceptsHost("whatever"))
    }

    @Test func crossSiteDetection() {
        let host = "127.0.0.1:8080"
        #expect(CrossSiteCheck.isCrossSite(["Sec-Fetch-Site": "cross-site"], host: host, overTLS: false))
        #expect(CrossSiteCheck.isCrossSite(["Origin": "https://evil.example"], host: host, overTLS: false))
        #expect(CrossSiteCheck.isCrossSite(["Origin": "null"], host: host, overTLS: false))
        #expect(!CrossSiteCheck.isCrossSite(["Origin": "http://127.0.0.1:8080"], host: host, overTLS: false))
        #expect(!CrossSiteCheck.isCrossSite(["Sec-Fetch-Site": "same-origin"], host: host, overTLS: false))
        #expect(!CrossSiteCheck.isCrossSite(["Sec-Fetch-Site": "none"], host: host, overTLS: false))
        #expect(!CrossSiteCheck.isCrossSite([:], host: host, overTLS: false))
    }

    @Test func overTLSTheSameOriginIsHTTPS() {
        let host = "localhost:8443"
        #expect(!CrossSiteCheck.isCrossSite(["Origin": "https://localhost:8443"], host: host, overTLS: true))
        #expect(CrossSiteCheck.isCrossSite(["Origin": "http://localhost:8443"], host: host, overTLS: true))
        #expect(CrossSiteCheck.isCrossSite(["Origin": "https://localhost:8443"], host: host, overTLS: false))
    }

    @Test func aTLSListenersCookiesAreSecure() throws {
        let tls = ListenerConfig(name: "lan", address: .tcp(host: "127.0.0.1", port: 8443), tls: ListenerTLSConfig(certificate: .localCA))
        #expect(try ListenerPolicy(config: tls, bound: .ipv4(host: "127.0.0.1", port: 8443)).clientsUseTLS)
        #expect(!policy().clientsUseTLS)
    }

    @Test func constantTimeComparison() {
        #expect(constantTimeEquals("secret", "secret"))
        #expect(!constantTimeEquals("secret", "secreT"))
        #expect(!constantTimeEquals("secret", "secret2"))
        #expect(!constantTimeEquals("", "x"))
    }
}
