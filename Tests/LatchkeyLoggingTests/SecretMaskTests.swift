import LatchkeyTestSupport
import Testing
@testable import LatchkeyLogging

@Suite struct SecretMaskTests {
    private func masked(_ line: String, _ mask: SecretMask) -> String {
        var bytes = Array(line.utf8)
        mask.mask(&bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func aSecretContainingAnotherIsMaskedWhole() {
        let mask = SecretMask(["tok", "tok-long", ""])
        #expect(mask.values == ["tok-long", "tok"])
        #expect(masked("a tok-long b tok", mask) == "a [REDACTED] b [REDACTED]")
    }

    /// Past `SecretMask.scanAbove` secrets, a line is scanned for the ones it holds: the same
    /// result as looking for each in turn, longest first, on lines built to overlap them.
    @Test(arguments: 0..<30 as Range<UInt64>)
    func manySecretsMaskAsEachInTurnWould(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let word = { (length: Int, random: inout SeededGenerator) in
            String((0..<length).map { _ in "abcd".randomElement(using: &random)! })
        }
        let secrets = (0..<Int.random(in: 9...40, using: &random)).map { _ in word(Int.random(in: 1...7, using: &random), &random) }
        let mask = SecretMask(secrets)
        for _ in 0..<100 {
            let line = word(Int.random(in: 0...60, using: &random), &random)
            var expected = Array(line.utf8)
            for secret in mask.values { LogRedaction.mask(Array(secret.utf8), in: &expected) }
            #expect(masked(line, mask) == String(decoding: expected, as: UTF8.self), "seed \(seed): \(line)")
        }
    }
}
