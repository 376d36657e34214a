import Testing
import Latchkey

@Suite("Version")
struct LatchkeyVersionTests {
    /// MAJOR.MINOR.PATCH with an optional pre-release, as Semantic Versioning 2.0.0 §2 and
    /// §9 write it: numbers without leading zeros.
    @Test func isASemanticVersion() {
        let version = LatchkeyVersion.current
        let core = version.split(separator: "-", maxSplits: 1)[0]
        let numbers = core.split(separator: ".", omittingEmptySubsequences: false)
        #expect(numbers.count == 3, "\(version) is not MAJOR.MINOR.PATCH")
        for number in numbers {
            #expect(!number.isEmpty && number.allSatisfy(\.isASCII) && number.allSatisfy(\.isNumber), "\(version): '\(number)' is not a number")
            #expect(number == "0" || !number.hasPrefix("0"), "\(version): '\(number)' has a leading zero")
        }
        let hasSpace = version.contains { $0.isWhitespace }
        #expect(!hasSpace, "'\(version)' has a space")
    }
}
