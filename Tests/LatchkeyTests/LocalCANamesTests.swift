import LatchkeyConfig
import LatchkeyServer
import Testing
@testable import Latchkey

@Suite struct LocalCANamesTests {
    private func names(_ allowed: [String], bound: SocketAddress) -> [String] {
        ListenerConfig(name: "lan", address: .tcp(host: "0.0.0.0", port: 8443), allowedHosts: allowed,
                       tls: ListenerTLSConfig(certificate: .localCA)).localCANames(bound: bound)
    }

    @Test func theNamesTheHostCheckAccepts() {
        #expect(names(["laptop.local", "api.local:8443", "[fd00::1]:8443", "*", "LOCALHOST"], bound: .ipv4(host: "0.0.0.0", port: 8443))
            == ["localhost", "127.0.0.1", "::1", "laptop.local", "api.local", "fd00::1"])
    }

    @Test func aSpecificBoundAddressIsCovered() {
        #expect(names([], bound: .ipv4(host: "192.168.1.20", port: 8443)) == ["localhost", "127.0.0.1", "::1", "192.168.1.20"])
        #expect(names([], bound: .ipv6(host: "::", port: 8443)) == ["localhost", "127.0.0.1", "::1"])
        #expect(names([], bound: .ipv4(host: "127.0.0.1", port: 8443)) == ["localhost", "127.0.0.1", "::1"])
    }
}
