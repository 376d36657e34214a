import LatchkeyUpstream
import Testing

/// The addresses a forward proxy refuses to reach for a client: loopback, link-local,
/// unspecified and cloud metadata, in IPv4, IPv6 and IPv4-mapped form.
struct DestinationGuardTests {
    static let mapped: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]

    @Test(arguments: [
        ([127, 0, 0, 1], "loopback"),
        ([127, 9, 8, 7], "loopback"),
        ([0, 0, 0, 0], "unspecified"),
        ([169, 254, 169, 254], "link-local"),
        ([169, 254, 1, 2], "link-local"),
        ([100, 100, 100, 200], "cloud metadata"),
        (Array(repeating: 0, count: 15) + [1], "loopback"),
        (Array(repeating: 0, count: 16), "unspecified"),
        ([0xFE, 0x80] + Array(repeating: 0, count: 13) + [1], "link-local"),
        ([0xFE, 0xBF] + Array(repeating: 0, count: 14), "link-local"),
        ([0xFD, 0x00, 0x0E, 0xC2] + Array(repeating: 0, count: 10) + [0x02, 0x54], "cloud metadata"),
        (mapped + [127, 0, 0, 1], "loopback"),
        (mapped + [169, 254, 169, 254], "link-local"),
    ] as [([UInt8], String)])
    func refused(_ address: [UInt8], kind: String) {
        #expect(DestinationGuard.refusal(address: address) == kind)
    }

    @Test(arguments: [
        [192, 0, 2, 2], [10, 0, 0, 1], [172, 16, 0, 1], [192, 168, 1, 1], [8, 8, 8, 8], [100, 100, 100, 201], [169, 253, 1, 1],
        [0x20, 0x01, 0x0D, 0xB8] + Array(repeating: 0, count: 11) + [1],
        [0xFD, 0x00] + Array(repeating: 0, count: 13) + [2],
        [0xFE, 0xC0] + Array(repeating: 0, count: 14),
        mapped + [192, 0, 2, 2],
    ] as [[UInt8]])
    func allowed(_ address: [UInt8]) {
        #expect(DestinationGuard.refusal(address: address) == nil)
    }
}
