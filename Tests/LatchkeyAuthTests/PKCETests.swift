import Testing
@testable import LatchkeyAuth

@Suite struct PKCETests {
    /// RFC 7636 Appendix B: the octets, the verifier they encode, its S256 challenge.
    @Test func rfc7636AppendixB() throws {
        let octets: [UInt8] = [
            116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173,
            187, 186, 22, 212, 37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83,
            132, 141, 121,
        ]
        let pair = try PKCE(verifierBytes: octets)
        #expect(pair.verifier == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(pair.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(try PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == pair)
        #expect(PKCE.challengeMethod == "S256")
    }

    @Test func generatedPairsAreFreshAndConsistent() throws {
        let first = try PKCE.generate()
        let second = try PKCE.generate()
        #expect(first.verifier.utf8.count == 43)
        #expect(first.verifier != second.verifier)
        #expect(try PKCE(verifier: first.verifier).challenge == first.challenge)
    }

    @Test(arguments: [
        String(repeating: "a", count: 42),
        String(repeating: "a", count: 129),
        String(repeating: "a", count: 42) + "+",
        String(repeating: "a", count: 42) + "=",
        String(repeating: "a", count: 42) + "é",
    ])
    func rejectsVerifiersOutsideRFC7636(_ verifier: String) throws {
        let error = try #require(throws: CryptoError.self) { try PKCE(verifier: verifier) }
        #expect(error.code == .invalidCodeVerifier)
    }

    @Test func acceptsTheWholeUnreservedSetAtBothLengthLimits() throws {
        let unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
        #expect(throws: Never.self) { try PKCE(verifier: String(unreserved.prefix(43))) }
        #expect(throws: Never.self) { try PKCE(verifier: String((unreserved + unreserved).prefix(128))) }
    }
}
